/* trace.c: the workload trace of one step: per-layer FLOPs and bytes from the
 * shapes executed, gradients in the order backward produces them, DDP-style
 * gradient buckets, and the alltoalls of model-parallel embeddings. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "trainer/synth.h"
#include "trainer/trace.h"

void trace_opts_default(trace_opts *o)
{
    memset(o, 0, sizeof *o);
    o->micro_batch = 32;
    o->precision = "fp32";
    o->bucket_bytes = TRACE_DEFAULT_BUCKET_BYTES;
    o->optimizer = optim_find("sgd");
}

/* Executes one step of the model at batch B (tables capped for DLRM); sets
 * *ran to 0 without allocating when its *need bytes (parameters, gradients,
 * activations) exceed TRACE_EXEC_LIMIT_BYTES. */
static int run_step(const char *name, const model_opts *mo, int B, int *ran, double *need,
                    tt_error *err)
{
    model_opts ro = *mo;
    if (ro.table_rows_cap == 0 || ro.table_rows_cap > TRACE_RUN_TABLE_ROWS)
        ro.table_rows_cap = TRACE_RUN_TABLE_ROWS;
    model *m;
    int rc = model_create(&m, name, &ro, err);
    if (rc)
        return rc;
    *need = 8.0 * (double)model_params(m)->numel + 2 * B * model_activation_bytes_per_sample(m);
    *ran = *need <= TRACE_EXEC_LIMIT_BYTES;
    if (!*ran) {
        model_free(m);
        return TT_OK;
    }
    rc = model_alloc(m, B, err);
    if (!rc) {
        synth_fill(model_get_inputs(m), 1, 0);
        model_zero_grad(m);
        float loss = model_forward(m);
        model_backward(m);
        if (!isfinite(loss))
            rc = tt_error_set(err, TT_EINTERNAL, "model %s: the traced step's loss is %g", name,
                              loss);
    }
    model_free(m);
    return rc;
}

json_t *trace_gemms_json(const model_layer *L, int B)
{
    json_t *arr = json_array();
    for (int g = 0; g < L->ngemms; g++) {
        const model_gemm *G = &L->gemms[g];
        json_array_append_new(arr, json_pack("{s:s, s:s, s:f, s:f, s:f, s:f}", "kind", G->kind, "split",
                                             G->split, "m", G->m * (G->count_scales ? 1 : B), "n", G->n,
                                             "k", G->k, "count", G->count * (G->count_scales ? B : 1)));
    }
    return arr;
}

static json_t *layers_json(const model *m, int B, int dt)
{
    json_t *arr = json_array();
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        json_t *o = json_pack(
            "{s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f}", "name", L->name, "class", opclass_name(L->cls),
            "forward_flops", L->fwd_flops * B, "forward_bytes",
            (L->fwd_elems * B + L->fwd_elems_fixed) * dt, "backward_flops", L->bwd_flops * B,
            "backward_bytes", (L->bwd_elems * B + L->bwd_elems_fixed) * dt, "activation_bytes",
            L->act_elems * B * dt, "param_bytes", L->params * dt);
        json_object_update_new(o, json_pack("{s:f, s:f}", "kept_bytes", L->kept_elems * B * dt, "kept_aux_bytes",
                                            L->kept_aux_bytes * B));
        if (L->kept_gemm_elems > 0)
            json_object_set_new(o, "kept_gemm_bytes", json_real(L->kept_gemm_elems * B * dt));
        if (L->heads > 0) /* the score matrices' shape, for fused attention in replay */
            json_object_update_new(o, json_pack("{s:i, s:i, s:i}", "seq_len", L->seq_len, "heads", L->heads,
                                                "head_dim", L->head_dim));
        if (L->kv_heads > 0 && L->kv_heads != L->heads)
            json_object_set_new(o, "kv_heads", json_integer(L->kv_heads));
        if (L->hidden > 0 && (L->experts > 0 || L->hidden != L->heads * L->head_dim))
            json_object_set_new(o, "hidden", json_integer(L->hidden));
        if (L->experts > 0)
            json_object_update_new(o, json_pack("{s:i, s:i, s:f}", "experts", L->experts, "top_k",
                                                L->top_k, "tokens_routed", L->routed * B));
        if (L->ngemms > 0)
            json_object_set_new(o, "gemms", trace_gemms_json(L, B));
        json_array_append_new(arr, o);
    }
    return arr;
}

/* The model-parallel tables of embedding layer i: rows, width and lookups per
 * sample of each, and the index distribution of the synthetic click logs. */
static json_t *embedding_json(model *m, const model_layer *L, int i)
{
    const param_set *ps = model_params(m);
    const int *bags = model_get_inputs(m)->bags; /* multi-hot: each table its own */
    json_t *tables = json_array();
    for (int v = L->first_view; v < L->first_view + L->nviews; v++)
        json_array_append_new(tables, json_pack("{s:I, s:i, s:f}", "rows", (json_int_t)ps->views[v].shape[0],
                                                "dim", ps->views[v].shape[1], "lookups",
                                                (double)bags[v - L->first_view]));
    return json_pack("{s:i, s:s, s:f, s:o}", "layer", i, "index_distribution", "zipf", "index_zipf_s",
                     SYNTH_CLICK_ZIPF_S, "tables", tables);
}

/* Gradients in backward production order (layers last to first, a layer's
 * tensors last to first as DDP registers them), then buckets filled in that
 * order: a bucket closes once it reaches its cap; it is ready after the
 * backward of its last-produced gradient's layer. */
static void gradients_json(model *m, const trace_opts *to, int dt, json_t *grads,
                           json_t *buckets)
{
    const param_set *ps = model_params(m);
    double cap = fmin(1024.0 * 1024.0, to->bucket_bytes), fill = 0;
    int ready = -1;
    for (int i = model_nlayers(m) - 1; i >= 0; i--) {
        const model_layer *L = model_layer_at(m, i);
        if (L->model_parallel)
            continue;
        for (int v = L->first_view + L->nviews - 1; v >= L->first_view; v--) {
            double bytes = (double)ps->views[v].numel * dt;
            json_array_append_new(grads, json_pack("{s:s, s:f, s:i}", "name",
                                                   ps->views[v].name, "bytes", bytes, "layer", i));
            fill += bytes;
            ready = i;
            if (fill >= cap) {
                json_array_append_new(buckets, json_pack("{s:f, s:i}", "bytes", fill,
                                                         "ready_after_layer", ready));
                fill = 0;
                cap = to->bucket_bytes;
            }
        }
    }
    if (fill > 0)
        json_array_append_new(buckets,
                              json_pack("{s:f, s:i}", "bytes", fill, "ready_after_layer", ready));
}

int trace_build(const char *model_name, const model_opts *mo, const trace_opts *to,
                json_t **out, tt_error *err)
{
    *out = NULL;
    tt_dtype dtype;
    if (dtype_parse(to->precision, &dtype, err))
        return tt_error_prefix(err, "precision: ");
    int dt = dtype_bytes(dtype);
    const optim_info *oc = to->optimizer;
    if (to->micro_batch < 1 || to->bucket_bytes <= 0)
        return tt_error_set(err, TT_EINPUT, "micro-batch and bucket bytes must be positive");
    model *m;
    int rc = model_create(&m, model_name, mo, err);
    if (rc)
        return rc;
    int B = to->micro_batch;
    int run = to->run_batch;
    if (run <= 0) {
        /* activations and their gradients */
        double per = 2 * model_activation_bytes_per_sample(m);
        run = (int)fmin(B, fmax(1, floor(TRACE_RUN_BYTES / per)));
    }
    int ran;
    double need;
    rc = run_step(model_name, mo, run, &ran, &need, err);
    if (rc) {
        model_free(m);
        return rc;
    }
    const param_set *ps = model_params(m);
    double fwd = 0, bwd = 0, mp_params = 0, dense = 0;
    json_t *comm = json_array(), *notes = json_array(), *emb = NULL;
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        fwd += L->fwd_flops * B;
        bwd += L->bwd_flops * B;
        if (!L->model_parallel) {
            dense += L->params;
            continue;
        }
        /* hybrid parallel (DLRM): each rank looks up its tables for the global batch;
         * an alltoall gives every rank all tables' vectors for its own samples, and
         * the backward alltoall returns their gradients */
        mp_params += L->params;
        int cols = ps->views[L->first_view].shape[1];
        double bytes = (double)L->nviews * cols * B * dt; /* one pooled vector per table */
        emb = embedding_json(m, L, i);
        int consumer = i + 1 < model_nlayers(m) ? i + 1 : i;
        json_array_append_new(comm, json_pack("{s:s, s:s, s:i, s:f}", "op", "alltoall", "phase",
                                              "forward", "after_layer", i, "bytes_per_rank",
                                              bytes));
        json_array_append_new(comm, json_pack("{s:s, s:s, s:i, s:f}", "op", "alltoall", "phase",
                                              "backward", "after_layer", consumer,
                                              "bytes_per_rank", bytes));
    }
    char note[512];
    if (!ran) {
        snprintf(note, sizeof note,
                 "planned from the shapes, not executed: a step at micro-batch %d needs %.3g GB "
                 "of parameters, gradients and activations (more than %.0f); FLOPs and bytes are "
                 "per-sample counts scaled to micro-batch %d",
                 run, need / 1e9, TRACE_EXEC_LIMIT_BYTES / 1e9, B);
        json_array_append_new(notes, json_string(note));
    } else if (run < B) {
        snprintf(note, sizeof note,
                 "executed at micro-batch %d (memory); FLOPs and bytes are per-sample counts "
                 "from the executed shapes, scaled linearly to micro-batch %d",
                 run, B);
        json_array_append_new(notes, json_string(note));
    }
    if (mp_params > 0) {
        snprintf(note, sizeof note,
                 "embedding tables (%.0f parameters) are model-parallel: not in gradients, "
                 "buckets or the optimizer figure; executed with tables capped at %d rows, "
                 "reported at full size; their lookups and sparse updates are costed at replay "
                 "from \"embedding\" (tables, index distribution) at the scenario's batch",
                 mp_params, TRACE_RUN_TABLE_ROWS);
        json_array_append_new(notes, json_string(note));
    }
    snprintf(note, sizeof note,
             "optimizer cost per parameter: %s %.0f FLOPs and %.0f fp32 words (master weights "
             "and state fp32)", oc->name, oc->update_flops, oc->update_words);
    json_array_append_new(notes, json_string(note));
    json_t *grads = json_array(), *buckets = json_array();
    gradients_json(m, to, dt, grads, buckets);
    double upd = dense;
    json_t *doc = json_pack(
        "{s:s, s:i, s:s, s:i, s:s, s:i, s:I, s:f, s:f, s:f, s:o, s:o, s:{s:s, s:f, s:f}, s:o, "
        "s:o}",
        "format", "ttasim-trace", "version", 1, "model", model_name, "micro_batch", B,
        "precision", to->precision, "dtype_bytes", dt, "params", (json_int_t)ps->numel,
        "param_bytes", (double)ps->numel * dt, "forward_flops", fwd, "backward_flops", bwd,
        "layers", layers_json(m, B, dt), "gradients", grads, "optimizer", "name", oc->name,
        "flops", oc->update_flops * upd, "bytes", oc->update_words * 4 * upd, "buckets", buckets, "comm", comm);
    json_object_set_new(doc, "description", json_string(model_describe(model_name)));
    json_object_set_new(doc, "executed_micro_batch", json_integer(ran ? run : 0));
    if (model_get_inputs(m)->seq_len)
        json_object_set_new(doc, "seq_len", json_integer(model_get_inputs(m)->seq_len));
    json_object_set_new(doc, "bucket_cap_bytes", json_real(to->bucket_bytes));
    json_object_set_new(doc, "model_parallel_param_bytes", json_real(mp_params * dt));
    if (emb)
        json_object_set_new(doc, "embedding", emb);
    json_object_set_new(doc, "notes", notes);
    model_free(m);
    *out = doc;
    return TT_OK;
}
