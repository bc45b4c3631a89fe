/* junit.h: JUnit XML for CI from 'ttasim check' (one testcase per scenario). */
#ifndef TT_JUNIT_H
#define TT_JUNIT_H

#include <stddef.h>

#include "common/error.h"

typedef struct junit_case {
    const char *name;
    const char *file;
    int passed;
    int error;           /* could not run (input error) rather than a failed bound */
    const char *message; /* why it failed */
} junit_case;

int junit_write(const char *path, const char *suite, const junit_case *cases, size_t n, tt_error *err);

#endif
