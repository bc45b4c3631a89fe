#include "common/error.h"

#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int tt_error_set(tt_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->code = code;
    return code;
}

int tt_error_prefix(tt_error *err, const char *fmt, ...)
{
    if (!err)
        return TT_EINTERNAL;
    char prefix[512], old[TT_ERROR_MSG_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", prefix, old);
    return err->code;
}

#ifdef TT_SANITIZERS
/* --enable-sanitizers: a sanitizer report exits TT_SANITIZER_EXIT, not the
 * sanitizers' default 1, which means "an expectation failed" here. This file
 * is linked into every program, so the runtimes find these definitions. */
#define TT_STR2(x) #x
#define TT_STR(x) TT_STR2(x)
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
    return "exitcode=" TT_STR(TT_SANITIZER_EXIT);
}
const char *__ubsan_default_options(void)
{
    return "exitcode=" TT_STR(TT_SANITIZER_EXIT) ":print_stacktrace=1";
}
#endif
