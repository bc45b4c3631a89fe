#include "sim/report/expect.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/report/report.h"

int expect_check(const scenario *sc, json_t *doc, int *failed, char *failures, size_t failures_bytes,
                 tt_error *err)
{
    *failed = 0;
    failures[0] = '\0';
    json_t *list = json_array();
    for (size_t i = 0; i < sc->n_expect; i++) {
        const scenario_expect *x = &sc->expect[i];
        double v;
        if (!report_lookup(doc, x->metric, &v)) {
            json_decref(list);
            return tt_error_set(err, TT_EINPUT, "%s: $.expect: \"%s\" is not a number in the run's JSON "
                                "document; name one such as \"step.time_s\", \"time_to_accuracy_s\" or "
                                "\"sweep[0].cost_usd\" (see 'ttasim run --json')", sc->path, x->metric);
        }
        int ok = v >= x->min && v <= x->max;
        json_t *e = json_pack("{s:s, s:f, s:b}", "metric", x->metric, "value", v, "passed", ok);
        if (isfinite(x->min))
            json_object_set_new(e, "min", json_real(x->min));
        if (isfinite(x->max))
            json_object_set_new(e, "max", json_real(x->max));
        json_array_append_new(list, e);
        if (!ok) {
            size_t used = strlen(failures);
            snprintf(failures + used, failures_bytes - used, "%s%s = %.6g %s %.6g", *failed ? "; " : "",
                     x->metric, v, v < x->min ? "< min" : "> max", v < x->min ? x->min : x->max);
            (*failed)++;
        }
    }
    json_object_set_new(doc, "expect", list);
    return TT_OK;
}
