#include "common/scratch.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int scratch_open(const char *what, tt_error *err)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/ttasim-scratch-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        return tt_error_set(err, TT_EINTERNAL, "cannot create a temporary %s in %s: %s; set TMPDIR to a "
                            "writable directory", what, dir, strerror(errno)), -1;
    unlink(path);
    return fd;
}
