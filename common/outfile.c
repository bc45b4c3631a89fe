#include "common/outfile.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUTFILE_MAX_PENDING 16
#define OUTFILE_PATH_BYTES 4096

/* Temporary names live in static slots so that a signal handler can unlink
 * them without allocating; a slot is in use while its first byte is set. */
static char pending[OUTFILE_MAX_PENDING][OUTFILE_PATH_BYTES];

struct outfile {
    FILE *f;
    int slot;
    char *path;
    const char *what;
};

static void release(outfile *o)
{
    pending[o->slot][0] = '\0';
    free(o->path);
    free(o);
}

int outfile_open(const char *path, const char *what, outfile **out, FILE **f, tt_error *err)
{
    int slot = 0;
    while (slot < OUTFILE_MAX_PENDING && pending[slot][0])
        slot++;
    if (slot == OUTFILE_MAX_PENDING)
        return tt_error_set(err, TT_EINTERNAL, "%s: more than %d outputs open at once", path,
                            OUTFILE_MAX_PENDING);
    char *copy = strdup(path);
    outfile *o = calloc(1, sizeof *o);
    if (!copy || !o) {
        free(copy);
        free(o);
        return tt_error_set(err, TT_EINTERNAL, "%s: out of memory", path);
    }
    char *base = strrchr(copy, '/');
    int dir_len = base ? (int)(base - copy + 1) : 0;
    if (snprintf(pending[slot], OUTFILE_PATH_BYTES, "%.*s.%s.XXXXXX", dir_len, copy,
                 base ? base + 1 : copy) >= OUTFILE_PATH_BYTES) {
        pending[slot][0] = '\0';
        free(copy);
        free(o);
        return tt_error_set(err, TT_EINPUT, "%s: path too long", path);
    }
    int fd = mkstemp(pending[slot]);
    if (fd < 0) {
        int e = errno;
        pending[slot][0] = '\0';
        free(copy);
        free(o);
        return tt_error_set(err, TT_EINPUT, "%s: cannot write %s: %s; give a writable path", path, what,
                            strerror(e));
    }
    /* mkstemp creates 0600; an output gets the usual 0666 less the umask */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(pending[slot]);
        pending[slot][0] = '\0';
        free(copy);
        free(o);
        return tt_error_set(err, TT_EINTERNAL, "%s: cannot write %s: %s", path, what, strerror(e));
    }
    o->slot = slot;
    o->path = copy;
    o->what = what;
    *out = o;
    *f = o->f;
    return TT_OK;
}

int outfile_commit(outfile *o, tt_error *err)
{
    int e = 0;
    if (ferror(o->f))
        e = errno ? errno : EIO;
    if (fflush(o->f) != 0 && !e)
        e = errno;
    if (fsync(fileno(o->f)) != 0 && !e)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    if (!e && rename(pending[o->slot], o->path) != 0)
        e = errno;
    if (e) {
        unlink(pending[o->slot]);
        tt_error_set(err, TT_EINPUT, "%s: cannot write %s: %s (the previous file, if any, is unchanged)",
                     o->path, o->what, strerror(e));
    }
    release(o);
    return e ? TT_EINPUT : TT_OK;
}

void outfile_discard(outfile *o)
{
    if (!o)
        return;
    fclose(o->f);
    unlink(pending[o->slot]);
    release(o);
}

void outfile_remove_pending(void)
{
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++)
        if (pending[i][0])
            unlink(pending[i]);
}

/* A spelling-independent name for a path that may not exist yet: the real
 * path of its directory and its last component. */
static int canonical(const char *path, char *out, size_t cap)
{
    char buf[PATH_MAX];
    if (realpath(path, buf))
        return snprintf(out, cap, "%s", buf) < (int)cap ? 0 : -1;
    char *d = strdup(path), *b = strdup(path);
    int rc = -1;
    if (d && b && realpath(dirname(d), buf))
        rc = snprintf(out, cap, "%s/%s", buf, basename(b)) < (int)cap ? 0 : -1;
    free(d);
    free(b);
    return rc;
}

int outfile_check_distinct(const char *const *outputs, size_t n_outputs, const char *const *inputs,
                           const char *const *input_what, size_t n_inputs, tt_error *err)
{
    for (size_t i = 0; i < n_outputs; i++) {
        if (!outputs[i])
            continue;
        struct stat so;
        if (stat(outputs[i], &so) == 0) {
            for (size_t k = 0; k < n_inputs; k++) {
                struct stat si;
                if (inputs[k] && stat(inputs[k], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
                    return tt_error_set(err, TT_EINPUT,
                                        "%s: this output is %s of the run (%s); writing it would destroy "
                                        "it: choose another output path",
                                        outputs[i], input_what[k], inputs[k]);
            }
        }
        char ci[PATH_MAX + 256], cj[PATH_MAX + 256];
        if (canonical(outputs[i], ci, sizeof ci) != 0)
            continue; /* its directory does not exist: the write will say so */
        for (size_t j = i + 1; j < n_outputs; j++)
            if (outputs[j] && canonical(outputs[j], cj, sizeof cj) == 0 && strcmp(ci, cj) == 0)
                return tt_error_set(err, TT_EINPUT,
                                    "%s and %s name the same file: give each output its own path", outputs[i],
                                    outputs[j]);
    }
    return TT_OK;
}
