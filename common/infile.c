#include "common/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define INFILE_MAX_FILES 32768
#define INFILE_PATH_BYTES 512

/* The record lives in memory shared with the forked workers, so the files
 * they read count for the run: a slot is claimed with an atomic add and
 * published by its `ready` flag. */
typedef struct slot {
    int ready, phase, changed;
    dev_t dev;
    ino_t ino;
    long long bytes;
    uint64_t fnv;
    char path[INFILE_PATH_BYTES];
} slot;

typedef struct record {
    int n, phase, phased;
    slot s[INFILE_MAX_FILES];
} record;

static record *rec;

static int record_open(tt_error *err)
{
    if (rec)
        return TT_OK;
    void *m = mmap(NULL, sizeof *rec, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED)
        return tt_error_set(err, TT_EINTERNAL, "cannot map the record of input files: %s; free some memory",
                            strerror(errno));
    rec = m;
    return TT_OK;
}

int infile_share(tt_error *err)
{
    return record_open(err);
}

void infile_next_phase(void)
{
    if (rec && !__atomic_exchange_n(&rec->phased, 1, __ATOMIC_ACQ_REL))
        __atomic_store_n(&rec->phase, 1, __ATOMIC_RELEASE);
}

uint64_t infile_fnv(uint64_t h, const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}

/* Remembers a file once per identity, the last read first (a platform's
 * device library is read at every load); one read again with other bytes
 * keeps its newest checksum and is marked changed. Checksum 0 (read by
 * descriptor) never replaces one. */
static int remember(const char *path, const struct stat *st, uint64_t fnv, tt_error *err)
{
    if (record_open(err))
        return err->code;
    int n = __atomic_load_n(&rec->n, __ATOMIC_ACQUIRE);
    if (n > INFILE_MAX_FILES)
        n = INFILE_MAX_FILES;
    for (int i = n; i-- > 0;) {
        slot *s = &rec->s[i];
        if (!__atomic_load_n(&s->ready, __ATOMIC_ACQUIRE) || s->dev != st->st_dev || s->ino != st->st_ino)
            continue;
        if (fnv && (s->fnv != fnv || s->bytes != (long long)st->st_size)) {
            if (s->fnv)
                __atomic_store_n(&s->changed, 1, __ATOMIC_RELEASE);
            __atomic_store_n(&s->bytes, (long long)st->st_size, __ATOMIC_RELEASE);
            __atomic_store_n(&s->fnv, fnv, __ATOMIC_RELEASE);
        }
        return TT_OK;
    }
    int i = __atomic_fetch_add(&rec->n, 1, __ATOMIC_ACQ_REL);
    if (i >= INFILE_MAX_FILES)
        return tt_error_set(err, TT_EINPUT, "%s: more than %d different input files in one run; split the run",
                            path, INFILE_MAX_FILES);
    slot *s = &rec->s[i];
    char real[PATH_MAX];
    snprintf(s->path, sizeof s->path, "%s", realpath(path, real) ? real : path);
    s->dev = st->st_dev;
    s->ino = st->st_ino;
    s->bytes = (long long)st->st_size;
    s->fnv = fnv;
    s->phase = __atomic_load_n(&rec->phase, __ATOMIC_ACQUIRE);
    __atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
    return TT_OK;
}

static const char *kind_of(mode_t m)
{
    return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO (named pipe)" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}

/* Opens without blocking on a FIFO and checks the kind and size. */
static int open_checked(const char *path, size_t max_bytes, struct stat *st, tt_error *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return tt_error_set(err, TT_EINPUT, "%s: cannot open: %s", path, strerror(errno)), -1;
    if (fstat(fd, st) != 0) {
        int e = errno;
        close(fd);
        return tt_error_set(err, TT_EINPUT, "%s: cannot read: %s", path, strerror(e)), -1;
    }
    if (!S_ISREG(st->st_mode)) {
        close(fd);
        if (S_ISDIR(st->st_mode)) /* the wording readers and tests know */
            return tt_error_set(err, TT_EINPUT, "%s: cannot read: Is a directory; expected a file", path), -1;
        return tt_error_set(err, TT_EINPUT, "%s: not a regular file (%s); give a file", path,
                            kind_of(st->st_mode)), -1;
    }
    if ((unsigned long long)st->st_size > max_bytes) {
        close(fd);
        return tt_error_set(err, TT_EINPUT, "%s: file too large (%lld bytes; an input of this kind may have at "
                            "most %zu)", path, (long long)st->st_size, max_bytes), -1;
    }
    return fd;
}

int infile_open(const char *path, size_t max_bytes, tt_error *err)
{
    struct stat st;
    int fd = open_checked(path, max_bytes, &st, err);
    if (fd >= 0 && remember(path, &st, 0, err) != TT_OK) {
        close(fd);
        return -1;
    }
    return fd;
}

int infile_read(const char *path, size_t max_bytes, char **text, size_t *len, tt_error *err)
{
    *text = NULL;
    *len = 0;
    struct stat st;
    int fd = open_checked(path, max_bytes, &st, err);
    if (fd < 0)
        return err->code;
    size_t want = (size_t)st.st_size;
    char *buf = malloc(want + 1);
    if (!buf) {
        close(fd);
        return tt_error_set(err, TT_EINPUT, "%s: out of memory reading its %zu bytes; free some memory", path, want);
    }
    /* a file that grows while read is read to its size at open: one version of it */
    size_t have = 0;
    while (have < want) {
        ssize_t r = read(fd, buf + have, want - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(buf);
            return tt_error_set(err, TT_EINPUT, "%s: cannot read: %s", path, strerror(e));
        }
        if (r == 0)
            break;
        have += (size_t)r;
    }
    close(fd);
    buf[have] = '\0';
    st.st_size = (off_t)have;
    int rc = remember(path, &st, infile_fnv(INFILE_FNV_START, buf, have), err);
    if (rc) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = have;
    return TT_OK;
}

size_t infile_count(void)
{
    if (!rec)
        return 0;
    int n = __atomic_load_n(&rec->n, __ATOMIC_ACQUIRE);
    return n > INFILE_MAX_FILES ? INFILE_MAX_FILES : (size_t)n;
}

int infile_get(size_t i, infile_entry *out)
{
    if (i >= infile_count() || !__atomic_load_n(&rec->s[i].ready, __ATOMIC_ACQUIRE))
        return 0;
    const slot *s = &rec->s[i];
    *out = (infile_entry){s->dev, s->ino, __atomic_load_n(&s->bytes, __ATOMIC_ACQUIRE),
                          __atomic_load_n(&s->fnv, __ATOMIC_ACQUIRE), s->phase,
                          __atomic_load_n(&s->changed, __ATOMIC_ACQUIRE), s->path};
    return 1;
}

int infile_was_read(dev_t dev, ino_t ino, const char **path)
{
    infile_entry e;
    for (size_t i = 0; i < infile_count(); i++)
        if (infile_get(i, &e) && e.dev == dev && e.ino == ino) {
            *path = e.path;
            return 1;
        }
    return 0;
}
