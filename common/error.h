/* error.h: errors returned up the stack as values, printed once at the top.
 * Codes follow the command-line contract: 0 ok, 1 an expectation failed, 2 usage or input. */
#ifndef TT_ERROR_H
#define TT_ERROR_H

#include <stddef.h>

enum { TT_OK = 0, TT_EFAIL = 1, TT_EINPUT = 2, TT_EINTERNAL = 3 };

/* Exit status of a sanitizer report in a --enable-sanitizers build (HACKING.md). */
#define TT_SANITIZER_EXIT 86

#define TT_ERROR_MSG_BYTES 2048

typedef struct tt_error {
    int code;
    char msg[TT_ERROR_MSG_BYTES];
} tt_error;

/* Sets code and message (printf-style) and returns code, so callers can
 * write `return tt_error_set(err, TT_EINPUT, "...")`. err may be NULL. */
int tt_error_set(tt_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prefixes the existing message with more context ("file.json: " + msg). */
int tt_error_prefix(tt_error *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif
