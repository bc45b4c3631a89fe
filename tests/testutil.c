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

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

void tu_user_platform_write(tu_user_platform *u, const char *xml_text, const char *hosts_text,
                            const char *accelerator)
{
    snprintf(u->dir, sizeof u->dir, "/tmp/ttasim-userxml-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(u->dir));
    snprintf(u->xml, sizeof u->xml, "%s/mine.xml", u->dir);
    snprintf(u->hosts, sizeof u->hosts, "%s/mine.hosts", u->dir);
    snprintf(u->json, sizeof u->json, "%s/mine.json", u->dir);
    if (xml_text)
        write_text(u->xml, xml_text);
    write_text(u->hosts, hosts_text);
    char json[1024];
    snprintf(json, sizeof json,
             "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"mine\", \"sources\": [], \"assumptions\": [],\n"
             " \"simgrid\": {\"xml\": \"mine.xml\", \"rank_hosts\": \"mine.hosts\", \"accelerator\": \"%s\",\n"
             "   \"ranks_per_node\": 1, \"path_estimate\": {\"bandwidth_Bps\": 1e10, \"latency_s\": 1e-6, \"hops\": 1}}}\n",
             accelerator);
    write_text(u->json, json);
}

void tu_user_platform_remove(const tu_user_platform *u)
{
    unlink(u->xml);
    unlink(u->hosts);
    unlink(u->json);
    rmdir(u->dir);
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
