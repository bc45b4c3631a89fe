/* scenario_workload.c: a scenario's "workload": its trace or model, phases,
 * precisions, embedding tables and input pipeline (scenario_load.h). */
#include "sim/replay/scenario_load.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/vocab.h"
#include "sim/replay/framework.h"
#include "sim/replay/input_pipeline.h"
#include "sim/replay/sharding.h"

static const char *const PLACEMENTS[] = {"accelerators", "host", NULL};

/* workload.model as a shape: {"family": "gpt"|"llama"|"moe", "layers",
 * "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim", "vocab", "tied_embeddings",
 * "moe": {"experts", "top_k", "shared_experts", "expert_ffn_hidden"}}: the
 * family's model of that shape (trainer/model.h). */
static int load_shape(const jx_obj *w, scenario_phase *ph)
{
    static const char *const keys[] = {"family", "layers", "hidden", "ffn_hidden", "heads", "kv_heads", "head_dim",
                                       "vocab", "tied_embeddings", "moe", NULL};
    static const char *const moe_keys[] = {"experts", "top_k", "shared_experts", "expert_ffn_hidden", NULL};
    static const char *const families[] = {"gpt", "llama", "moe", NULL};
    jx_obj m, e = {0};
    int family = 0, tied = -1, rc;
    long v[8] = {0}, x[4] = {0};
    if ((rc = jx_child(w, "model", 1, &m)) || (rc = jx_check_keys(&m, keys)) ||
        (rc = jx_enum(&m, "family", 1, families, &family)) || (rc = jx_int(&m, "layers", 1, 1, 1 << 16, &v[0])) ||
        (rc = jx_int(&m, "hidden", 1, 1, 1 << 20, &v[1])) || (rc = jx_int(&m, "ffn_hidden", 0, 1, 1 << 22, &v[2])) ||
        (rc = jx_int(&m, "heads", 1, 1, 1 << 14, &v[3])) || (rc = jx_int(&m, "kv_heads", 0, 1, 1 << 14, &v[4])) ||
        (rc = jx_int(&m, "head_dim", 0, 1, 1 << 16, &v[6])) || (rc = jx_int(&m, "vocab", 0, 1, 1 << 24, &v[5])) ||
        (rc = jx_bool(&m, "tied_embeddings", 0, &tied)))
        return rc;
    if (jx_has(&m, "moe") &&
        ((rc = jx_child(&m, "moe", 1, &e)) || (rc = jx_check_keys(&e, moe_keys)) ||
         (rc = jx_int(&e, "experts", 1, 1, 1 << 16, &x[0])) || (rc = jx_int(&e, "top_k", 1, 1, 1 << 10, &x[1])) ||
         (rc = jx_int(&e, "shared_experts", 0, 0, 1 << 10, &x[2])) ||
         (rc = jx_int(&e, "expert_ffn_hidden", 0, 1, 1 << 22, &x[3]))))
        return rc;
    if ((family == 2) != jx_has(&m, "moe"))
        return tt_error_set(m.err, TT_EINPUT, "%s: %s: the moe family needs a \"moe\" block and only it takes one",
                            m.file, m.path);
    model_opts *o = &ph->opts;
    o->family = family + MODEL_FAMILY_GPT;
    o->layers = (int)v[0];
    o->hidden = (int)v[1];
    o->ffn_hidden = (int)v[2];
    o->heads = (int)v[3];
    o->kv_heads = (int)v[4];
    o->head_dim = (int)v[6];
    o->vocab = (int)v[5];
    o->tied_embeddings = jx_has(&m, "tied_embeddings") ? tied : -1;
    o->experts = (int)x[0];
    o->top_k = (int)x[1];
    o->shared_experts = family == 2 && jx_has(&e, "shared_experts") ? (int)x[2] : -1;
    o->expert_ffn_hidden = (int)x[3];
    ph->model = scenario_dup(families[family]);
    return TT_OK;
}

/* The phase's trace file, or its model by name or shape, and the tokens per
 * sequence of a transformer made on the fly (seq_len). */
static int load_source(const jx_obj *w, scenario_phase *ph)
{
    const char *trace = NULL, *name = NULL;
    long seq = 0;
    int rc, shape = json_is_object(json_object_get(w->obj, "model"));
    model_opts_default(&ph->opts);
    if ((rc = jx_string(w, "trace", 0, &trace)) || (!shape && (rc = jx_string(w, "model", 0, &name))) ||
        (rc = jx_int(w, "seq_len", 0, 1, 1 << 24, &seq)))
        return rc;
    if (!trace == !(name || shape))
        return tt_error_set(w->err, TT_EINPUT, "%s: %s: give exactly one of \"trace\" (a file written by "
                            "'ttasim trace') and \"model\" (a model name or shape; the trace is made on the fly)",
                            w->file, w->path);
    if (trace && seq)
        return tt_error_set(w->err, TT_EINPUT, "%s: %s.seq_len: a trace has its sequence; remove it", w->file,
                            w->path);
    ph->opts.seq_len = (int)seq;
    if (shape)
        return load_shape(w, ph);
    ph->model = scenario_dup(name);
    return trace ? scenario_resolve_path(w, "trace", trace, &ph->trace_path) : TT_OK;
}

static int load_phases(const jx_obj *w, scenario *s)
{
    static const char *const keys[] = {"trace", "model", "seq_len", "micro_batch", "global_batch", "fraction", NULL};
    size_t n;
    int rc = jx_array(w, "phases", 1, &n);
    if (rc)
        return rc;
    if (n == 0 || n > SCENARIO_MAX_PHASES)
        return tt_error_set(w->err, TT_EINPUT, "%s: %s.phases: expected 1 to %d phases, found %zu", w->file,
                            w->path, SCENARIO_MAX_PHASES, n);
    if (jx_has(w, "trace") || jx_has(w, "model"))
        return tt_error_set(w->err, TT_EINPUT, "%s: %s: with \"phases\", give each phase its \"trace\" or "
                            "\"model\" instead of the workload's", w->file, w->path);
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        jx_obj p;
        scenario_phase *ph = &s->phases[i];
        long mb = 0, gb = 0;
        if ((rc = jx_elem(w, "phases", i, &p)) || (rc = jx_check_keys(&p, keys)) ||
            (rc = load_source(&p, ph)) || (rc = jx_int(&p, "micro_batch", 0, 1, 1 << 20, &mb)) ||
            (rc = jx_int(&p, "global_batch", 0, 1, 1L << 32, &gb)) ||
            (rc = jx_number(&p, "fraction", 1, 1e-9, 1, &ph->fraction)))
            return rc;
        s->n_phases++;
        ph->micro_batch = (int)mb;
        ph->global_batch = gb;
        sum += ph->fraction;
    }
    if (fabs(sum - 1) > 1e-6)
        return tt_error_set(w->err, TT_EINPUT, "%s: %s.phases: the fractions of the steps add up to %g; "
                            "make them add up to 1", w->file, w->path, sum);
    return TT_OK;
}

/* workload.embedding.sharding as an array of table groups:
 * [{"max_rows": 100000, "plan": "data_parallel"}, {"plan": "auto"}], by
 * growing max_rows, the last without one (it takes the rest). */
static int load_sharding_groups(const jx_obj *e, scenario *s)
{
    static const char *const keys[] = {"max_rows", "plan", NULL};
    size_t n;
    int rc = jx_array(e, "sharding", 1, &n);
    if (rc)
        return rc;
    if (n < 1 || n > SHARD_MAX_GROUPS)
        return tt_error_set(e->err, TT_EINPUT, "%s: %s.sharding: %zu table groups; give 1 to %d", e->file, e->path, n,
                            SHARD_MAX_GROUPS);
    sharding_mix *m = &s->shard_mix;
    m->n_groups = (int)n;
    for (size_t g = 0; g < n; g++) {
        jx_obj o;
        int plan = -1;
        double max_rows = 0;
        if ((rc = jx_elem(e, "sharding", g, &o)) || (rc = jx_check_keys(&o, keys)) ||
            (rc = jx_enum(&o, "plan", 1, SHARDING_NAMES, &plan)) ||
            (rc = jx_number(&o, "max_rows", g + 1 < n, 1, 1e15, &max_rows)))
            return rc;
        if (g + 1 == n && jx_has(&o, "max_rows"))
            return tt_error_set(e->err, TT_EINPUT, "%s: %s.max_rows: the last group takes every table the others "
                                "leave; remove its max_rows", o.file, o.path);
        if (g > 0 && g + 1 < n && max_rows <= m->max_rows[g - 1])
            return tt_error_set(e->err, TT_EINPUT, "%s: %s.max_rows: %g is not above the previous group's %g; "
                                "list the groups by growing max_rows", o.file, o.path, max_rows, m->max_rows[g - 1]);
        if (plan == SHARD_HOST)
            return tt_error_set(e->err, TT_EINPUT, "%s: %s.plan: \"host\" keeps every table in the CPU sockets' "
                                "memory, not a group of them; give \"host\" as the whole sharding or another plan "
                                "here", o.file, o.path);
        m->max_rows[g] = max_rows;
        m->plan[g] = (sharding_kind)plan;
    }
    const char *why = sharding_mix_conflict(m);
    if (why)
        return tt_error_set(e->err, TT_EINPUT, "%s: %s.sharding: %s; make the row_wise groups data_parallel or the "
                            "others row_wise or data_parallel (or auto)", e->file, e->path, why);
    s->sharding = m->plan[0]; /* "auto" when any group's is: resolved per group by plan_search.c */
    for (int g = 0; g < m->n_groups; g++)
        if (m->plan[g] == SHARD_AUTO)
            s->sharding = SHARD_AUTO;
    return TT_OK;
}

/* workload.embedding.hybrid: HugeCTR's HybridEmbeddingParam (sharding.h). */
static int load_hybrid(const jx_obj *e, scenario *s)
{
    static const char *const keys[] = {"p_dup_max", "all_to_all_Bps", "all_reduce_Bps", "efficiency_bandwidth_ratio",
                                       "precomputed_indices", NULL};
    jx_obj h;
    int rc;
    hybrid_params *p = &s->hybrid;
    if ((rc = jx_child(e, "hybrid", 0, &h)) || !h.obj)
        return rc;
    if ((rc = jx_check_keys(&h, keys)) || (rc = jx_number(&h, "p_dup_max", 0, 1e-9, 1, &p->p_dup_max)) ||
        (rc = jx_number(&h, "all_to_all_Bps", 0, 1, 1e15, &p->all_to_all_Bps)) ||
        (rc = jx_number(&h, "all_reduce_Bps", 0, 1, 1e15, &p->all_reduce_Bps)) ||
        (rc = jx_number(&h, "efficiency_bandwidth_ratio", 0, 1e-6, 1e6, &p->efficiency_bandwidth_ratio)) ||
        (rc = jx_bool(&h, "precomputed_indices", 0, &p->precomputed_indices)))
        return rc;
    return TT_OK;
}

/* workload.embedding: how model-parallel tables are sharded, stored and
 * updated. "sharding": "host" is "embeddings": "host". */
static int load_embedding(const jx_obj *w, scenario *s)
{
    static const char *const keys[] = {"sharding", "precision", "optimizer", "master_weights", "index_zipf_s", "ids",
                                       "hybrid", NULL};
    jx_obj e;
    int prec = -1, sharding = s->sharding, table_optimizer = EMB_SGD, ids = IDS_READER, rc;
    if (s->embeddings == EMB_HOST)
        s->sharding = sharding = SHARD_HOST;
    if (!jx_has(w, "embedding"))
        return TT_OK;
    if ((rc = jx_child(w, "embedding", 1, &e)) || (rc = jx_check_keys(&e, keys)) ||
        (rc = json_is_array(json_object_get(e.obj, "sharding"))
                  ? load_sharding_groups(&e, s)
                  : jx_enum(&e, "sharding", 0, SHARDING_NAMES, &sharding)) ||
        (rc = jx_enum(&e, "precision", 0, DTYPE_NAMES, &prec)) ||
        (rc = jx_enum(&e, "optimizer", 0, EMBEDDING_OPTIMIZER_NAMES, &table_optimizer)) ||
        (rc = jx_bool(&e, "master_weights", 0, &s->master_weights)) ||
        (rc = jx_number(&e, "index_zipf_s", 0, 0.01, 10, &s->index_zipf_s)) ||
        (rc = jx_enum(&e, "ids", 0, EMBEDDING_IDS_NAMES, &ids)) || (rc = load_hybrid(&e, s)))
        return rc;
    if (!json_is_array(json_object_get(e.obj, "sharding"))) /* the groups set their own */
        s->sharding = (sharding_kind)sharding;
    s->table_optimizer = (embedding_optimizer)table_optimizer;
    s->embedding_ids = (embedding_ids)ids;
    s->table_precision = prec >= 0 ? strdup(DTYPE_NAMES[prec]) : NULL;
    if (s->sharding == SHARD_HOST && jx_has(w, "embeddings") && s->embeddings != EMB_HOST)
        return tt_error_set(e.err, TT_EINPUT, "%s: %s.sharding: \"host\" puts the tables in host memory but "
                            "%s.embeddings says \"accelerators\"; drop one of them", e.file, e.path, w->path);
    if (s->sharding == SHARD_HOST)
        s->embeddings = EMB_HOST;
    return TT_OK;
}

/* workload.input: where the images come from (input_pipeline.h). */
static int load_input(const jx_obj *w, scenario *s)
{
    static const char *const keys[] = {"pipeline", "threads", NULL};
    jx_obj in;
    long threads = 0;
    int pipeline = INPUT_NONE, rc;
    if ((rc = jx_child(w, "input", 0, &in)) || !in.obj)
        return rc;
    if ((rc = jx_check_keys(&in, keys)) || (rc = jx_enum(&in, "pipeline", 1, INPUT_PIPELINE_NAMES, &pipeline)) ||
        (rc = jx_int(&in, "threads", 0, 1, 1 << 16, &threads)))
        return rc;
    s->input_pipeline = (input_pipeline_kind)pipeline;
    s->input_threads = (int)threads;
    return TT_OK;
}

int scenario_load_workload(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"trace", "model", "seq_len", "phases", "micro_batch", "global_batch",
                                       "precision", "gradient_precision", "bucket_bytes", "dataset_examples",
                                       "embeddings", "embedding", "fusion", "recompute", "attention", "activations",
                                       "framework", "async_wgrad", "input", "chakra", NULL};
    static const char *const attention_kinds[] = {"standard", "fused", NULL};
    static const char *const activation_kinds[] = {"outputs", "autograd", NULL};
    jx_obj w;
    long mb = 0, gb = 0;
    int prec = -1, gprec = -1, placement = EMB_ACCELERATORS, fw = FRAMEWORK_NONE, rc;
    if (s->is_collective)
        return TT_OK;
    if ((rc = jx_child(r, "workload", 1, &w)) || (rc = jx_check_keys(&w, keys)) ||
        (rc = jx_int(&w, "micro_batch", 0, 1, 1 << 20, &mb)) ||
        (rc = jx_int(&w, "global_batch", 0, 1, 1L << 32, &gb)) ||
        (rc = jx_enum(&w, "precision", 0, DTYPE_NAMES, &prec)) ||
        (rc = jx_enum(&w, "gradient_precision", 0, DTYPE_NAMES, &gprec)) ||
        (rc = jx_bytes(&w, "bucket_bytes", 0, 1, 1e12, &s->bucket_bytes)) ||
        (rc = jx_number(&w, "dataset_examples", 0, 1, 1e15, &s->dataset_examples)) ||
        (rc = jx_enum(&w, "embeddings", 0, PLACEMENTS, &placement)))
        return rc;
    s->embeddings = (embedding_placement)placement; /* load_embedding reads it */
    if ((rc = load_embedding(&w, s)) || (rc = jx_bool(&w, "fusion", 0, &s->fusion)) ||
        (rc = jx_bool(&w, "recompute", 0, &s->recompute)) ||
        (rc = jx_enum(&w, "attention", 0, attention_kinds, &s->fused_attention)) ||
        (rc = jx_enum(&w, "activations", 0, activation_kinds, &s->autograd_activations)) ||
        (rc = jx_enum(&w, "framework", 0, FRAMEWORK_NAMES, &fw)) ||
        (rc = jx_bool(&w, "async_wgrad", 0, &s->async_wgrad)) || (rc = load_input(&w, s)))
        return rc;
    const char *chakra = NULL;
    if ((rc = jx_string(&w, "chakra", 0, &chakra)) ||
        (chakra && (rc = scenario_resolve_path(&w, "chakra", chakra, &s->chakra_path))))
        return rc;
    if (chakra && jx_has(&w, "phases"))
        return tt_error_set(w.err, TT_EINPUT, "%s: %s.chakra: a Chakra trace is one step; give it without "
                            "\"phases\"", w.file, w.path);
    s->framework = (framework)fw;
    s->micro_batch = (int)mb;
    s->global_batch = gb;
    s->precision = prec >= 0 ? strdup(DTYPE_NAMES[prec]) : NULL;
    s->gradient_precision = gprec >= 0 ? strdup(DTYPE_NAMES[gprec]) : NULL;
    if (jx_has(&w, "phases"))
        return load_phases(&w, s);
    s->n_phases = 1;
    s->phases[0].fraction = 1;
    return load_source(&w, &s->phases[0]);
}
