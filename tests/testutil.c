#include "tests/testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"

const char *tu_write_temp(const char *text, char *path_buf, size_t path_bytes)
{
    snprintf(path_buf, path_bytes, "/tmp/ttasim-test-XXXXXX.json");
    int fd = mkstemps(path_buf, 5);
    ck_assert_int_ge(fd, 0);
    size_t n = strlen(text);
    ck_assert_int_eq((long)write(fd, text, n), (long)n);
    close(fd);
    return path_buf;
}

int tu_run_ttasim(const char *args, char *out, size_t out_bytes)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s/ttasim' %s 2>&1", TTASIM_BUILDDIR, args);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    size_t n = fread(out, 1, out_bytes - 1, p);
    out[n] = '\0';
    while (fread(cmd, 1, sizeof cmd, p) > 0)
        ; /* drain whatever did not fit */
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

json_t *tu_run_ttasim_json(const char *args, int expect_rc, char *out, size_t out_bytes)
{
    ck_assert_int_eq(tu_run_ttasim(args, out, out_bytes), expect_rc);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "not JSON: %s", out);
    return doc;
}

int tu_run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed;
}
