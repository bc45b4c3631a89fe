#include "sim/cli/db_cli.h"

#include <jansson.h>

#include "common/parallel.h"
#include "config.h"
#include "sim/cli/provenance.h"

int db_cli_append(const db_cli *d, const resultsdb_report *reports, size_t n, tt_error *err)
{
    if (!d->path || !parallel_is_writer())
        return TT_OK;
    char build[PROVENANCE_HEX_BYTES];
    provenance_hex(provenance_build(), build);
    /* what the run read before its points, then what its points read */
    json_t *inputs = provenance_inputs(0, err), *later = inputs ? provenance_inputs(1, err) : NULL;
    if (!later || json_array_extend(inputs, later)) {
        json_decref(inputs);
        json_decref(later);
        return err->code ? err->code : tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    json_decref(later);
    resultsdb_run run = {d->argv[0], d->argc, d->argv, d->sets, d->n_sets, PACKAGE_VERSION, build, inputs};
    int rc = resultsdb_append(d->path, &run, reports, n, err);
    json_decref(inputs);
    return rc;
}
