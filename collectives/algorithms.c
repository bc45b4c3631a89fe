/* algorithms.c: every collective algorithm as a list of stages of parts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/schedule_impl.h"

static const coll_algo ALGOS[OP_COUNT][10] = {
    [OP_ALLREDUCE] = {ALGO_RING, ALGO_RHD, ALGO_RD, ALGO_BINOMIAL, ALGO_TREE, ALGO_DBTREE,
                      ALGO_TORUS2D, ALGO_TORUS, ALGO_HIER, ALGO_DIRECT},
    [OP_REDUCE_SCATTER] = {ALGO_RING, ALGO_RHD, ALGO_BINOMIAL, ALGO_DIRECT},
    [OP_ALLGATHER] = {ALGO_RING, ALGO_RD, ALGO_BINOMIAL, ALGO_DIRECT},
    [OP_BROADCAST] = {ALGO_RING, ALGO_TREE, ALGO_BINOMIAL},
    [OP_REDUCE] = {ALGO_RING, ALGO_TREE, ALGO_BINOMIAL},
    [OP_ALLTOALL] = {ALGO_PAIRWISE, ALGO_BRUCK, ALGO_DIRECT, ALGO_HIER},
};

int coll_algos_for(coll_op op, coll_algo *out, int max)
{
    int n = 0;
    for (int i = 0; i < 10 && ALGOS[op][i] != ALGO_AUTO && n < max; i++)
        out[n++] = ALGOS[op][i];
    return n;
}

int coll_torus_pods(const coll_params *p)
{
    return p->pods > 1 ? p->pods : 1;
}

/* The ranks of one pod (all of them without pods). */
static int pod_ranks(const coll_params *p)
{
    return p->ranks / coll_torus_pods(p);
}

/* Ranks per row of a pod's 2D torus: the platform's row, else the divisor of
 * the pod's ranks nearest their square root. */
int coll_torus_dim_x(const coll_params *p)
{
    int n = pod_ranks(p);
    if (p->dim_x > 0)
        return p->dim_x;
    if (p->dims[0] > 0 && n % p->dims[0] == 0)
        return p->dims[0];
    int a = (int)sqrt((double)n);
    while (a > 1 && n % a)
        a--;
    return a < 1 ? 1 : a;
}

int coll_torus_dims(const coll_params *p, int dims[3])
{
    int nd = 0;
    if (p->algo == ALGO_TORUS)
        while (nd < 3 && p->dims[nd] > 0) {
            dims[nd] = p->dims[nd];
            nd++;
        }
    if (nd == 0) {
        dims[0] = coll_torus_dim_x(p);
        dims[1] = pod_ranks(p) / dims[0];
        nd = 2;
    }
    for (int d = nd; d < 3; d++)
        dims[d] = 1;
    return nd;
}

static int per_node(const coll_params *p)
{
    return p->ranks_per_node > 0 ? p->ranks_per_node : 1;
}

/* hier allreduce: inter-node rings per node (0 = one per rank of the node). */
static int nics_per_node(const coll_params *p)
{
    return p->nics_per_node > 0 ? p->nics_per_node : per_node(p);
}

/* ALGO_PIPELINE: an allreduce over whole nodes of at most 16 ranks. */
static int pipeline_applies(const coll_params *p, const char **why)
{
    int g = p->ranks_per_node > 0 ? p->ranks_per_node : 1;
    if (p->op != OP_ALLREDUCE) {
        *why = "NCCL's pipelined trees, CollNet and NVLS run allreduce here";
        return 0;
    }
    if (g > 16 || p->ranks % g) {
        *why = "a pipeline runs over whole nodes of at most 16 ranks";
        return 0;
    }
    if (p->pipe_inter == PIPE_NONE && p->ranks != g) {
        *why = "a pipeline across nodes needs a tree or SHARP between them";
        return 0;
    }
    return 1;
}

int coll_algo_applies(const coll_params *p, const char **why)
{
    if (p->algo == ALGO_PIPELINE)
        return pipeline_applies(p, why);
    int n = p->ranks, known = 0;
    coll_algo list[12];
    int m = coll_algos_for(p->op, list, 12);
    for (int i = 0; i < m; i++)
        known |= list[i] == p->algo;
    if (!known) {
        *why = "this algorithm does not implement this operation";
        return 0;
    }
    if (n < 1) {
        *why = "a collective needs at least one rank";
        return 0;
    }
    int pow2 = (n & (n - 1)) == 0;
    if (!pow2 && ((p->op == OP_REDUCE_SCATTER && p->algo == ALGO_RHD) ||
                  (p->op == OP_ALLGATHER && p->algo == ALGO_RD))) {
        *why = "recursive halving/doubling reduce-scatter and allgather need a power-of-two rank count";
        return 0;
    }
    int torus = p->algo == ALGO_TORUS2D || p->algo == ALGO_TORUS;
    if (torus && (p->pods < 0 || n % coll_torus_pods(p))) {
        *why = "the pods do not divide the rank count";
        return 0;
    }
    if (p->algo == ALGO_TORUS2D && pod_ranks(p) % coll_torus_dim_x(p)) {
        *why = "the torus row length does not divide the rank count";
        return 0;
    }
    int dims[3];
    if (p->algo == ALGO_TORUS && (coll_torus_dims(p, dims), dims[0] * dims[1] * dims[2] * coll_torus_pods(p) != n)) {
        *why = "the torus grid does not hold the rank count (a torus platform sets the grid)";
        return 0;
    }
    if (p->pods > 1 && !torus) {
        *why = "pods are the torus algorithms' (their phase over the data-centre network)";
        return 0;
    }
    if (p->algo == ALGO_HIER && n % per_node(p)) {
        *why = "ranks per node does not divide the rank count";
        return 0;
    }
    if (p->algo == ALGO_HIER && p->op == OP_ALLREDUCE && per_node(p) % nics_per_node(p)) {
        *why = "NICs per node does not divide the ranks per node";
        return 0;
    }
    int hier_allreduce = p->algo == ALGO_HIER && p->op == OP_ALLREDUCE, nodes = n / per_node(p);
    if ((p->staging != STAGING_DEVICE || (p->inter != ALGO_AUTO && p->inter != ALGO_RING)) && !hier_allreduce) {
        *why = "host staging and the inter-node algorithm are hier allreduce's (the phase between the nodes)";
        return 0;
    }
    if (p->inter != ALGO_AUTO && p->inter != ALGO_RING && p->inter != ALGO_RHD) {
        *why = "hier's inter-node phase is ring or rhd";
        return 0;
    }
    if (p->inter == ALGO_RHD && (nodes & (nodes - 1))) {
        *why = "an rhd inter-node phase needs a power-of-two node count (Goyal et al. 2017 ran the ring otherwise)";
        return 0;
    }
    return 1;
}

/* A ring, tree or other part over `groups` groups of k ranks. */
static sched_part part(part_kind kind, int groups, int k, int gstride, int istride, size_t off,
                       size_t len)
{
    sched_part p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    p.groups = groups;
    p.gsize = k;
    p.gstride = gstride;
    p.istride = istride;
    p.off = off;
    p.len = len;
    p.dir = 1;
    p.arity = 1;
    p.chunks = 1;
    return p;
}

/* Adds parts that advance in lockstep as one stage (or, for pipelined trees,
 * fill / steady / drain stages: only the steady steps are identical). */
static int add_stage(schedule *s, const sched_part *ps, int np, int identical)
{
    int first = -1;
    for (int i = 0; i < np; i++) {
        int k = sched_add_part(s, &ps[i]);
        if (k < 0)
            return -1;
        if (i == 0)
            first = k;
    }
    int steps = part_steps(&ps[0]);
    if (ps[0].kind == P_TREE_REDUCE || ps[0].kind == P_TREE_BCAST) {
        int D = part_tree_depth(&ps[0]), c = ps[0].chunks, before = s->nstages;
        int rc = c >= D && D > 0 ? sched_add_stage(s, first, np, 0, D - 1, 0) ||
                                       sched_add_stage(s, first, np, D - 1, c - D + 1, 1) ||
                                       sched_add_stage(s, first, np, c, D - 1, 0)
                                 : sched_add_stage(s, first, np, 0, steps, 0);
        for (int k = before; k < s->nstages; k++)
            s->stages[k].pipelined = 1;
        return rc;
    }
    return sched_add_stage(s, first, np, 0, steps, identical);
}

static int add1(schedule *s, sched_part p, int identical)
{
    return add_stage(s, &p, 1, identical);
}

/* Recursive halving-doubling or doubling over all n ranks, folding the
 * ranks beyond the largest power of two into their neighbours first. */
static int build_recursive(schedule *s, int n, size_t count, int halving)
{
    int p2 = 1 << ilog2_floor(n), r = n - p2;
    sched_part fold = part(P_FOLD_IN, 1, n, 0, 1, 0, count);
    fold.fold_pairs = r;
    if (r && add1(s, fold, 0))
        return -1;
    sched_part a = part(halving ? P_RH_RS : P_RD_AR, 1, p2, 0, 1, 0, count);
    a.fold = r;
    if (add1(s, a, 0))
        return -1;
    if (halving) {
        sched_part b = part(P_RD_AG, 1, p2, 0, 1, 0, count);
        b.fold = r;
        if (add1(s, b, 0))
            return -1;
    }
    fold.kind = P_FOLD_OUT;
    return r ? add1(s, fold, 0) : 0;
}

static int build_tree(schedule *s, part_kind kind, int n, size_t count, int arity, int chunks)
{
    sched_part t = part(kind, 1, n, 0, 1, 0, count);
    t.arity = arity;
    t.chunks = chunks;
    return add1(s, t, 0);
}

/* NCCL's double binary tree: each half of the vector on its own tree; the
 * second tree mirrors the first so a rank inner in one is a leaf in the other. */
static int build_dbtree(schedule *s, int n, size_t count, int chunks)
{
    size_t h = count / 2;
    for (int phase = 0; phase < 2; phase++) {
        sched_part t[2] = {part(phase ? P_TREE_BCAST : P_TREE_REDUCE, 1, n, 0, 1, 0, h),
                           part(phase ? P_TREE_BCAST : P_TREE_REDUCE, 1, n, 0, 1, h, count - h)};
        for (int i = 0; i < 2; i++) {
            t[i].arity = 2;
            t[i].chunks = chunks;
            t[i].mirror = i;
        }
        if (add_stage(s, t, 2, 0))
            return -1;
    }
    return 0;
}

/* Rings as NCCL's channels: c rings, each on its 1/c of the vector, visit the
 * nodes in turn, each node's ranks in ring j's node_order (entering at its
 * first rank, leaving at its last), or in rank order starting j g/c ranks
 * further in, so each ring crosses between nodes at another rank (and NIC).
 * rs/ag: which halves of an allreduce to build. */
static int build_channel_rings(schedule *s, const coll_params *pp, size_t count, int rs, int ag)
{
    int n = pp->ranks, g = pp->ranks_per_node > 0 ? pp->ranks_per_node : 1;
    /* Channels cut the vector in c pieces: right for allreduce, whose result
     * is the whole vector; reduce-scatter and allgather keep one ring so rank
     * r's block stays the r-th of the vector. */
    int c = pp->channels > 0 ? pp->channels : 1;
    if (g > 16 || n % g)
        g = 1;
    if (c > g) /* more rings than a node's ranks would share their node-crossing pairs */
        c = g;
    /* Reduce-scatter and allgather keep rank r's block the r-th of the vector:
     * each ring moves its piece of every block (NCCL's channels); an allreduce's
     * rings take contiguous slices, which is the same traffic. */
    int pieces = !(rs && ag);
    sched_part ps[16];
    for (int phase = 0; phase < 2; phase++) {
        if ((phase == 0 && !rs) || (phase == 1 && !ag))
            continue;
        for (int j = 0; j < c; j++) {
            size_t off, len;
            block_of(0, count, pieces ? 1 : c, pieces ? 0 : j, &off, &len);
            ps[j] = part(phase ? P_RING_AG : P_RING_RS, 1, n, 0, 1, off, len);
            ps[j].node_size = g;
            ps[j].sub = pieces ? j : 0;
            ps[j].subs = pieces ? c : 1;
            /* An order given enters a node at its first rank and leaves at its last;
             * rank order is rotated by j g/c to spread the crossings. */
            const int *o = pp->node_order[j % 8];
            int given = o[0] || o[1];
            ps[j].rot = given ? 0 : j * g / c % g;
            for (int k = 0; k < g; k++)
                ps[j].order[k] = given ? o[k] : k;
        }
        if (add_stage(s, ps, c, 1))
            return -1;
    }
    return 0;
}

/* Torus allreduce: one reduce-scatter phase per dimension (0, 1, 2), then
 * the allgathers back; in each phase the two halves of the vector ring in
 * opposite directions, so both directions of every link of that dimension
 * work. Each phase works on the nested block the earlier ones left. The
 * rings are pipelined (TPU ICI collectives, Mikami's NCCL rings): a rank
 * reduces what arrives while the rest streams in. Pods (a multi-pod slice)
 * are the last, slowest dimension: after the pod's own reduce-scatter, the
 * ranks at one place of every pod allreduce their shard in rings over the
 * pods (reduce-scatter then all-gather, over the data-centre network), and
 * the pod's all-gathers follow: TPU multislice's hierarchical allreduce. */
static int build_torus(schedule *s, int n, size_t count, const int dims[4], int nd)
{
    int act[4], na = 0;
    for (int d = 0; d < nd; d++)
        if (dims[d] > 1)
            act[na++] = d;
    size_t h = count / 2;
    for (int phase = 0; phase < 2 * na; phase++) {
        int t = phase < na ? phase : 2 * na - 1 - phase, d = act[t];
        sched_part ps[2];
        int before = s->nstages;
        for (int i = 0; i < 2; i++) {
            ps[i] = part(phase < na ? P_RING_RS : P_RING_AG, n / dims[d], dims[d], 0, 0, i ? h : 0,
                         i ? count - h : h);
            ps[i].tnd = nd;
            ps[i].tdim = d;
            memcpy(ps[i].tdims, dims, sizeof ps[i].tdims);
            ps[i].tnest = t;
            memcpy(ps[i].torder, act, sizeof ps[i].torder);
            ps[i].dir = i ? -1 : 1;
        }
        if (add_stage(s, ps, 2, 1))
            return -1;
        if (s->nstages > before)
            s->stages[s->nstages - 1].streamed = 1;
    }
    return 0;
}

/* With k NICs per node, the node's g ranks form k groups of q = g/k: each
 * group reduces onto its leader (binomial), the k leaders reduce-scatter over
 * the node (ring), every leader runs its own inter-node ring (reduce-scatter
 * then allgather) on its block, so k rings share the fabric, then back:
 * allgather among leaders, broadcast in the groups. k = g: a plain
 * intra-node ring reduce-scatter / allgather around g inter-node rings. */
static int add_staging(schedule *s, sched_part stage, int dir)
{
    if (add1(s, stage, 0))
        return -1;
    s->stages[s->nstages - 1].staging = dir;
    return 0;
}

static int build_hier_allreduce(schedule *s, const coll_params *pp, size_t count)
{
    int g = per_node(pp), k = nics_per_node(pp), nodes = pp->ranks / g, q = g / k;
    int rhd = pp->inter == ALGO_RHD, host = pp->staging == STAGING_HOST && nodes > 1;
    sched_part up = part(P_BIN_REDUCE, nodes * k, q, q, 1, 0, count);
    sched_part intra = part(P_RING_RS, nodes, k, g, q, 0, count);
    sched_part inter = part(rhd ? P_RH_RS : P_RING_RS, k, nodes, q, g, 0, count);
    /* host staging: each leader's block crosses to host memory and back (Gloo's local reduce and broadcast) */
    sched_part stage = part(P_STAGE, k, nodes, q, g, 0, count);
    inter.split = stage.split = 1;
    if ((q > 1 && add1(s, up, 0)) || (k > 1 && add1(s, intra, 1)) || (host && add_staging(s, stage, 1)))
        return -1;
    int first_inter = s->nstages;
    if (nodes > 1 && add1(s, inter, !rhd))
        return -1;
    inter.kind = rhd ? P_RD_AG : P_RING_AG;
    intra.kind = P_RING_AG;
    up.kind = P_BIN_BCAST;
    if (nodes > 1 && add1(s, inter, !rhd))
        return -1;
    if (host)
        sched_mark_host(s, first_inter);
    if ((host && add_staging(s, stage, -1)) || (k > 1 && add1(s, intra, 1)) || (q > 1 && add1(s, up, 0)))
        return -1;
    return 0;
}

static int build_alltoall(schedule *s, const coll_params *pp, size_t count)
{
    int n = pp->ranks;
    size_t b = count / (size_t)n;
    s->count = b * (size_t)n;
    s->buf_elems = 3 * s->count; /* send, receive, scratch */
    part_kind k = pp->algo == ALGO_PAIRWISE ? P_A2A_PAIRWISE
                  : pp->algo == ALGO_BRUCK  ? P_A2A_BRUCK
                  : pp->algo == ALGO_HIER   ? P_A2A_HIER
                                            : P_A2A_DIRECT;
    sched_part p = part(k, 1, n, 0, 1, 0, s->count);
    p.block = b;
    p.per_node = per_node(pp);
    /* Pairwise steps share their bytes per rank but not their pairs. */
    return add1(s, p, 0);
}

/* Pipeline chunks from the chunk size, at least one, at most one per element. */
int coll_chunks(const coll_params *p, size_t count)
{
    if (p->chunk_bytes <= 0 || p->bytes <= 0)
        return 1;
    double c = ceil(p->bytes / p->chunk_bytes);
    if (c > (double)count)
        c = (double)count;
    if (c > 1e6)
        c = 1e6;
    return c < 1 ? 1 : (int)c;
}

static int build(schedule *s, const coll_params *pp, size_t count)
{
    int n = pp->ranks, c = coll_chunks(pp, count);
    switch (pp->op) {
    case OP_ALLREDUCE:
        switch (pp->algo) {
        case ALGO_PIPELINE:
            return build_pipeline(s, pp, count);
        case ALGO_RING:
            return build_channel_rings(s, pp, count, 1, 1);
        case ALGO_RHD:
            return build_recursive(s, n, count, 1);
        case ALGO_RD:
            return build_recursive(s, n, count, 0);
        case ALGO_BINOMIAL:
            return add1(s, part(P_BIN_REDUCE, 1, n, 0, 1, 0, count), 0) ||
                   add1(s, part(P_BIN_BCAST, 1, n, 0, 1, 0, count), 0);
        case ALGO_TREE:
            return build_tree(s, P_TREE_REDUCE, n, count, 2, c) ||
                   build_tree(s, P_TREE_BCAST, n, count, 2, c);
        case ALGO_DBTREE:
            return build_dbtree(s, n, count, c);
        case ALGO_TORUS2D:
        case ALGO_TORUS: {
            int dims[4] = {1, 1, 1, 1}, nd = coll_torus_dims(pp, dims);
            if (coll_torus_pods(pp) > 1) /* the pods: one more dimension, the slowest */
                dims[nd++] = coll_torus_pods(pp);
            return build_torus(s, n, count, dims, nd);
        }
        case ALGO_HIER:
            return build_hier_allreduce(s, pp, count);
        default:
            return add1(s, part(P_DIRECT_RS, 1, n, 0, 1, 0, count), 0) ||
                   add1(s, part(P_DIRECT_AG, 1, n, 0, 1, 0, count), 0);
        }
    case OP_REDUCE_SCATTER:
        switch (pp->algo) {
        case ALGO_RING:
            return build_channel_rings(s, pp, count, 1, 0);
        case ALGO_RHD:
            return add1(s, part(P_RH_RS, 1, n, 0, 1, 0, count), 0);
        case ALGO_BINOMIAL:
            return add1(s, part(P_BIN_REDUCE, 1, n, 0, 1, 0, count), 0) ||
                   add1(s, part(P_BIN_SCATTER, 1, n, 0, 1, 0, count), 0);
        default:
            return add1(s, part(P_DIRECT_RS, 1, n, 0, 1, 0, count), 0);
        }
    case OP_ALLGATHER:
        switch (pp->algo) {
        case ALGO_RING:
            return build_channel_rings(s, pp, count, 0, 1);
        case ALGO_RD:
            return add1(s, part(P_RD_AG, 1, n, 0, 1, 0, count), 0);
        case ALGO_BINOMIAL:
            return add1(s, part(P_BIN_GATHER, 1, n, 0, 1, 0, count), 0) ||
                   add1(s, part(P_BIN_BCAST, 1, n, 0, 1, 0, count), 0);
        default:
            return add1(s, part(P_DIRECT_AG, 1, n, 0, 1, 0, count), 0);
        }
    case OP_BROADCAST:
    case OP_REDUCE: {
        int red = pp->op == OP_REDUCE;
        if (pp->algo == ALGO_BINOMIAL)
            return add1(s, part(red ? P_BIN_REDUCE : P_BIN_BCAST, 1, n, 0, 1, 0, count), 0);
        return build_tree(s, red ? P_TREE_REDUCE : P_TREE_BCAST, n, count,
                          pp->algo == ALGO_TREE ? 2 : 1, c);
    }
    default:
        return build_alltoall(s, pp, count);
    }
}

int schedule_build(const coll_params *params, size_t count, double unit_bytes, schedule *s,
                   tt_error *err)
{
    memset(s, 0, sizeof *s);
    s->params = *params;
    s->ranks = params->ranks;
    s->count = count;
    s->buf_elems = count;
    s->unit_bytes = unit_bytes;
    const char *why = NULL;
    if (params->algo == ALGO_AUTO || params->algo == ALGO_NCCL)
        return tt_error_set(err, TT_EINPUT, "resolve '%s' to an algorithm before building a schedule",
                            coll_algo_name(params->algo));
    if (!coll_algo_applies(params, &why))
        return tt_error_set(err, TT_EINPUT, "%s with %s on %d ranks: %s", coll_op_name(params->op),
                            coll_algo_name(params->algo), params->ranks, why);
    if (params->ranks > 1 && build(s, params, count)) {
        schedule_free(s);
        return tt_error_set(err, TT_EINTERNAL, "out of memory building a %d-rank schedule", params->ranks);
    }
    return TT_OK;
}

size_t gen_alltoall(const sched_part *p, int t, xfer *out, size_t k)
{
    int n = p->gsize;
    size_t b = p->block, nb = (size_t)n * b, L = (size_t)ilog2_ceil(n);
#define EMIT(s_, d_, so_, do_, len_) (out[k++] = (xfer){(s_), (d_), (so_), (do_), (len_), XFER_COPY})
    if (b == 0)
        return k;
    for (int i = 0; i < n; i++) {
        switch (p->kind) {
        case P_A2A_PAIRWISE: {
            int j = (i + t + 1) % n;
            if (t == 0)
                EMIT(i, i, (size_t)i * b, nb + (size_t)i * b, b);
            EMIT(i, j, (size_t)j * b, nb + (size_t)i * b, b);
            break;
        }
        case P_A2A_DIRECT:
            for (int j = 0; j < n; j++)
                EMIT(i, j, (size_t)j * b, nb + (size_t)i * b, b);
            break;
        case P_A2A_BRUCK:
            /* Rotate so slot j holds the block for rank i+j; step k moves the
             * slots with bit k set by 2^k; slot j then came from rank i-j. */
            for (int j = 0; j < n; j++) {
                if (t == 0)
                    EMIT(i, i, (size_t)((i + j) % n) * b, 2 * nb + (size_t)j * b, b);
                else if ((size_t)t == L + 1)
                    EMIT(i, i, 2 * nb + (size_t)j * b, nb + (size_t)((i - j + n) % n) * b, b);
                else if (j & (1 << (t - 1)))
                    EMIT(i, (i + (1 << (t - 1))) % n, 2 * nb + (size_t)j * b, 2 * nb + (size_t)j * b, b);
            }
            break;
        default: {
            /* Two levels: local rank j first collects what its node sends to
             * local rank j of every node, then one message per remote node. */
            int g = p->per_node, nodes = n / g, a = i / g, li = i % g;
            if (t == 0) {
                for (int j = 0; j < g; j++)
                    for (int c = 0; c < nodes; c++)
                        EMIT(i, a * g + j, (size_t)(c * g + j) * b, 2 * nb + (size_t)(c * g + li) * b, b);
            } else {
                for (int c = 0; c < nodes; c++)
                    EMIT(i, c * g + li, 2 * nb + (size_t)c * g * b, nb + (size_t)a * g * b, (size_t)g * b);
            }
        }
        }
    }
#undef EMIT
    return k;
}

/* Mirrors gen_alltoall: the shape of its steps without generating them. */
static step_pattern alltoall_pattern(const sched_part *p, int t, size_t *flow_elems)
{
    int n = p->gsize, g = p->per_node, nodes = n / g, L = ilog2_ceil(n);
    size_t b = p->block;
    if (b == 0 || n < 2)
        return STEP_LOCAL;
    switch (p->kind) {
    case P_A2A_PAIRWISE:
        *flow_elems = b;
        return STEP_PERMUTATION;
    case P_A2A_DIRECT:
        *flow_elems = b;
        return STEP_ALL_PAIRS;
    case P_A2A_BRUCK: {
        if (t == 0 || t == L + 1)
            return STEP_LOCAL;
        size_t moved = 0; /* slots j with bit t-1 set, the same for every rank */
        for (int j = 0; j < n; j++)
            moved += (size_t)((j >> (t - 1)) & 1);
        *flow_elems = moved * b;
        return STEP_PERMUTATION;
    }
    case P_A2A_HIER:
        /* Step 0 within nodes, step 1 across them: all pairs when the other level is trivial. */
        if ((t == 0 && g == 1) || (t == 1 && nodes == 1))
            return STEP_LOCAL;
        if ((t == 0 && nodes == 1) || (t == 1 && g == 1)) {
            *flow_elems = b;
            return STEP_ALL_PAIRS;
        }
        return STEP_GENERAL;
    default:
        return STEP_GENERAL;
    }
}

step_pattern schedule_step_pattern(const schedule *s, int stage, int step, double *flow_bytes,
                                   double *reduce_bytes)
{
    const sched_stage *st = &s->stages[stage];
    const sched_part *p = &s->parts[st->first_part];
    size_t elems = 0;
    *reduce_bytes = 0;
    if (st->parts != 1 || s->replicas > 1) /* copies make pairs within each, not all pairs */
        return STEP_GENERAL;
    if (p->kind == P_DIRECT_RS || p->kind == P_DIRECT_AG) {
        /* Every pair exchanges a block: all pairs when the blocks are equal. */
        if (p->groups != 1 || p->gsize < 2 || p->len % (size_t)p->gsize || p->len == 0)
            return STEP_GENERAL;
        *flow_bytes = (double)(p->len / (size_t)p->gsize) * s->unit_bytes;
        if (p->kind == P_DIRECT_RS)
            *reduce_bytes = (p->gsize - 1) * *flow_bytes;
        return STEP_ALL_PAIRS;
    }
    if ((p->kind == P_RH_RS || p->kind == P_RD_AG || p->kind == P_RD_AR) && p->groups == 1 && !p->fold &&
        p->gsize == s->ranks && p->len % (size_t)p->gsize == 0 && p->len > 0) {
        /* Partners differ in one bit: a permutation, every rank moving as many equal blocks. */
        int t = st->first_step + step, k = p->gsize;
        size_t blocks = p->kind == P_RH_RS ? (size_t)(k >> (t + 1)) : p->kind == P_RD_AG ? (size_t)1 << t : (size_t)k;
        *flow_bytes = (double)(blocks * (p->len / (size_t)k)) * s->unit_bytes;
        if (p->kind != P_RD_AG)
            *reduce_bytes = *flow_bytes;
        return STEP_PERMUTATION;
    }
    if (s->params.op != OP_ALLTOALL)
        return STEP_GENERAL;
    step_pattern k = alltoall_pattern(p, st->first_step + step, &elems);
    *flow_bytes = (double)elems * s->unit_bytes;
    return k;
}
