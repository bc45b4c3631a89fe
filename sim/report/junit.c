#include "sim/report/junit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/outfile.h"
#include "sim/report/xml.h"

/* A property: name, then the number as %.10g (no locale, no noise digits). */
static void property(FILE *f, const char *metric, const char *suffix, double v)
{
    fprintf(f, "        <property name=\"");
    xml_write_text(f, metric);
    fprintf(f, "%s\" value=\"%.10g\"/>\n", suffix, v);
}

/* What each bound measured, for a dashboard: properties (metric, metric.min,
 * metric.max) and the same as text in system-out. */
static void bounds(FILE *f, const junit_case *c)
{
    if (c->n_bounds == 0)
        return;
    fprintf(f, "      <properties>\n");
    for (size_t i = 0; i < c->n_bounds; i++) {
        const junit_bound *b = &c->bounds[i];
        property(f, b->metric, "", b->value);
        if (isfinite(b->min))
            property(f, b->metric, ".min", b->min);
        if (isfinite(b->max))
            property(f, b->metric, ".max", b->max);
    }
    fprintf(f, "      </properties>\n");
}

static void system_out(FILE *f, const junit_case *c)
{
    if (c->n_bounds == 0)
        return;
    fprintf(f, "      <system-out>");
    for (size_t i = 0; i < c->n_bounds; i++) {
        const junit_bound *b = &c->bounds[i];
        xml_write_text(f, b->metric);
        fprintf(f, " = %.10g (", b->value);
        if (isfinite(b->min))
            fprintf(f, "min %.10g%s", b->min, isfinite(b->max) ? ", " : "");
        if (isfinite(b->max))
            fprintf(f, "max %.10g", b->max);
        fprintf(f, "): %s\n", b->passed ? "pass" : "FAIL");
    }
    fprintf(f, "</system-out>\n");
}

int junit_write(const char *path, const char *suite, const junit_case *cases, size_t n, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the JUnit file", &o, &f, err);
    if (rc)
        return rc;
    size_t failures = 0, errors = 0;
    double time_s = 0;
    for (size_t i = 0; i < n; i++) {
        failures += !cases[i].passed && !cases[i].error;
        errors += cases[i].error;
        time_s += cases[i].time_s;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    fprintf(f, "  <testsuite name=\"");
    xml_write_text(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n", n, failures, errors, time_s);
    for (size_t i = 0; i < n; i++) {
        const junit_case *c = &cases[i];
        fprintf(f, "    <testcase name=\"");
        xml_write_text(f, c->name);
        fprintf(f, "\" classname=\"");
        xml_write_text(f, c->file);
        fprintf(f, "\" time=\"%.3f\">\n", c->time_s);
        bounds(f, c);
        if (!c->passed) {
            fprintf(f, "      <%s message=\"", c->error ? "error" : "failure");
            xml_write_text(f, c->message ? c->message : "");
            fprintf(f, "\"/>\n");
        }
        system_out(f, c);
        fprintf(f, "    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return outfile_commit(o, err);
}
