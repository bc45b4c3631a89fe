#include "tests/fuzz/fuzz_input.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *fuzz_input_file(const char *dir_or_null, const char *name, const uint8_t *data,
                            size_t size)
{
    static char dir[256], path[512];
    if (!dir[0]) {
        /* one directory per process: parallel fuzzing jobs do not share files */
        snprintf(dir, sizeof dir, "%s", dir_or_null ? dir_or_null : "/tmp/ttasim-fuzz-XXXXXX");
        if (!dir_or_null && !mkdtemp(dir))
            abort();
    }
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *slash = strrchr(path, '/');
    if (slash > path + strlen(dir)) { /* name has a folder: create it */
        *slash = '\0';
        mkdir(path, 0700);
        *slash = '/';
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    return path;
}

char *fuzz_input_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}
