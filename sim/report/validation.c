#include "sim/report/validation.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/datapath.h"
#include "common/jsonx.h"
#include "common/stats.h"

static int read_row(const jx_obj *root, size_t i, validation_row *row)
{
    static const char *const keys[] = {"scenario", "model", "accelerator", "role", "step_ratio", "time_ratio", NULL};
    static const char *const roles[] = {"validation", "calibration", NULL};
    jx_obj o;
    const char *scenario, *model, *accelerator;
    int rc;
    if ((rc = jx_elem(root, "rows", i, &o)) || (rc = jx_check_keys(&o, keys)) ||
        (rc = jx_string(&o, "scenario", 1, &scenario)) || (rc = jx_string(&o, "model", 1, &model)) ||
        (rc = jx_string(&o, "accelerator", 1, &accelerator)) ||
        (rc = jx_enum(&o, "role", 1, roles, &row->calibration)) ||
        (rc = jx_number(&o, "step_ratio", 0, 0, 1e6, &row->step_ratio)) ||
        (rc = jx_number(&o, "time_ratio", 0, 0, 1e6, &row->time_ratio)))
        return rc;
    snprintf(row->scenario, sizeof row->scenario, "%s", scenario);
    snprintf(row->model, sizeof row->model, "%s", model);
    snprintf(row->accelerator, sizeof row->accelerator, "%s", accelerator);
    return TT_OK;
}

int validation_load(validation_set *v, tt_error *err)
{
    static const char *const keys[] = {"format", "generated_by", "rows", NULL};
    static const char *const formats[] = {"ttasim-validation", NULL};
    int format;
    memset(v, 0, sizeof *v);
    if (datapath_find(VALIDATION_FILE, v->path, sizeof v->path) != 0)
        return tt_error_set(err, TT_EINPUT, "%s: not found; reinstall ttasim or run make validation-table",
                            v->path);
    json_t *doc;
    jx_obj root;
    size_t n = 0;
    int rc = jx_load_file(v->path, &doc, err);
    if (rc)
        return rc;
    if ((rc = jx_root(&root, v->path, doc, err)) || (rc = jx_check_keys(&root, keys)) ||
        (rc = jx_enum(&root, "format", 1, formats, &format)) || (rc = jx_array(&root, "rows", 1, &n))) {
        json_decref(doc);
        return rc;
    }
    v->rows = calloc(n ? n : 1, sizeof *v->rows);
    if (!v->rows) {
        json_decref(doc);
        return tt_error_set(err, TT_EINPUT, "%s: out of memory for %zu rows; free some memory", v->path, n);
    }
    for (size_t i = 0; i < n && rc == TT_OK; i++)
        rc = read_row(&root, i, &v->rows[i]);
    json_decref(doc);
    if (rc) {
        validation_free(v);
        return rc;
    }
    v->n = n;
    return TT_OK;
}

void validation_free(validation_set *v)
{
    free(v->rows);
    v->rows = NULL;
    v->n = 0;
}

int validation_matches(const validation_row *row, const char *model, const char *accelerator)
{
    return (!model || strcmp(row->model, model) == 0) && (!accelerator || strcmp(row->accelerator, accelerator) == 0);
}

void validation_summarise(const validation_set *v, const char *model, const char *accelerator, int calibration,
                          validation_summary *out)
{
    memset(out, 0, sizeof *out);
    double *dev = calloc(v->n ? v->n : 1, sizeof *dev);
    if (!dev)
        return;
    for (size_t i = 0; i < v->n; i++) {
        const validation_row *r = &v->rows[i];
        if (r->calibration == calibration && r->step_ratio > 0 && validation_matches(r, model, accelerator))
            dev[out->n++] = fabs(r->step_ratio - 1);
    }
    if (out->n) {
        out->median = stats_median(dev, out->n);
        out->worst = dev[out->n - 1];
    }
    free(dev);
}
