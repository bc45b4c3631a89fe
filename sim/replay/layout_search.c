#include "sim/replay/layout_search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/closed_form.h"
#include "common/parallel.h"
#include "sim/replay/batch_schedule.h"
#include "sim/replay/point.h"
#include "sim/replay/run_ctx.h"
#include "sim/replay/step_transformer.h"

/* Micro-batches tried (those that divide a data rank's samples). */
static const int MICRO_BATCHES[] = {1, 2, 4, 8};
#define N_MICRO (sizeof MICRO_BATCHES / sizeof *MICRO_BATCHES)
/* Interleaved chunks per stage tried. */
#define MAX_CHUNKS 8

/* What the enumeration needs of the model, from its trace. */
typedef struct model_facts {
    int blocks, heads, kv_heads, seq_len, experts;
} model_facts;

static model_facts facts_of(const workload *t)
{
    model_facts f = {0};
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        f.blocks = l->block >= f.blocks ? l->block + 1 : f.blocks;
        f.experts = l->experts > f.experts ? l->experts : f.experts;
        if (l->cls == OPCLASS_ATTENTION && !f.heads) {
            f.heads = l->heads;
            f.kv_heads = l->kv_heads > 0 ? l->kv_heads : l->heads;
            f.seq_len = l->seq_len;
        }
    }
    return f;
}

/* The search's shared state: forked workers read it, never change it. */
typedef struct search {
    const scenario *sc;
    cluster c;
    run_ctx ctx[N_MICRO]; /* the workload made at each micro-batch (the trace scales with it) */
    int ctx_loaded[N_MICRO];
    run_ctx own;          /* the scenario as it is */
    int own_loaded, workload_fused;
    ls_layout *cand;
    size_t n_cand;
    const layout_search_options *opt;
    int stage;
} search;

/* ---- the screen's collectives ---- */

/* The rings NCCL runs at once over a group's hops between nodes, a channel
 * per NIC: the distinct NICs its members of one node leave by (1 without
 * a node fabric). A group of a node's 8 GPUs crosses at 8 NICs' rate. */
static int rank_node(const platform *p, int rank)
{
    int rpn = platform_ranks_per_node(p);
    return rank / (rpn > 0 ? rpn : 1);
}

static int group_nics(const platform *p, const int *members, int size)
{
    int node = rank_node(p, members[0]), n = 0;
    for (int i = 0; i < size; i++) {
        const char *x = platform_rank_exit(p, members[i]);
        if (!x)
            return 1;
        int seen = rank_node(p, members[i]) != node;
        for (int j = 0; j < i && !seen; j++)
            seen = rank_node(p, members[j]) == node && strcmp(platform_rank_exit(p, members[j]), x) == 0;
        n += !seen;
    }
    return n > 0 ? n : 1;
}

/* A ring over members at its slowest hop: the largest latency and the least
 * rate of a hop, a hop between nodes at its group's NICs' rate (INFINITY
 * when no hop has a rate). */
static void ring_rate(const platform *p, const int *members, int size, double *lat_s, double *bw_Bps)
{
    int nics = group_nics(p, members, size);
    *lat_s = 0;
    *bw_Bps = INFINITY;
    for (int r = 0; r < size; r++) {
        double a = 0, b = 0;
        int next = members[(r + 1) % size];
        platform_path(p, members[r], next, &a, &b);
        b *= rank_node(p, members[r]) != rank_node(p, next) ? nics : 1;
        *lat_s = fmax(*lat_s, a);
        *bw_Bps = b > 0 ? fmin(*bw_Bps, b) : *bw_Bps;
    }
}

/* One ring over communicator 0 of each collective's dimensions at its
 * slowest hop (latency and bandwidth of platform_path, a hop between nodes
 * at its group's NICs' rate): the contention-free closed form of the ring
 * (pairwise exchange for an alltoall). The groups of one dimension set are
 * alike, so the first stands for them. */
static int screen_timer(const scenario *sc, const layout *l, const platform *p, const step_coll *c, size_t n,
                        const double *per_step, coll_times *t, link_usage *links, tt_error *err)
{
    static const coll_op OPS[STEP_OPS] = {OP_ALLREDUCE, OP_ALLTOALL, OP_REDUCE_SCATTER, OP_ALLGATHER};
    (void)sc, (void)per_step, (void)links;
    unsigned seen[TF_COLLS + 8];
    double lat_of[TF_COLLS + 8], bw_of[TF_COLLS + 8];
    int nseen = 0, *members = malloc(sizeof *members * (size_t)l->ranks);
    if (!members)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    snprintf(t->allreduce, sizeof t->allreduce, "closed form (ring)");
    snprintf(t->alltoall, sizeof t->alltoall, "closed form (pairwise)");
    for (size_t i = 0; i < n; i++) {
        int size = layout_group_size(l, c[i].dims), k = 0;
        t->coll_s[i] = t->wire_s[i] = 0;
        if (c[i].bytes <= 0 || size <= 1)
            continue;
        while (k < nseen && seen[k] != c[i].dims)
            k++;
        if (k == nseen) {
            layout_group(l, c[i].dims, 0, members);
            double lat_s, bw_Bps;
            ring_rate(p, members, size, &lat_s, &bw_Bps);
            if (nseen < (int)(sizeof seen / sizeof *seen)) {
                seen[nseen] = c[i].dims;
                lat_of[nseen] = lat_s;
                bw_of[nseen++] = isfinite(bw_Bps) ? bw_Bps : 0;
            } else {
                lat_of[k] = lat_s, bw_of[k] = isfinite(bw_Bps) ? bw_Bps : 0;
            }
        }
        coll_params cp = {.op = OPS[c[i].op], .algo = c[i].op == STEP_ALLTOALL ? ALGO_PAIRWISE : ALGO_RING,
                          .ranks = size, .bytes = c[i].bytes};
        double s = bw_of[k] > 0 ? coll_closed_form_s(&cp, lat_of[k], bw_of[k], 0) : 0;
        t->coll_s[i] = t->wire_s[i] = isfinite(s) ? s : 0;
    }
    free(members);
    return TT_OK;
}

/* ---- layouts ---- */

/* The scenario with layout l (a copy sharing base's strings: never freed). */
static void apply(const search *s, const ls_layout *l, scenario *out)
{
    *out = *s->sc;
    out->degree[LAYOUT_TENSOR] = l->tensor;
    out->degree[LAYOUT_PIPELINE] = l->pipeline;
    out->degree[LAYOUT_CONTEXT] = l->context;
    out->degree[LAYOUT_EXPERT] = l->expert;
    out->degree[LAYOUT_DATA] = l->data;
    out->virtual_stages = l->virtual_stages;
    out->first_stage_layers = l->first_stage_layers;
    out->last_stage_layers = l->last_stage_layers;
    out->micro_batch = l->micro_batch;
    out->global_batch = l->global_batch;
    out->zero = l->zero;
    out->sequence_parallel = l->sequence_parallel;
    out->recompute = l->recompute == LS_RECOMPUTE_FULL;
    out->fused_attention = s->workload_fused || l->recompute == LS_RECOMPUTE_SELECTIVE;
    out->n_sweep_batch = out->n_sweep_nodes = out->n_sweep_paths = 0;
}

static size_t micro_index(int mb)
{
    size_t k = 0;
    while (k < N_MICRO - 1 && MICRO_BATCHES[k] != mb)
        k++;
    return k;
}

/* Blocks on the first and last virtual stage of vs: 0 for an even split;
 * else the most (at most the others' share) that leave the rest even, as
 * Llama 3 405B put 126 blocks on 32 virtual stages (3, 4 x 30, 3); -1: none. */
static int ends_of(int blocks, int vs)
{
    if (blocks % vs == 0)
        return 0;
    if (vs < 3)
        return -1;
    for (int k = blocks / vs; k >= 1; k--)
        if ((blocks - 2 * k) % (vs - 2) == 0 && (blocks - 2 * k) / (vs - 2) >= k)
            return k;
    return -1;
}

typedef struct enum_state {
    search *s;
    model_facts f;
    layout_search_result *r;
    size_t cap;
} enum_state;

static int push(enum_state *e, const ls_layout *l, tt_error *err)
{
    search *s = e->s;
    if (s->n_cand == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 256;
        ls_layout *c = realloc(s->cand, cap * sizeof *c);
        if (!c)
            return tt_error_set(err, TT_EINTERNAL, "out of memory");
        s->cand = c;
        e->cap = cap;
    }
    s->cand[s->n_cand++] = *l;
    return TT_OK;
}

/* The layouts of one set of degrees: every micro-batch, ZeRO stage and recomputation. */
static int enumerate_one(enum_state *e, ls_layout l, tt_error *err)
{
    const scenario *sc = e->s->sc;
    int ranks = e->r->ranks, degree[LAYOUT_DIMS] = {0};
    degree[LAYOUT_TENSOR] = l.tensor;
    degree[LAYOUT_CONTEXT] = l.context;
    degree[LAYOUT_EXPERT] = l.expert;
    degree[LAYOUT_PIPELINE] = l.pipeline;
    e->r->combinations += N_MICRO;
    layout lay;
    tt_error ignored = {0};
    if (layout_make_experts(degree, sc->expert_tensor, sc->layout_order, ranks, "$.parallel", &lay, &ignored)) {
        e->r->rejected[LS_REJECT_RANKS] += N_MICRO;
        return TT_OK;
    }
    l.data = ranks / (l.tensor * l.context * l.pipeline); /* Megatron's dense data-parallel size */
    int ends = ends_of(e->f.blocks, l.pipeline * l.virtual_stages);
    l.first_stage_layers = l.last_stage_layers = ends > 0 ? ends : 0;
    l.stage_layers = ends > 0 ? (e->f.blocks - 2 * ends) / (l.pipeline * l.virtual_stages - 2)
                              : e->f.blocks / (l.pipeline * l.virtual_stages);
    tf_options tf = {.layout = &lay, .chunks = l.virtual_stages, .first_blocks = l.first_stage_layers,
                     .last_blocks = l.last_stage_layers};
    int parallel = l.tensor * l.pipeline * l.context * l.expert > 1;
    if (ends < 0 || e->f.kv_heads % l.tensor || (l.context > 1 && e->f.seq_len % (2 * l.context)) ||
        (parallel && tf_check(&e->s->ctx[0].tr[0], &tf, &ignored))) {
        e->r->rejected[LS_REJECT_MODEL] += N_MICRO;
        return TT_OK;
    }
    long data_ranks = (long)lay.degree[LAYOUT_DATA] * lay.degree[LAYOUT_EXPERT];
    for (size_t m = 0; m < N_MICRO; m++) {
        l.micro_batch = MICRO_BATCHES[m];
        long per_rank = l.global_batch / data_ranks, micro_batches = per_rank / l.micro_batch;
        /* Megatron-Core's interleaved schedule takes micro-batches in rounds of the stages (pipeline.c) */
        if (l.global_batch % data_ranks || per_rank % l.micro_batch ||
            (l.virtual_stages > 1 && micro_batches % l.pipeline)) {
            e->r->rejected[LS_REJECT_BATCH]++;
            continue;
        }
        unsigned zeros = e->s->opt->zero_mask ? e->s->opt->zero_mask : 14u;
        unsigned recomputes = e->s->opt->recompute_mask ? e->s->opt->recompute_mask : 7u;
        for (l.zero = 0; l.zero <= 3; l.zero++)
            for (l.recompute = LS_RECOMPUTE_NONE; l.recompute <= LS_RECOMPUTE_FULL; l.recompute++) {
                if (!(zeros >> l.zero & 1) || !(recomputes >> l.recompute & 1))
                    continue;
                if (l.zero == 3 && (l.pipeline > 1 || l.expert > 1))
                    continue; /* ZeRO-3 runs without pipeline stages and experts (scenario_parallel.c) */
                if (l.recompute == LS_RECOMPUTE_SELECTIVE && e->s->workload_fused)
                    continue; /* fused attention already keeps no scores: selective is none */
                int rc = push(e, &l, err);
                if (rc)
                    return rc;
            }
    }
    return TT_OK;
}

static int enumerate(search *s, layout_search_result *r, tt_error *err)
{
    enum_state e = {.s = s, .f = facts_of(&s->ctx[0].tr[0]), .r = r};
    const layout_search_options *o = s->opt;
    int tmax = o->tensor_max > 0 ? o->tensor_max : r->ranks_per_node;
    int cmax = o->context_max > 0 ? o->context_max : 8;
    int emax = e.f.experts > 0 ? e.f.experts : 1;
    size_t nb = o->n_batches ? o->n_batches : 1;
    for (size_t b = 0; b < nb; b++) {
        ls_layout l = {.global_batch = o->n_batches ? o->batches[b] : s->sc->global_batch};
        for (l.tensor = 1; l.tensor <= tmax && l.tensor <= e.f.heads; l.tensor++) {
            if (e.f.heads % l.tensor || r->ranks_per_node % l.tensor)
                continue; /* a tensor group astride two nodes is never the screen's first group */
            l.sequence_parallel = l.tensor > 1 && !o->no_sequence_parallel;
            for (l.context = 1; l.context <= cmax; l.context *= 2)
                for (l.pipeline = 1; l.pipeline <= e.f.blocks; l.pipeline++)
                    for (l.virtual_stages = 1; l.virtual_stages <= (l.pipeline > 1 ? MAX_CHUNKS : 1);
                         l.virtual_stages++)
                        for (l.expert = 1; l.expert <= emax; l.expert++) {
                            if (emax % l.expert || r->ranks % (l.tensor * l.context * l.pipeline))
                                continue;
                            int rc = enumerate_one(&e, l, err);
                            if (rc)
                                return rc;
                        }
        }
    }
    return TT_OK;
}

/* ---- screening and simulating, one task per layout ---- */

typedef struct screen_out {
    int rc, prune;
    double step_s;
    char msg[512];
} screen_out;

static void screen_task(void *ctx, size_t i, void *result)
{
    search *s = ctx;
    screen_out *o = result;
    scenario sc;
    apply(s, &s->cand[i], &sc);
    run_ctx x = s->ctx[micro_index(s->cand[i].micro_batch)];
    x.sc = &sc;
    run_point *pt = malloc(sizeof *pt);
    tt_error err = {0};
    if (!pt) {
        o->rc = TT_EINTERNAL;
        snprintf(o->msg, sizeof o->msg, "out of memory");
        return;
    }
    o->rc = point_screen(&x, &s->c, sc.global_batch, screen_timer, pt, &err);
    const step_memory *m = &pt->step.memory;
    if (o->rc == TT_EINPUT && m->total_bytes > platform_device(s->c.p, 0)->mem_bytes)
        o->prune = m->params_bytes + m->gradients_bytes + m->optimizer_bytes > platform_device(s->c.p, 0)->mem_bytes
                       ? LS_PRUNE_STATE
                       : LS_PRUNE_ACTIVATIONS;
    else if (o->rc == TT_EINPUT)
        o->prune = LS_PRUNE_OTHER;
    o->step_s = o->rc ? INFINITY : pt->step.time_s;
    if (o->rc)
        snprintf(o->msg, sizeof o->msg, "%s", err.msg);
    free(pt);
}

/* Simulation i < n_pick: the i-th fastest screened layout, as `run` runs it;
 * i == n_pick: the scenario's own. Task j runs simulation first + j * step
 * (all of them, or a shard's share). */
typedef struct sim_ctx {
    search *s;
    const size_t *pick;
    size_t n_pick, first, step;
} sim_ctx;

static void sim_task(void *ctx, size_t j, void *result)
{
    sim_ctx *q = ctx;
    search *s = q->s;
    point_outcome *o = result;
    size_t i = q->first + j * q->step;
    scenario sc;
    run_ctx x;
    if (i < q->n_pick) {
        const ls_layout *l = &s->cand[q->pick[i]];
        apply(s, l, &sc);
        x = s->ctx[micro_index(l->micro_batch)];
        x.sc = &sc;
    } else {
        x = s->own;
    }
    o->rc = batch_schedule_point(&x, &s->c, x.sc->global_batch, NULL, &o->pt, &o->err);
    o->rc = point_failed(o->rc, &o->pt, &o->err);
    o->present = 1;
}

static void progress_cb(void *ctx, size_t done, size_t total)
{
    const search *s = ctx;
    if (s->opt->progress)
        s->opt->progress(s->stage, done, total);
}

static void sim_progress(void *ctx, size_t done, size_t total)
{
    progress_cb(((sim_ctx *)ctx)->s, done, total);
}

/* ---- ordering ---- */

typedef struct by_time {
    double t;
    size_t i;
} by_time;

static int by_time_cmp(const void *a, const void *b)
{
    const by_time *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static int row_cmp(const void *a, const void *b)
{
    const ls_row *x = a, *y = b;
    int fx = x->pt.error[0] != '\0', fy = y->pt.error[0] != '\0';
    if (fx != fy)
        return fx - fy;
    if (!fx && x->pt.step.time_s != y->pt.step.time_s)
        return x->pt.step.time_s < y->pt.step.time_s ? -1 : 1;
    double mx = x->pt.step.memory.total_bytes, my = y->pt.step.memory.total_bytes; /* a tie: the leaner first */
    if (!fx && mx != my)
        return mx < my ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

static int same_layout(const ls_layout *a, const ls_layout *b)
{
    return a->tensor == b->tensor && a->pipeline == b->pipeline && a->context == b->context &&
           a->expert == b->expert && a->virtual_stages == b->virtual_stages &&
           a->first_stage_layers == b->first_stage_layers && a->last_stage_layers == b->last_stage_layers &&
           a->micro_batch == b->micro_batch && a->zero == b->zero && a->recompute == b->recompute &&
           a->sequence_parallel == b->sequence_parallel && a->global_batch == b->global_batch;
}

/* A degree of the scenario's own layout: as its run made it, or as the
 * scenario asks when the run failed before it did (1 when unsaid). */
static int own_degree(const scenario *sc, const run_point *pt, layout_dim d)
{
    return pt->parallel[d] ? pt->parallel[d] : sc->degree[d] > 0 ? sc->degree[d] : 1;
}

/* The scenario's own layout as the search names layouts. */
static ls_layout own_layout(const search *s, const run_point *pt)
{
    const scenario *sc = s->sc;
    ls_layout l = {.tensor = own_degree(sc, pt, LAYOUT_TENSOR), .pipeline = own_degree(sc, pt, LAYOUT_PIPELINE),
                   .context = own_degree(sc, pt, LAYOUT_CONTEXT),
                   .expert = sc->degree[LAYOUT_EXPERT] ? sc->degree[LAYOUT_EXPERT] : 1,
                   .virtual_stages = sc->virtual_stages > 0 ? sc->virtual_stages : 1,
                   .first_stage_layers = sc->first_stage_layers, .last_stage_layers = sc->last_stage_layers,
                   .micro_batch = pt->micro_batch ? pt->micro_batch : sc->micro_batch, .zero = sc->zero,
                   .sequence_parallel = sc->sequence_parallel,
                   .global_batch = pt->global_batch ? pt->global_batch : sc->global_batch};
    l.data = pt->ranks / (l.tensor * l.pipeline * l.context);
    l.recompute = sc->recompute ? LS_RECOMPUTE_FULL
                  : sc->fused_attention && !s->workload_fused ? LS_RECOMPUTE_SELECTIVE
                                                               : LS_RECOMPUTE_NONE;
    int vs = l.pipeline * l.virtual_stages, blocks = facts_of(&s->own.tr[0]).blocks;
    int ends = l.first_stage_layers + l.last_stage_layers, middle = vs - (l.first_stage_layers > 0) -
                                                                     (l.last_stage_layers > 0);
    l.stage_layers = middle > 0 ? (blocks - ends) / middle : 0;
    if (l.first_stage_layers == l.stage_layers && l.last_stage_layers == l.stage_layers) /* an even split */
        l.first_stage_layers = l.last_stage_layers = 0;
    return l;
}

/* ---- the search ---- */

static int check_scenario(const scenario *sc, const layout_search_options *opt, tt_error *err)
{
    if (sc->is_collective)
        return tt_error_set(err, TT_EINPUT, "%s: a collective scenario has no training step to lay out; give a "
                            "training scenario", sc->path);
    if (sc->n_phases != 1 || sc->phases[0].micro_batch || sc->phases[0].global_batch)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.phases: the layout search takes one workload with its "
                            "batch in $.workload (global_batch, micro_batch); give one phase", sc->path);
    if (sc->global_batch <= 0 && opt->n_batches == 0)
        return tt_error_set(err, TT_EINPUT, "%s: $.workload.global_batch: the search splits a global batch over "
                            "the data ranks; give one (or --batch)", sc->path);
    return TT_OK;
}

static int load_contexts(search *s, tt_error *err)
{
    int rc = run_ctx_load(&s->own, s->sc, &s->c, err);
    s->own_loaded = rc == TT_OK;
    for (size_t k = 0; rc == TT_OK && k < N_MICRO; k++) {
        scenario at = *s->sc;
        at.micro_batch = MICRO_BATCHES[k];
        if ((rc = run_ctx_load(&s->ctx[k], &at, &s->c, err)) == TT_OK) {
            s->ctx[k].sc = s->sc; /* `at` goes out of scope; every task sets its own */
            s->ctx_loaded[k] = 1;
        }
    }
    if (rc == TT_OK && facts_of(&s->own.tr[0]).blocks == 0)
        rc = tt_error_set(err, TT_EINPUT, "%s: the workload (%s) has no transformer blocks: the layout search "
                          "lays out tensor, pipeline and context parallelism over a transformer's blocks",
                          s->sc->path, s->own.model);
    return rc;
}

/* Screens every candidate; fills r's counts and *order (feasible ones, fastest first). */
static int screen_all(search *s, layout_search_result *r, by_time **order, tt_error *err)
{
    screen_out *res = calloc(s->n_cand + 1, sizeof *res);
    *order = calloc(s->n_cand + 1, sizeof **order);
    if (!res || !*order) {
        free(res);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    s->stage = 0;
    int rc = parallel_run(s->n_cand, s->opt->jobs, sizeof *res, screen_task, progress_cb, s, res, err);
    r->screened = s->n_cand;
    for (size_t i = 0; rc == TT_OK && i < s->n_cand; i++) {
        if (res[i].rc == TT_OK) {
            (*order)[r->feasible++] = (by_time){res[i].step_s, i};
        } else if (res[i].rc == TT_EINPUT) {
            r->pruned[res[i].prune]++;
            if (res[i].prune == LS_PRUNE_OTHER && !r->other[0])
                snprintf(r->other, sizeof r->other, "%s", res[i].msg);
        } else {
            rc = tt_error_set(err, res[i].rc, "%s", res[i].msg);
        }
    }
    free(res);
    if (rc == TT_OK)
        qsort(*order, r->feasible, sizeof **order, by_time_cmp);
    return rc;
}

/* This process's simulations: all, or its shard's; `jobs` at a time. */
static int run_simulations(sim_ctx *q, point_outcome *res, tt_error *err)
{
    size_t n = q->n_pick + 1, m = n > q->first ? (n - q->first + q->step - 1) / q->step : 0;
    point_outcome *mine = calloc(m + 1, sizeof *mine);
    if (!mine)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    q->s->stage = 1;
    int rc = parallel_run(m, q->s->opt->jobs, sizeof *mine, sim_task, sim_progress, q, mine, err);
    for (size_t j = 0; rc == TT_OK && j < m; j++)
        res[q->first + j * q->step] = mine[j];
    free(mine);
    return rc;
}

/* A merge's records of every simulation: each must be in one of its shards. */
static int take_records(const sim_ctx *q, point_outcome *res, tt_error *err)
{
    const layout_search_options *o = q->s->opt;
    size_t n = q->n_pick + 1;
    int rc = o->take_records(o->records_ctx, n, res, err);
    for (size_t k = 0; rc == TT_OK && k < n; k++) {
        if (res[k].present)
            continue;
        char what[256] = "the scenario's own layout";
        if (k < q->n_pick)
            layout_search_words(&q->s->cand[q->pick[k]], what, sizeof what);
        rc = tt_error_set(err, TT_EINPUT, "%s: simulation %zu of %zu (%s) is in none of the shards given; run its "
                          "shard (--shard I/N with I = %zu mod N, the same options) and merge every shard",
                          q->s->sc->path, k, n, what, k);
    }
    return rc;
}

/* The simulations into r's rows and the scenario's own row. */
static int fill_rows(const search *s, layout_search_result *r, const by_time *order, const sim_ctx *q,
                     const point_outcome *res, tt_error *err)
{
    size_t n = q->n_pick;
    r->rows = calloc(n + 1, sizeof *r->rows);
    if (!r->rows)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    for (size_t i = 0; i <= n; i++)
        if (res[i].rc)
            return tt_error_set(err, res[i].rc, "%s", res[i].err.msg);
    for (size_t i = 0; i < n; i++)
        r->rows[r->n_rows++] = (ls_row){.l = s->cand[q->pick[i]], .index = q->pick[i], .screen_s = order[i].t,
                                        .pt = res[i].pt};
    r->own.pt = res[n].pt;
    r->own.l = own_layout(s, &res[n].pt);
    r->own.screen_s = NAN;
    r->own.index = (size_t)-1;
    for (size_t i = 0; i < s->n_cand; i++)
        if (same_layout(&s->cand[i], &r->own.l)) {
            r->own_in_space = 1;
            r->own.index = i;
        }
    for (size_t k = 0; k < r->feasible && r->own_in_space; k++)
        if (order[k].i == r->own.index) {
            r->own_screen_rank = (double)(k + 1);
            r->own.screen_s = order[k].t;
        }
    qsort(r->rows, r->n_rows, sizeof *r->rows, row_cmp);
    return TT_OK;
}

/* Simulates the fastest screened and the scenario's own layout into r's
 * rows: here (all, or a shard's, whose records go to r->records), or taken
 * from a merge's shards. */
static int simulate(search *s, layout_search_result *r, const by_time *order, tt_error *err)
{
    const layout_search_options *o = s->opt;
    int sharded = o->shards > 0;
    size_t n = r->feasible < (size_t)o->simulate ? r->feasible : (size_t)o->simulate;
    size_t *pick = calloc(n + 1, sizeof *pick);
    point_outcome *res = calloc(n + 1, sizeof *res);
    if (!pick || !res) {
        free(pick);
        free(res);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        pick[i] = order[i].i;
    sim_ctx q = {s, pick, n, sharded ? (size_t)o->shard : 0, sharded ? (size_t)o->shards : 1};
    int rc = o->take_records ? take_records(&q, res, err) : run_simulations(&q, res, err);
    if (rc == TT_OK && sharded) { /* a shard: its records go to the merge */
        r->records = res;
        r->n_records = n + 1;
        res = NULL;
    } else if (rc == TT_OK) {
        rc = fill_rows(s, r, order, &q, res, err);
    }
    free(pick);
    free(res);
    return rc;
}

/* The links each communicator of w's layout crosses (ls_comm). */
static int row_comms(const search *s, ls_row *w, tt_error *err)
{
    const platform *p = s->c.p;
    int degree[LAYOUT_DIMS] = {0}, ranks = platform_ranks(p);
    degree[LAYOUT_TENSOR] = w->l.tensor;
    degree[LAYOUT_CONTEXT] = w->l.context;
    degree[LAYOUT_EXPERT] = w->l.expert;
    degree[LAYOUT_PIPELINE] = w->l.pipeline;
    layout lay;
    tt_error ignored = {0};
    if (layout_make_experts(degree, s->sc->expert_tensor, s->sc->layout_order, ranks, "$.parallel", &lay, &ignored))
        return TT_OK; /* the scenario's own layout when it could not run: no communicators to show */
    int *members = malloc(sizeof *members * (size_t)ranks), *stamp = calloc((size_t)ranks, sizeof *stamp);
    if (!members || !stamp) {
        free(members);
        free(stamp);
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    }
    const unsigned dims[LS_COMMS] = {LAYOUT_DIM(LAYOUT_TENSOR), LAYOUT_DIM(LAYOUT_CONTEXT), lay.expert_dims,
                                     LAYOUT_DIM(LAYOUT_DATA) | LAYOUT_DIM(LAYOUT_CONTEXT), LAYOUT_DIM(LAYOUT_PIPELINE)};
    for (int k = 0; k < LS_COMMS; k++) {
        ls_comm *c = &w->comm[k];
        memset(c, 0, sizeof *c);
        c->size = dims[k] ? layout_group_size(&lay, dims[k]) : 1;
        if (c->size <= 1)
            continue;
        layout_group(&lay, dims[k], 0, members);
        for (int i = 0; i < c->size; i++) { /* stamp k + 1: a node counted for this communicator */
            int *seen = &stamp[rank_node(p, members[i])];
            c->nodes += *seen != k + 1;
            *seen = k + 1;
        }
        c->nics = c->nodes > 1 ? group_nics(p, members, c->size) : 0;
        for (int i = 1; i < c->size && !c->node_link[0]; i++) {
            const char *cls = NULL;
            if (rank_node(p, members[i]) == rank_node(p, members[0]) && platform_rank_links(p, members[0], members[i], &cls) > 0 &&
                cls)
                snprintf(c->node_link, sizeof c->node_link, "%s", cls);
        }
        double lat_s;
        ring_rate(p, members, c->size, &lat_s, &c->ring_Bps);
        c->ring_Bps = isfinite(c->ring_Bps) ? c->ring_Bps : 0;
    }
    free(members);
    free(stamp);
    return TT_OK;
}

static void screen_error(layout_search_result *r)
{
    double sum = 0, bias = 0;
    for (size_t i = 0; i < r->n_rows; i++) {
        const ls_row *w = &r->rows[i];
        if (w->pt.error[0] || !(w->pt.step.time_s > 0))
            continue;
        double e = w->screen_s / w->pt.step.time_s - 1;
        sum += fabs(e);
        bias += e;
        r->screen_err_max = fmax(r->screen_err_max, fabs(e));
        r->n_error++;
    }
    r->screen_err_mean = r->n_error ? sum / r->n_error : 0;
    r->screen_err_bias = r->n_error ? bias / r->n_error : 0;
}

int layout_search_run(const scenario *sc, const layout_search_options *opt, layout_search_result *out,
                      tt_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_scenario(sc, opt, err);
    if (rc)
        return rc;
    search s = {.sc = sc, .opt = opt};
    json_t *attention = json_object_get(json_object_get(sc->doc, "workload"), "attention");
    s.workload_fused = json_is_string(attention) && strcmp(json_string_value(attention), "fused") == 0;
    if ((rc = cluster_open(sc, sc->nodes, &s.c, err)) == TT_OK) {
        out->ranks = platform_ranks(s.c.p);
        out->ranks_per_node = platform_ranks_per_node(s.c.p);
        out->device_mem_bytes = platform_device(s.c.p, 0)->mem_bytes;
        out->has_target = sc->conv != CONV_STEPS && sc->conv != CONV_NONE;
        rc = load_contexts(&s, err);
    }
    by_time *order = NULL;
    if (rc == TT_OK)
        rc = enumerate(&s, out, err);
    if (rc == TT_OK)
        rc = screen_all(&s, out, &order, err);
    if (rc == TT_OK && out->feasible == 0)
        rc = tt_error_set(err, TT_EINPUT, "%s: none of the %zu layouts screened fits in the %.3g GB of a device "
                          "(%zu by their parameters, gradients and optimizer state alone, %zu with their "
                          "activations, %zu otherwise%s%s); use more nodes or a device with more memory",
                          sc->path, out->screened, out->device_mem_bytes / 1e9, out->pruned[LS_PRUNE_STATE],
                          out->pruned[LS_PRUNE_ACTIVATIONS], out->pruned[LS_PRUNE_OTHER],
                          out->other[0] ? ": " : "", out->other);
    if (rc == TT_OK)
        rc = simulate(&s, out, order, err);
    int rows = rc == TT_OK && !out->records; /* a shard has records, no rows */
    if (rows)
        screen_error(out);
    for (size_t i = 0; rows && rc == TT_OK && i < out->n_rows; i++)
        rc = row_comms(&s, &out->rows[i], err);
    if (rows && rc == TT_OK)
        rc = row_comms(&s, &out->own, err);
    free(order);
    free(s.cand);
    for (size_t k = 0; k < N_MICRO; k++)
        if (s.ctx_loaded[k])
            run_ctx_free(&s.ctx[k]);
    if (s.own_loaded)
        run_ctx_free(&s.own);
    cluster_close(&s.c);
    return rc;
}

void layout_search_free(layout_search_result *r)
{
    free(r->rows);
    free(r->records);
    memset(r, 0, sizeof *r);
}

const char *layout_search_comm_name(ls_comm_kind k)
{
    static const char *const names[LS_COMMS] = {"tp", "cp", "ep", "dp", "pp"};
    return k >= 0 && k < LS_COMMS ? names[k] : "?";
}

void layout_search_words(const ls_layout *l, char *buf, size_t n)
{
    int k = snprintf(buf, n, "tp %d%s pp %d", l->tensor, l->sequence_parallel ? " (sp)" : "", l->pipeline);
    if (l->virtual_stages > 1)
        k += snprintf(buf + k, n - (size_t)k, " x %d chunks", l->virtual_stages);
    if (l->first_stage_layers)
        k += snprintf(buf + k, n - (size_t)k, " (ends %d+%d)", l->first_stage_layers, l->last_stage_layers);
    snprintf(buf + k, n - (size_t)k, " cp %d ep %d dp %d mb %d zero %d recompute %s", l->context, l->expert,
             l->data, l->micro_batch, l->zero, layout_search_recompute_name(l->recompute));
}

const char *layout_search_recompute_name(int recompute)
{
    static const char *const names[] = {"none", "selective", "full"};
    return recompute >= 0 && recompute <= LS_RECOMPUTE_FULL ? names[recompute] : "?";
}

int layout_search_sets(const ls_layout *l, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "--set parallel.tensor=%d --set parallel.pipeline=%d --set parallel.context=%d "
                     "--set parallel.data=%d --set parallel.virtual_stages=%d --set parallel.zero=%d "
                     "--set parallel.recompute=%s --set parallel.sequence_parallel=%s "
                     "--set workload.micro_batch=%d --set workload.global_batch=%ld",
                     l->tensor, l->pipeline, l->context, l->data, l->virtual_stages, l->zero,
                     layout_search_recompute_name(l->recompute), l->sequence_parallel ? "true" : "false",
                     l->micro_batch, l->global_batch);
    if (l->expert > 1 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " --set parallel.expert=%d", l->expert);
    /* an even split stated as ends of the others' share, so a scenario's own ends do not stay */
    int first = l->first_stage_layers ? l->first_stage_layers : l->stage_layers;
    int last = l->first_stage_layers ? l->last_stage_layers : l->stage_layers;
    if (l->pipeline * l->virtual_stages > 1 && n >= 0 && (size_t)n < len)
        n += snprintf(buf + n, len - (size_t)n, " --set parallel.first_stage_layers=%d --set "
                      "parallel.last_stage_layers=%d", first, last);
    return n;
}
