#include "sim/report/junit.h"

#include <stdio.h>
#include <string.h>

#include "common/outfile.h"
#include "sim/report/xml.h"

int junit_write(const char *path, const char *suite, const junit_case *cases, size_t n, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the JUnit file", &o, &f, err);
    if (rc)
        return rc;
    size_t failures = 0, errors = 0;
    for (size_t i = 0; i < n; i++) {
        failures += !cases[i].passed && !cases[i].error;
        errors += cases[i].error;
    }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n");
    fprintf(f, "  <testsuite name=\"");
    xml_write_text(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\">\n", n, failures, errors);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "    <testcase name=\"");
        xml_write_text(f, cases[i].name);
        fprintf(f, "\" classname=\"");
        xml_write_text(f, cases[i].file);
        if (cases[i].passed) {
            fprintf(f, "\"/>\n");
            continue;
        }
        fprintf(f, "\">\n      <%s message=\"", cases[i].error ? "error" : "failure");
        xml_write_text(f, cases[i].message ? cases[i].message : "");
        fprintf(f, "\"/>\n    </testcase>\n");
    }
    fprintf(f, "  </testsuite>\n</testsuites>\n");
    return outfile_commit(o, err);
}
