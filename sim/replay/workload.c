#include "sim/replay/workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonx.h"
#include "trainer/trace.h"

static const char *const PHASES[] = {"forward", "backward", NULL};

/* N of "layer.N.", "layers.N." or "h.N." in a layer's name (the trainer's
 * and Hugging Face's block names); -1 when there is none. */
static int block_of_name(const char *name)
{
    static const char *const KEYS[] = {"layer.", "layers.", "h."};
    for (const char *p = name; *p; p++)
        for (int k = 0; k < 3; k++) {
            size_t n = strlen(KEYS[k]);
            if ((p == name || p[-1] == '.') && !strncmp(p, KEYS[k], n) && p[n] >= '0' && p[n] <= '9') {
                char *end;
                long v = strtol(p + n, &end, 10);
                if (*end == '.' && v < 1 << 24)
                    return (int)v;
            }
        }
    return -1;
}

static int load_layer(const jx_obj *r, size_t i, workload_layer *l)
{
    jx_obj o;
    const char *name;
    int cls = 0, rc;
    long seq_len = 0, heads = 0, head_dim = 0, kv_heads = 0, block = -1, hidden = 0, experts = 0, top_k = 0;
    if ((rc = jx_elem(r, "layers", i, &o)) || (rc = jx_string(&o, "name", 1, &name)) ||
        (rc = jx_enum(&o, "class", 1, OPCLASS_NAMES, &cls)) ||
        (rc = jx_number(&o, "forward_flops", 1, 0, 1e18, &l->forward_flops)) ||
        (rc = jx_number(&o, "forward_bytes", 1, 0, 1e15, &l->forward_bytes)) ||
        (rc = jx_number(&o, "backward_flops", 1, 0, 1e18, &l->backward_flops)) ||
        (rc = jx_number(&o, "backward_bytes", 1, 0, 1e15, &l->backward_bytes)) ||
        (rc = jx_number(&o, "activation_bytes", 1, 0, 1e15, &l->activation_bytes)) ||
        (rc = jx_number(&o, "param_bytes", 1, 0, 1e15, &l->param_bytes)) ||
        (rc = jx_int(&o, "seq_len", 0, 1, 1 << 24, &seq_len)) || (rc = jx_int(&o, "heads", 0, 1, 1 << 16, &heads)) ||
        (rc = jx_int(&o, "head_dim", 0, 1, 1 << 16, &head_dim)) ||
        (rc = jx_int(&o, "kv_heads", 0, 1, 1 << 16, &kv_heads)) ||
        (rc = jx_number(&o, "kept_bytes", 0, 0, 1e15, &l->kept_bytes)) ||
        (rc = jx_number(&o, "kept_aux_bytes", 0, 0, 1e15, &l->kept_aux_bytes)) ||
        /* a part of kept_bytes, read just before it */
        (rc = jx_number(&o, "kept_gemm_bytes", 0, 0, l->kept_bytes, &l->kept_gemm_bytes)) ||
        (rc = jx_int(&o, "block", 0, 0, 1 << 24, &block)) || (rc = jx_int(&o, "hidden", 0, 1, 1 << 22, &hidden)) ||
        (rc = jx_int(&o, "experts", 0, 1, 1 << 16, &experts)) || (rc = jx_int(&o, "top_k", 0, 1, experts ? experts : 1, &top_k)))
        return rc;
    if (!jx_has(&o, "kept_bytes") || !jx_has(&o, "kept_aux_bytes"))
        l->kept_bytes = l->kept_aux_bytes = -1;
    l->seq_len = (int)seq_len;
    l->heads = (int)heads;
    l->head_dim = (int)head_dim;
    l->kv_heads = (int)(kv_heads ? kv_heads : heads);
    l->hidden = (int)(hidden ? hidden : heads * head_dim);
    l->experts = (int)experts;
    l->top_k = (int)(experts && !top_k ? 1 : top_k);
    l->block = jx_has(&o, "block") ? (int)block : block_of_name(name);
    l->name = strdup(name);
    l->cls = (op_class)cls;
    return TT_OK;
}

static int layer_index(const jx_obj *o, const char *key, size_t n_layers, int *out)
{
    long v = 0;
    int rc = jx_int(o, key, 1, 0, (long)n_layers - 1, &v);
    *out = (int)v;
    return rc;
}

/* The optional "embedding" block: the layer must be an embedding layer. */
static int load_embedding(const jx_obj *r, workload *t, tt_error *err)
{
    jx_obj e, o;
    size_t n;
    int rc;
    if (!jx_has(r, "embedding"))
        return TT_OK;
    if ((rc = jx_child(r, "embedding", 1, &e)) || (rc = layer_index(&e, "layer", t->n_layers, &t->emb.layer)) ||
        (rc = jx_number(&e, "index_zipf_s", 1, 0, 10, &t->emb.zipf_s)) || (rc = jx_array(&e, "tables", 1, &n)))
        return rc;
    if (t->layers[t->emb.layer].cls != OPCLASS_EMBEDDING)
        return tt_error_set(err, TT_EINPUT, "%s: %s.layer: layer %d (%s) is not an embedding layer",
                            t->path, e.path, t->emb.layer, t->layers[t->emb.layer].name);
    t->emb.tables = calloc(n ? n : 1, sizeof *t->emb.tables);
    for (size_t i = 0; i < n; i++, t->emb.n_tables++) {
        workload_table *tb = &t->emb.tables[i];
        if ((rc = jx_elem(&e, "tables", i, &o)) || (rc = jx_number(&o, "rows", 1, 1, 1e13, &tb->rows)) ||
            (rc = jx_number(&o, "dim", 1, 1, 1e6, &tb->dim)) ||
            (rc = jx_number(&o, "lookups", 1, 0, 1e6, &tb->lookups)))
            return rc;
    }
    return TT_OK;
}

static int load_body(const jx_obj *r, workload *t, tt_error *err)
{
    const char *model_name, *precision, *format;
    long version = 0, mb = 0, dtype = 0;
    size_t n;
    jx_obj o;
    int rc;
    if ((rc = jx_string(r, "format", 1, &format)))
        return rc;
    if (strcmp(format, "ttasim-trace") != 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.format: expected \"ttasim-trace\", found \"%s\"; "
                            "give a file written by 'ttasim trace'", t->path, format);
    if ((rc = jx_int(r, "version", 1, WORKLOAD_VERSION, WORKLOAD_VERSION, &version)) ||
        (rc = jx_string(r, "model", 1, &model_name)) ||
        (rc = jx_int(r, "micro_batch", 1, 1, 1 << 24, &mb)) ||
        (rc = jx_string(r, "precision", 1, &precision)) ||
        (rc = jx_int(r, "dtype_bytes", 1, 1, 8, &dtype)) ||
        (rc = jx_number(r, "params", 1, 0, 1e16, &t->params)) ||
        (rc = jx_number(r, "param_bytes", 1, 0, 1e17, &t->param_bytes)) ||
        (rc = jx_number(r, "forward_flops", 1, 0, 1e20, &t->forward_flops)) ||
        (rc = jx_number(r, "backward_flops", 1, 0, 1e20, &t->backward_flops)))
        return rc;
    tt_dtype dt;
    if ((rc = dtype_parse(precision, &dt, err)))
        return tt_error_prefix(err, "%s: $.precision: ", t->path);
    t->model = strdup(model_name);
    t->precision = strdup(precision);
    t->micro_batch = (int)mb;
    t->dtype_bytes = (int)dtype;

    if ((rc = jx_array(r, "layers", 1, &n)))
        return rc;
    if (n == 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.layers: expected at least one layer", t->path);
    t->layers = calloc(n, sizeof *t->layers);
    for (size_t i = 0; i < n; i++, t->n_layers++)
        if ((rc = load_layer(r, i, &t->layers[i])))
            return rc;

    if ((rc = jx_array(r, "gradients", 1, &n)))
        return rc;
    for (size_t i = 0; i < n; i++) {
        double bytes;
        int layer;
        if ((rc = jx_elem(r, "gradients", i, &o)) || (rc = jx_number(&o, "bytes", 1, 0, 1e17, &bytes)) ||
            (rc = layer_index(&o, "layer", t->n_layers, &layer)))
            return rc;
        t->gradient_bytes += bytes;
    }

    int opt = 0;
    if ((rc = jx_child(r, "optimizer", 1, &o)) || (rc = jx_enum(&o, "name", 1, OPTIM_NAMES, &opt)) ||
        (rc = jx_number(&o, "flops", 1, 0, 1e18, &t->optimizer_flops)) ||
        (rc = jx_number(&o, "bytes", 1, 0, 1e17, &t->optimizer_bytes)))
        return rc;
    t->optimizer = optim_find(OPTIM_NAMES[opt]);

    if ((rc = jx_array(r, "buckets", 1, &n)))
        return rc;
    t->buckets = calloc(n ? n : 1, sizeof *t->buckets);
    for (size_t i = 0; i < n; i++, t->n_buckets++) {
        workload_bucket *b = &t->buckets[i];
        if ((rc = jx_elem(r, "buckets", i, &o)) || (rc = jx_number(&o, "bytes", 1, 1, 1e17, &b->bytes)) ||
            (rc = layer_index(&o, "ready_after_layer", t->n_layers, &b->ready_after_layer)))
            return rc;
        /* Backward runs from the last layer to the first, so buckets fill in that order. */
        if (i > 0 && b->ready_after_layer > t->buckets[i - 1].ready_after_layer)
            return tt_error_set(err, TT_EINPUT, "%s: %s.ready_after_layer: %d comes after bucket %zu's %d "
                                "in forward order; buckets must be listed in the order backward fills them",
                                t->path, o.path, b->ready_after_layer, i - 1, t->buckets[i - 1].ready_after_layer);
    }

    if ((rc = jx_array(r, "comm", 0, &n)))
        return rc;
    t->comm = calloc(n ? n : 1, sizeof *t->comm);
    for (size_t i = 0; i < n; i++, t->n_comm++) {
        workload_comm *c = &t->comm[i];
        const char *op;
        int phase = 0;
        if ((rc = jx_elem(r, "comm", i, &o)) || (rc = jx_string(&o, "op", 1, &op)) ||
            (rc = jx_enum(&o, "phase", 1, PHASES, &phase)) ||
            (rc = layer_index(&o, "after_layer", t->n_layers, &c->after_layer)) ||
            (rc = jx_number(&o, "bytes_per_rank", 1, 0, 1e17, &c->bytes_per_rank)))
            return rc;
        if (strcmp(op, "alltoall") != 0)
            return tt_error_set(err, TT_EINPUT, "%s: %s.op: expected \"alltoall\", found \"%s\"",
                                t->path, o.path, op);
        c->phase = (comm_phase)phase;
    }
    return load_embedding(r, t, err);
}

/* root as a trace named `name` in messages (its file, or what made it). */
static int load_json(json_t *root, const char *name, workload *out, tt_error *err)
{
    out->path = strdup(name);
    jx_obj r;
    int rc = out->path ? jx_root(&r, name, root, err) : tt_error_set(err, TT_EINTERNAL, "out of memory");
    if (rc == TT_OK)
        rc = load_body(&r, out, err);
    if (rc)
        workload_free(out);
    return rc;
}

int workload_load(const char *path, workload *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    json_t *root = NULL;
    int rc = jx_load_file(path, &root, err);
    if (rc)
        return tt_error_prefix(err, "workload trace ");
    rc = load_json(root, path, out, err);
    json_decref(root);
    return rc;
}

void workload_free(workload *t)
{
    for (size_t i = 0; i < t->n_layers; i++)
        free(t->layers[i].name);
    free(t->layers);
    free(t->buckets);
    free(t->comm);
    free(t->emb.tables);
    free(t->path);
    free(t->model);
    free(t->precision);
    memset(t, 0, sizeof *t);
}

int workload_make(const char *model_name, const model_opts *shape, int micro_batch, const char *precision,
                  double bucket_bytes, const optim_info *optim, workload *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    model_opts mo;
    model_opts_default(&mo);
    if (shape)
        mo = *shape;
    trace_opts to;
    trace_opts_default(&to);
    if (micro_batch > 0)
        to.micro_batch = micro_batch;
    if (precision)
        to.precision = precision;
    if (optim)
        to.optimizer = optim;
    if (bucket_bytes > 0)
        to.bucket_bytes = bucket_bytes;
    json_t *doc = NULL;
    char name[160];
    snprintf(name, sizeof name, "the trace of model %s", model_name);
    int rc = trace_build(model_name, &mo, &to, &doc, err);
    if (rc == TT_OK)
        rc = load_json(doc, name, out, err);
    json_decref(doc);
    return rc;
}
