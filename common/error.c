#include "common/error.h"

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
