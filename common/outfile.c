#include "common/outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/infile.h"

#define OUTFILE_MAX_PENDING 16
#define OUTFILE_PATH_BYTES 4096
/* A temporary output is ".NAME.ttasim-XXXXXX" beside NAME, locked while its
 * writer lives: the next run writing NAME removes one a SIGKILL left. */
#define TEMP_TAG ".ttasim-"
#define TEMP_SUFFIX 6

/* Named temporary files live in static slots so that a signal handler can
 * unlink them without allocating; a slot is in use while its first byte is
 * set. */
static char pending[OUTFILE_MAX_PENDING][OUTFILE_PATH_BYTES];

struct outfile {
    FILE *f;
    char *path;       /* the target; for a regular file, its real path */
    const char *what;
    int plain;        /* a FIFO, a device, stdout or stderr: written in place */
    int update;       /* may replace a file the run read (outfile_open_update) */
    int slot;         /* pending[slot] names the temporary file; -1 while it has no name */
    int linked;       /* a new file: linked at its own name, nothing to rename */
};

static outfile *held[OUTFILE_MAX_PENDING];
static int n_held, batching, batch_failed;

static int claim_slot(void)
{
    for (int i = 0; i < OUTFILE_MAX_PENDING; i++)
        if (!pending[i][0])
            return i;
    return -1;
}

static void release(outfile *o)
{
    if (o->slot >= 0)
        pending[o->slot][0] = '\0';
    free(o->path);
    free(o);
}

static int write_error(const outfile *o, int e, tt_error *err)
{
    return tt_error_set(err, TT_EINPUT, "%s: cannot write %s: %s%s", o->path, o->what, strerror(e),
                        o->plain ? "" : " (the previous file, if any, is unchanged)");
}

/* The directory of path and its last component, in out (dir, then base). */
static void split_path(const char *path, char *dir, size_t dir_bytes, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        snprintf(dir, dir_bytes, ".");
    else
        snprintf(dir, dir_bytes, "%.*s", slash == path ? 1 : (int)(slash - path), path);
}

/* Temporary files of NAME that no living writer holds: left by a SIGKILL. */
static void remove_stale(const char *dir, const char *base)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    char prefix[NAME_MAX + 16];
    int plen = snprintf(prefix, sizeof prefix, ".%s" TEMP_TAG, base);
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0 || strlen(e->d_name) != (size_t)plen + TEMP_SUFFIX)
            continue;
        int fd = openat(dirfd(d), e->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat a, b;
        if (fd >= 0 && fstat(fd, &a) == 0 && S_ISREG(a.st_mode) && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
            fstatat(dirfd(d), e->d_name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino)
            unlinkat(dirfd(d), e->d_name, 0);
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
}

/* An unnamed file in dir (O_TMPFILE), or where the file system has none a
 * named one; locked either way. Returns the descriptor or -1 (errno). */
static int open_temp(const char *dir, const char *base, int *slot)
{
    *slot = -1;
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
    if (fd >= 0) {
        flock(fd, LOCK_EX);
        return fd;
    }
    if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
        return -1;
    if ((*slot = claim_slot()) < 0)
        return errno = EMFILE, -1;
    for (int tries = 0; tries < 8; tries++) {
        if (snprintf(pending[*slot], OUTFILE_PATH_BYTES, "%s/.%s" TEMP_TAG "XXXXXX", dir, base) >= OUTFILE_PATH_BYTES)
            return pending[*slot][0] = '\0', errno = ENAMETOOLONG, -1;
        fd = mkstemp(pending[*slot]);
        if (fd < 0)
            return pending[*slot][0] = '\0', -1;
        struct stat st;
        flock(fd, LOCK_EX);
        if (fstat(fd, &st) == 0 && st.st_nlink > 0) { /* not taken for a stale one meanwhile */
            mode_t mask = umask(0); /* mkstemp creates 0600; an output gets 0666 less the umask */
            umask(mask);
            (void)fchmod(fd, 0666 & ~mask);
            return fd;
        }
        close(fd);
    }
    pending[*slot][0] = '\0';
    return errno = EEXIST, -1;
}

/* Whether the target is a file this run read: then it must not be replaced. */
static int is_input(const char *path, tt_error *err)
{
    struct stat st;
    const char *read_as;
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && infile_was_read(st.st_dev, st.st_ino, &read_as))
        return tt_error_set(err, TT_EINPUT, "%s: this output is a file the run read (%s); writing it would destroy "
                            "it: choose another output path", path, read_as);
    return TT_OK;
}

/* A FIFO, a character device, or this process's own stdout or stderr
 * (/dev/stdout, a file it was redirected to): its descriptor, or -1. */
static int open_in_place(const char *path, const struct stat *st)
{
    for (int fd = 1; fd <= 2; fd++) {
        struct stat o;
        if (fstat(fd, &o) == 0 && o.st_dev == st->st_dev && o.st_ino == st->st_ino)
            return dup(fd);
    }
    if (S_ISFIFO(st->st_mode) || S_ISCHR(st->st_mode))
        return open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    return errno = EINVAL, -2;
}

static int open_output(const char *path, const char *what, int update, outfile **out, FILE **f, tt_error *err)
{
    outfile *o = calloc(1, sizeof *o);
    char real[PATH_MAX];
    if (!o)
        return tt_error_set(err, TT_EINPUT, "%s: out of memory; free some memory", path);
    o->what = what;
    o->update = update;
    o->slot = -1;
    struct stat st;
    int fd = -1, rc = TT_OK, open_errno = 0;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot write %s: it is a directory; give a file path", path, what);
        else if ((fd = open_in_place(path, &st)) >= 0 || fd == -1)
            o->plain = 1, open_errno = errno;
        else if (!S_ISREG(st.st_mode))
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot write %s: not a regular file, FIFO or character device; "
                              "give a file path", path, what);
        else if ((update || (rc = is_input(path, err)) == TT_OK) && !realpath(path, real))
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot write %s: %s", path, what, strerror(errno));
        o->path = strdup(o->plain || rc ? path : real);
    } else {
        struct stat ls;
        if (errno == ENOENT && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode))
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot write %s: a symbolic link to a missing file; give the "
                              "path of the file itself", path, what);
        o->path = strdup(path);
    }
    if (rc == TT_OK && !o->path)
        rc = tt_error_set(err, TT_EINPUT, "%s: out of memory; free some memory", path);
    if (rc == TT_OK && o->plain && fd < 0)
        rc = write_error(o, open_errno, err);
    if (rc == TT_OK && !o->plain) {
        char dir[OUTFILE_PATH_BYTES];
        const char *base;
        split_path(o->path, dir, sizeof dir, &base);
        remove_stale(dir, base);
        if ((fd = open_temp(dir, base, &o->slot)) < 0)
            rc = tt_error_set(err, TT_EINPUT, "%s: cannot write %s: %s; give a writable path", path, what,
                              strerror(errno));
    }
    if (rc == TT_OK && !(o->f = fdopen(fd, "w")))
        rc = write_error(o, errno, err);
    if (rc) {
        if (fd >= 0)
            close(fd);
        if (o->slot >= 0)
            unlink(pending[o->slot]);
        release(o);
        return rc;
    }
    *out = o;
    *f = o->f;
    return TT_OK;
}

int outfile_open(const char *path, const char *what, outfile **out, FILE **f, tt_error *err)
{
    return open_output(path, what, 0, out, f, err);
}

int outfile_open_update(const char *path, const char *what, outfile **out, FILE **f, tt_error *err)
{
    return open_output(path, what, 1, out, f, err);
}

/* Everything written, on disk: the error number, or 0. */
static int flush_all(outfile *o)
{
    int e = ferror(o->f) ? (errno ? errno : EIO) : 0;
    if (fflush(o->f) != 0 && !e)
        e = errno;
    if (!o->plain && fsync(fileno(o->f)) != 0 && !e)
        e = errno;
    return e;
}

/* The temporary file gets its name beside the target, if it has none yet. */
static int name_temp(outfile *o, tt_error *err)
{
    if (o->slot >= 0 || o->linked)
        return TT_OK;
    char dir[OUTFILE_PATH_BYTES], proc[64];
    const char *base;
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fileno(o->f));
    /* a new file goes straight to its name: no temporary name for a kill to leave */
    if (linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) == 0)
        return o->linked = 1, TT_OK;
    if (errno != EEXIST)
        return write_error(o, errno, err);
    if ((o->slot = claim_slot()) < 0)
        return write_error(o, EMFILE, err);
    split_path(o->path, dir, sizeof dir, &base);
    unsigned seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)(size_t)o;
    for (int tries = 0; tries < 64; tries++) {
        static const char ALNUM[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        char suffix[TEMP_SUFFIX + 1];
        for (int i = 0; i < TEMP_SUFFIX; i++)
            suffix[i] = ALNUM[((seed = seed * 1103515245u + 12345u) >> 16) % 62];
        suffix[TEMP_SUFFIX] = '\0';
        if (snprintf(pending[o->slot], OUTFILE_PATH_BYTES, "%s/.%s" TEMP_TAG "%s", dir, base, suffix) >=
            OUTFILE_PATH_BYTES)
            break;
        if (linkat(AT_FDCWD, proc, AT_FDCWD, pending[o->slot], AT_SYMLINK_FOLLOW) == 0)
            return TT_OK;
        if (errno != EEXIST)
            break;
    }
    int e = errno;
    pending[o->slot][0] = '\0';
    o->slot = -1;
    return write_error(o, e, err);
}

static void drop(outfile *o)
{
    fclose(o->f);
    if (o->slot >= 0)
        unlink(pending[o->slot]);
    release(o);
}

/* Named, checked against the run's inputs, renamed over the target. */
static int replace(outfile *o, tt_error *err)
{
    if (o->linked)
        return TT_OK;
    int rc = o->update ? TT_OK : is_input(o->path, err);
    if (rc == TT_OK && rename(pending[o->slot], o->path) != 0)
        rc = write_error(o, errno, err);
    if (rc == TT_OK) { /* renamed while locked: no cleaner can take it */
        pending[o->slot][0] = '\0';
        o->slot = -1;
    }
    return rc;
}

int outfile_commit(outfile *o, tt_error *err)
{
    int e = flush_all(o);
    if (o->plain) {
        if (fclose(o->f) != 0 && !e)
            e = errno;
        int rc = e ? write_error(o, e, err) : TT_OK;
        release(o);
        batch_failed |= rc != TT_OK;
        return rc;
    }
    int rc = e ? write_error(o, e, err) : TT_OK;
    if (rc == TT_OK && batching && n_held < OUTFILE_MAX_PENDING) {
        held[n_held++] = o;
        return TT_OK;
    }
    if (rc == TT_OK && (rc = name_temp(o, err)) == TT_OK)
        rc = replace(o, err);
    batch_failed |= rc != TT_OK;
    drop(o);
    return rc;
}

void outfile_discard(outfile *o)
{
    if (o)
        drop(o);
}

int outfile_probe(const char *path, const char *what, tt_error *err)
{
    struct stat st;
    if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
        return TT_OK; /* opening it now would block on a FIFO or write to a device */
    outfile *o;
    FILE *f;
    int rc = open_output(path, what, 0, &o, &f, err);
    if (rc == TT_OK)
        drop(o);
    return rc;
}

void outfile_batch_begin(void)
{
    batching = 1;
    batch_failed = 0;
    n_held = 0;
}

int outfile_batch_end(int commit, tt_error *err)
{
    int rc = commit && !batch_failed ? TT_OK : TT_EINPUT;
    /* every one checked, then named, before any replaces its target */
    for (int i = 0; rc == TT_OK && i < n_held; i++)
        rc = held[i]->update ? TT_OK : is_input(held[i]->path, err);
    for (int i = 0; rc == TT_OK && i < n_held; i++)
        rc = name_temp(held[i], err);
    for (int i = 0; rc == TT_OK && i < n_held; i++)
        rc = replace(held[i], err);
    for (int i = 0; i < n_held; i++) {
        if (rc != TT_OK && held[i]->linked) /* a new file of a batch that failed: not there before */
            unlink(held[i]->path);
        drop(held[i]);
    }
    batching = n_held = 0;
    return commit && !batch_failed ? rc : TT_OK;
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
            if (is_input(outputs[i], err))
                return err->code;
        }
        char ci[PATH_MAX + 256], cj[PATH_MAX + 256];
        for (size_t j = i + 1; canonical(outputs[i], ci, sizeof ci) == 0 && j < n_outputs; j++)
            if (outputs[j] && canonical(outputs[j], cj, sizeof cj) == 0 && strcmp(ci, cj) == 0)
                return tt_error_set(err, TT_EINPUT,
                                    "%s and %s name the same file: give each output its own path", outputs[i],
                                    outputs[j]);
        if (outfile_probe(outputs[i], "this output", err)) /* a missing directory said now, not after the run */
            return err->code;
    }
    return TT_OK;
}
