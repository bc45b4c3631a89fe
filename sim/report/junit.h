/* junit.h: JUnit XML for CI from 'ttasim check' (one testcase per scenario,
 * its wall time and what each bound of its "expect" measured). */
#ifndef TT_JUNIT_H
#define TT_JUNIT_H

#include <stddef.h>

#include "common/error.h"

/* One bound as it was checked: a property per value, a line of system-out. */
typedef struct junit_bound {
    const char *metric; /* the expect path ("step.time_s") */
    double value;       /* what the run wrote there */
    double min, max;    /* -inf / +inf when the bound has none */
    int passed;
} junit_bound;

typedef struct junit_case {
    const char *name;
    const char *file;
    int passed;
    int error;           /* could not run (input error) rather than a failed bound */
    const char *message; /* why it failed */
    double time_s;       /* wall seconds it took: the one attribute that differs between runs */
    const junit_bound *bounds;
    size_t n_bounds;
} junit_case;

int junit_write(const char *path, const char *suite, const junit_case *cases, size_t n, tt_error *err);

#endif
