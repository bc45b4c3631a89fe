/* testutil.h: helpers shared by the Check suites. */
#ifndef TT_TESTUTIL_H
#define TT_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* Writes text to a fresh temporary file; returns its path (static buffer per call slot). */
const char *tu_write_temp(const char *text, char *path_buf, size_t path_bytes);

/* Runs "ttasim ARGS" from the build tree; captures stdout+stderr into out
 * (truncated to out_bytes) and returns the exit status (or -1). */
int tu_run_ttasim(const char *args, char *out, size_t out_bytes);

/* A user's own SimGrid platform in a fresh directory: mine.xml (xml_text, or
 * left for the caller to write when NULL), mine.hosts (one host a line) and
 * mine.json naming both (accelerator, one rank per node). */
typedef struct tu_user_platform {
    char dir[64], xml[96], hosts[96], json[96];
} tu_user_platform;
void tu_user_platform_write(tu_user_platform *u, const char *xml_text, const char *hosts_text,
                            const char *accelerator);
void tu_user_platform_remove(const tu_user_platform *u);
struct json_t;
/* Runs "ttasim ARGS" (a --json command that prints nothing else), asserts exit
 * status expect_rc and returns the output parsed as one JSON document (the
 * caller decrefs); out receives the raw text. */
struct json_t *tu_run_ttasim_json(const char *args, int expect_rc, char *out, size_t out_bytes);

/* Runs a suite in its own SRunner; returns the number of failures. */
int tu_run_suite(Suite *s);

#endif
