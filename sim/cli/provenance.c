#include "sim/cli/provenance.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/infile.h"

void provenance_hex(uint64_t h, char out[PROVENANCE_HEX_BYTES])
{
    snprintf(out, PROVENANCE_HEX_BYTES, "%016" PRIx64, h);
}

uint64_t provenance_build(void)
{
    static uint64_t h;
    if (h)
        return h;
    uint64_t x = INFILE_FNV_START;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    char buf[1 << 16];
    ssize_t n;
    while (fd >= 0 && ((n = read(fd, buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)))
        if (n > 0)
            x = infile_fnv(x, buf, (size_t)n);
    if (fd >= 0)
        close(fd);
    return h = x;
}

static int by_path(const void *a, const void *b)
{
    const infile_entry *x = a, *y = b;
    int c = strcmp(x->path, y->path);
    return c ? c : x->fnv < y->fnv ? -1 : x->fnv > y->fnv;
}

json_t *provenance_inputs(int phase, tt_error *err)
{
    size_t n = infile_count(), m = 0;
    infile_entry *e = calloc(n + 1, sizeof *e);
    json_t *a = json_array();
    if (!e || !a) {
        free(e);
        json_decref(a);
        return tt_error_set(err, TT_EINPUT, "out of memory listing the run's inputs; free some memory"), NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (infile_get(i, &e[m]) && e[m].phase == phase && e[m].fnv) /* descriptors-only reads have no checksum */
            m++;
    for (size_t i = 0; i < m; i++)
        if (e[i].changed) { /* its points may have seen two versions of it */
            tt_error_set(err, TT_EINPUT, "%s changed while the run read it; run again on files that do not change",
                         e[i].path);
            free(e);
            json_decref(a);
            return NULL;
        }
    qsort(e, m, sizeof *e, by_path);
    for (size_t i = 0; i < m; i++) {
        char h[PROVENANCE_HEX_BYTES];
        provenance_hex(e[i].fnv, h);
        json_array_append_new(a, json_pack("{s:s, s:I, s:s}", "path", e[i].path, "bytes", (json_int_t)e[i].bytes,
                                           "fnv1a64", h));
    }
    free(e);
    return a;
}
