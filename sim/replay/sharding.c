#include "sim/replay/sharding.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/closed_form.h"
#include "trainer/synth.h"

const char *const SHARDING_NAMES[] = {"table_wise", "row_wise", "column_wise", "data_parallel",
                                      "hybrid",     "host",     "auto",        NULL};
const char *const EMBEDDING_OPTIMIZER_NAMES[] = {"sgd", "rowwise_adagrad", NULL};
const char *const EMBEDDING_IDS_NAMES[] = {"reader", "alltoall", NULL};

/* TorchRec's input distribution (torchrec/distributed/dist_data.py
 * KJTAllToAll; sharding/tw_, cw_, rw_sharding.py) sends each shard owner the
 * KeyedJaggedTensor of its tables: an int64 id per lookup and an int32
 * length per sample and table (U: the Criteo pipelines' dtypes). Column
 * shards of a table each get all its ids; row-wise buckets send each id to
 * its one owner but every owner all the lengths. */
#define KJT_ID_BYTES 8.0
#define KJT_LENGTH_BYTES 4.0

/* What one rank does with a part of one table in a micro-step. */
typedef struct part_work {
    double lookups, unique, pooled; /* rows read, distinct rows updated, pooled vectors written */
    double cols;                    /* columns of each row this rank holds */
} part_work;

/* `samples` samples look up table t; the rank holds rows [lo, hi) and
 * `cols` columns of them, and writes `pooled` vectors. */
static part_work part_of(const workload_table *t, double zipf_s, double samples, double lo, double hi,
                         double cols, double pooled)
{
    long n = (long)t->rows;
    double draws = samples * t->lookups;
    double share = synth_zipf_cdf(hi, n, zipf_s) - synth_zipf_cdf(lo, n, zipf_s);
    double unique = synth_zipf_unique(n, zipf_s, draws, (long)hi) - synth_zipf_unique(n, zipf_s, draws, (long)lo);
    return (part_work){draws * share, unique, pooled, cols};
}

/* Forward reads every looked-up row and writes the pooled vectors; backward
 * reads the pooled gradients, expands them per lookup, coalesces them per
 * distinct row and updates those rows in place (fused, as TorchRec's FBGEMM
 * kernels do: no dense gradient), with row-wise Adagrad's one fp32 word per
 * row and an fp32 master row when asked for. */
static void add_work(sharding_cost *c, const part_work *w, const sharding_options *o)
{
    double e = o->table_dtype_bytes, a = o->act_dtype_bytes, d = w->cols;
    double master = o->master_weights && e < 4 ? 8 : 0;
    double state = o->optimizer == EMB_ROWWISE_ADAGRAD ? 8 : 0;
    c->lookups += w->lookups;
    c->unique_rows += w->unique;
    c->lookup_bytes += w->lookups * d * e + w->pooled * d * a;
    c->lookup_flops += w->lookups * d;
    c->update_bytes += w->pooled * d * a + w->lookups * d * a + w->unique * (d * (a + 2 * e + master) + state);
    c->update_flops += w->lookups * d + w->unique * d * (o->optimizer == EMB_ROWWISE_ADAGRAD ? 4 : 2);
    c->gradient_bytes += w->unique * d * a;
}

/* Memory of rows x cols of a table on one rank: the weights, an fp32 master
 * copy when asked, row-wise Adagrad's word per row. */
static void add_memory(sharding_cost *c, double rows, double cols, const sharding_options *o)
{
    c->params_bytes += rows * cols * (o->table_dtype_bytes + (o->master_weights && o->table_dtype_bytes < 4 ? 4 : 0));
    c->optimizer_bytes += o->optimizer == EMB_ROWWISE_ADAGRAD ? rows * 4 : 0;
}

/* HugeCTR's hybrid embedding (HugeCTR/src/embeddings/hybrid_embedding/, the
 * v1.0 MLPerf DLRM) holds ids as uint32 and looks each one up at a random
 * place of a per-category table (category_frequent_index,
 * category_location): a 32-byte DRAM sector per look-up of a cold id; a hot
 * id's entry stays in L2 (U: the hot set's entries, 8 B a row, fit it). */
#define HYBRID_ID_BYTES 4.0
#define SECTOR_BYTES 32.0

/* The ids' input alltoall: its latency and its bytes per rank. */
static double alltoall_s(const sharding_options *o, double bytes)
{
    return o->alltoall_latency_s + bytes * o->alltoall_s_per_byte;
}

static int multi_node(const sharding_options *o)
{
    return o->ranks > o->node_ranks;
}

/* How often a category must occur in a global batch to be frequent
 * (calibration_data.cu, calculate_threshold, per batch of the statistics'
 * iterations). One node: often enough that it would repeat within one GPU's
 * M samples with probability p_dup_max, G sqrt(2 p / (M (M - 1))). Across N
 * nodes: the count at which allreducing its gradient costs what sending its
 * vectors does, N^2 / (N - 1) x the all-to-all over the all-reduce bandwidth
 * x efficiency_bandwidth_ratio. */
static double frequent_count(const sharding_options *o)
{
    const hybrid_params *h = &o->hybrid;
    double M = o->micro_batch, G = M * o->ranks;
    if (!multi_node(o))
        return M > 1 ? G * sqrt(2 * h->p_dup_max / (M * (M - 1))) : G;
    double N = (double)o->ranks / o->node_ranks;
    return N * N / (N - 1) * h->all_to_all_Bps / h->all_reduce_Bps * h->efficiency_bandwidth_ratio;
}

/* The frequent rows of table t: those whose expected count in a global batch
 * reaches the threshold (the ids' probability falls with their rank, so they
 * are the head), found by bisection. */
static double frequent_rows_of(const workload_table *t, const sharding_options *o, double count)
{
    long n = (long)t->rows, lo = 0, hi = n;
    double draws = (double)o->micro_batch * o->ranks * t->lookups;
    while (lo < hi) { /* the first row below the threshold */
        long mid = lo + (hi - lo) / 2;
        double p = synth_zipf_cdf((double)mid + 1, n, o->zipf_s) - synth_zipf_cdf((double)mid, n, o->zipf_s);
        if (draws * p >= count)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (double)lo;
}

/* One kernel of the index handling: its bytes at the device's memory
 * bandwidth, never faster than the host issues it. */
static void add_kernel(sharding_cost *c, const sharding_options *o, double bytes)
{
    c->index_bytes += bytes;
    c->index_kernels += 1;
    c->index_s += fmax(bytes / o->mem_Bps, o->dispatch_s);
}

/* cub::DeviceSelect: an init kernel, then one sweep over the input. */
static void add_select(sharding_cost *c, const sharding_options *o, double bytes)
{
    add_kernel(c, o, 0);
    add_kernel(c, o, bytes);
}

/* What HugeCTR's hybrid embedding does with a micro-step's ids before any
 * lookup, on every rank (data.cu, hybrid_indices.cu compute_indices): ids =
 * the global batch's lookups, local = this rank's samples' lookups, hot of
 * them frequent; frequent = hot rows. The data reader runs them ahead when
 * the indices are precomputed (IndexProcessor): their work, not their time. */
static void hybrid_index_of(const sharding_options *o, double ids, double local, double hot, double frequent,
                            sharding_cost *c)
{
    double I = HYBRID_ID_BYTES, R = o->ranks, gather = local > 0 ? SECTOR_BYTES * (1 - hot / local) : 0;
    double waited_s = c->index_s;
    add_kernel(c, o, ids * 2 * I);                                /* data_to_unique_categories: table offsets */
    add_select(c, o, local * (I + gather) + hot * I);             /* calculate_frequent_sample_indices */
    add_select(c, o, ids * (I + gather) + (ids - hot * R) / R * I); /* calculate_model_indices */
    add_kernel(c, o, 0);                                          /* its offsets_kernel */
    if (multi_node(o)) {
        add_kernel(c, o, local * (I + gather + R));               /* calculate_network_indices_mask */
        add_select(c, o, local * R + (local - hot) * I);          /* DeviceSelect::Flagged over the mask */
        add_kernel(c, o, 0);                                      /* offsets_kernel */
        add_kernel(c, o, (local - hot) * 2 * I);                  /* modulo_kernel */
    } else {
        add_kernel(c, o, 2 * frequent);                           /* the cache masks zeroed */
        add_kernel(c, o, ids * (I + gather));                     /* fused_cache_masks */
        add_select(c, o, frequent * (1 + I));                     /* network cache indices */
        add_kernel(c, o, 0);                                      /* offsets_kernel */
        add_select(c, o, frequent * (1 + I));                     /* model cache indices */
        add_kernel(c, o, 0);                                      /* offsets_kernel */
        add_kernel(c, o, 0);                                      /* mask_indices_to_buffer_indices */
    }
    if (o->hybrid.precomputed_indices)
        c->index_s = waited_s;
}

/* The frequent set's own kernels each step (frequent_embedding.cu): across
 * nodes its fp32 gradients zeroed, reduced, cast for the allreduce and the
 * whole set updated (elems = its elements); on one node forward_model,
 * reset_relevant_gradients, frequent_local_reduce and update_model_direct,
 * whose traffic is the lookups' and updates'. */
static void frequent_kernels_of(const sharding_options *o, double elems, sharding_cost *c)
{
    if (elems <= 0)
        return;
    if (!multi_node(o)) {
        for (int k = 0; k < 4; k++)
            add_kernel(c, o, 0);
        return;
    }
    add_kernel(c, o, elems * 4); /* the fp32 gradients zeroed */
    add_kernel(c, o, 0);         /* frequent_local_reduce: its traffic is the update's */
    if (o->grad_dtype_bytes < 4)
        add_kernel(c, o, elems * (4 + o->grad_dtype_bytes)); /* convert_array */
    add_kernel(c, o, elems * (o->grad_dtype_bytes + 8));     /* sgd_global_update */
}

/* HugeCTR's hybrid embedding (hybrid_embedding/model.cu): the frequent
 * categories of every table on every rank, their gradients allreduced; the
 * rest dealt round-robin over the ranks by category (init_hybrid_model: "per
 * instance (round-robin), then per slot, and finally in decreasing order of
 * frequency"), so every rank serves 1/R of the global batch's infrequent
 * lookups and sends what it looked up to the samples' ranks: an even
 * alltoall. A sample's lookups into a table spread over the ranks that own
 * them: each sends one vector per sample and table it holds a lookup of. */
static void hybrid_of(const workload_embedding *e, const sharding_options *o, sharding_cost *out)
{
    double R = o->ranks, B = o->micro_batch, G = B * R, a = o->act_dtype_bytes, count = frequent_count(o);
    double lookups = 0, hot_lookups = 0, elems = 0, vectors = 0;
    for (size_t i = 0; i < e->n_tables; i++) {
        const workload_table *t = &e->tables[i];
        long n = (long)t->rows;
        double h = frequent_rows_of(t, o, count), cold = 1 - synth_zipf_cdf(h, n, o->zipf_s);
        /* frequent: this rank's samples' lookups into its replica; the rows they touch updated */
        part_work w = part_of(t, o->zipf_s, B, 0, h, t->dim, 0);
        add_work(out, &w, o);
        add_memory(out, h, t->dim, o);
        /* infrequent: 1/R of the global batch's, each (sample, table) a vector per owning rank */
        double owners = 1 - pow(1 - cold / R, t->lookups); /* per rank, per sample of the global batch */
        part_work c = part_of(t, o->zipf_s, G, h, t->rows, t->dim, G * owners);
        c.lookups /= R;
        c.unique /= R;
        add_work(out, &c, o);
        add_memory(out, (t->rows - h) / R, t->dim, o);
        vectors += G * owners * t->dim;
        /* the frequent gradients exchanged: across nodes the whole set allreduced; on one node only
         * the rows the global batch touched, pulled by their owners and pushed back over NVLink
         * (update_model_direct, forward_model): an allreduce of those */
        double exchanged = multi_node(o) ? h : synth_zipf_unique(n, o->zipf_s, G * t->lookups, (long)h);
        out->allreduce_bytes += exchanged * t->dim * o->grad_dtype_bytes;
        out->hot_rows += h;
        elems += h * t->dim;
        lookups += B * t->lookups;
        hot_lookups += w.lookups;
    }
    out->alltoall_bytes = vectors * a;
    out->gradient_bytes += elems * o->grad_dtype_bytes;
    out->hot_lookup_share = lookups > 0 ? hot_lookups / lookups : 0;
    hybrid_index_of(o, lookups * R, lookups, hot_lookups, out->hot_rows, out);
    frequent_kernels_of(o, elems, out);
    out->id_bytes = lookups * R * HYBRID_ID_BYTES; /* every rank sorts the global batch's ids */
}

typedef struct rank_load {
    sharding_cost work; /* lookups and updates */
    sharding_cost mem;  /* memory */
    double send_bytes;  /* pooled vectors of its tables, every sample of the micro-step */
    double id_bytes;    /* its tables' ids and lengths, every sample of the micro-step */
} rank_load;

static double load_bytes(const sharding_cost *c)
{
    return c->lookup_bytes + c->update_bytes;
}

static void add_traffic(sharding_cost *into, const sharding_cost *w)
{
    into->lookup_bytes += w->lookup_bytes;
    into->lookup_flops += w->lookup_flops;
    into->update_bytes += w->update_bytes;
    into->update_flops += w->update_flops;
    into->lookups += w->lookups;
    into->unique_rows += w->unique_rows;
    into->gradient_bytes += w->gradient_bytes;
}

/* The ids and lengths of `samples` samples' lookups into table t that one
 * rank receives when a 1/`owners` share of the ids is its own. */
static double table_id_bytes(const workload_table *t, double samples, double owners)
{
    return samples * (t->lookups * KJT_ID_BYTES / owners + KJT_LENGTH_BYTES);
}

/* A table as one rank serves it. */
typedef struct placed {
    const workload_table *t;
    sharding_cost work;
    double send_bytes; /* its pooled vectors in the alltoall */
    double id_bytes;   /* its ids and lengths in the input alltoall */
} placed;

static int by_traffic_desc(const void *a, const void *b)
{
    double x = load_bytes(&((const placed *)a)->work), y = load_bytes(&((const placed *)b)->work);
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Whole tables placed greedily, the most
 * traffic first, on the rank with the least lookup and update traffic so far
 * (TorchRec's greedy partitioner by cost); the busiest rank's traffic and the
 * largest rank's memory are the plan's. The alltoall is uneven (alltoallv):
 * it lasts as long as its largest sender, the rank whose tables produce the
 * most pooled vectors, so the plan's alltoall is at least that rank's; the
 * ids' alltoall, its largest receiver's. */
static void place_tables(const workload_embedding *e, const sharding_options *o, sharding_cost *out)
{
    int R = o->ranks;
    size_t n = e->n_tables;
    rank_load *ranks = calloc((size_t)R, sizeof *ranks);
    placed *order = calloc(n ? n : 1, sizeof *order);
    double G = (double)o->micro_batch * R;
    for (size_t i = 0; i < n; i++) {
        const workload_table *t = &e->tables[i];
        part_work w = part_of(t, o->zipf_s, G, 0, t->rows, t->dim, G); /* a pooled vector per sample */
        order[i] = (placed){t, {0}, G * t->dim * o->act_dtype_bytes, table_id_bytes(t, G, 1)};
        add_work(&order[i].work, &w, o);
    }
    qsort(order, n, sizeof *order, by_traffic_desc);
    for (size_t i = 0; i < n; i++) {
        int r = 0;
        for (int k = 1; k < R; k++)
            if (load_bytes(&ranks[k].work) < load_bytes(&ranks[r].work))
                r = k;
        add_traffic(&ranks[r].work, &order[i].work);
        add_memory(&ranks[r].mem, order[i].t->rows, order[i].t->dim, o);
        ranks[r].send_bytes += order[i].send_bytes;
        ranks[r].id_bytes += order[i].id_bytes;
    }
    int busiest = 0;
    for (int k = 0; k < R; k++) {
        if (load_bytes(&ranks[k].work) > load_bytes(&ranks[busiest].work))
            busiest = k;
        out->alltoall_bytes = fmax(out->alltoall_bytes, ranks[k].send_bytes);
        out->id_bytes = fmax(out->id_bytes, ranks[k].id_bytes);
    }
    add_traffic(out, &ranks[busiest].work);
    double pm = 0, om = 0;
    for (int k = 0; k < R; k++)
        if (ranks[k].mem.params_bytes + ranks[k].mem.optimizer_bytes > pm + om) {
            pm = ranks[k].mem.params_bytes;
            om = ranks[k].mem.optimizer_bytes;
        }
    out->params_bytes += pm;
    out->optimizer_bytes += om;
    free(ranks);
    free(order);
}

void sharding_cost_of(const workload_embedding *e, sharding_kind k, const sharding_options *o,
                      sharding_cost *out)
{
    memset(out, 0, sizeof *out);
    out->kind = k;
    int R = o->ranks;
    double B = o->micro_batch, G = B * R, a = o->act_dtype_bytes, pooled_dims = 0;
    for (size_t i = 0; i < e->n_tables; i++)
        pooled_dims += e->tables[i].dim;
    switch (k) {
    case SHARD_TABLE_WISE:
        out->alltoall_bytes = B * pooled_dims * a; /* what each rank receives; place_tables: its largest sender */
        place_tables(e, o, out);
        break;
    case SHARD_COLUMN_WISE:
        /* every rank: all tables for the whole micro-step's samples, 1/R of the columns */
        for (size_t i = 0; i < e->n_tables; i++) {
            const workload_table *t = &e->tables[i];
            part_work w = part_of(t, o->zipf_s, G, 0, t->rows, t->dim / R, G);
            add_work(out, &w, o);
            add_memory(out, t->rows, t->dim / R, o);
            out->id_bytes += table_id_bytes(t, G, 1);
        }
        out->alltoall_bytes = B * pooled_dims * a;
        break;
    case SHARD_ROW_WISE:
        /* every rank: 1/R of every table's rows (ids hashed over the row
         * blocks), partial pooled vectors for all the micro-step's samples */
        for (size_t i = 0; i < e->n_tables; i++) {
            const workload_table *t = &e->tables[i];
            part_work w = part_of(t, o->zipf_s, G, 0, t->rows, t->dim, G);
            w.lookups /= R;
            w.unique /= R;
            add_work(out, &w, o);
            add_memory(out, t->rows / R, t->dim, o);
            out->id_bytes += table_id_bytes(t, G, R);
        }
        out->reduce_scatter_bytes = out->allgather_bytes = G * pooled_dims * a;
        break;
    case SHARD_DATA_PARALLEL:
        for (size_t i = 0; i < e->n_tables; i++) {
            const workload_table *t = &e->tables[i];
            part_work w = part_of(t, o->zipf_s, B, 0, t->rows, t->dim, B);
            add_work(out, &w, o);
            add_memory(out, t->rows, t->dim, o);
            out->allreduce_bytes += t->rows * t->dim * o->grad_dtype_bytes;
        }
        out->gradient_bytes = out->allreduce_bytes; /* a dense gradient per table */
        out->hot_lookup_share = 1;
        break;
    case SHARD_HYBRID:
        hybrid_of(e, o, out);
        break;
    case SHARD_HOST:
    case SHARD_COUNT:
        break;
    }
    /* the lookups wait for their ids: an alltoall of its own, not overlapped */
    out->id_s = o->ids == IDS_ALLTOALL && out->id_bytes > 0 ? alltoall_s(o, out->id_bytes) : 0;
}

int sharding_group_of(const sharding_mix *m, double rows)
{
    for (int g = 0; g < m->n_groups - 1; g++)
        if (rows <= m->max_rows[g])
            return g;
    return m->n_groups - 1;
}

const char *sharding_mix_conflict(const sharding_mix *m)
{
    int row_wise = 0, alltoall = 0;
    for (int g = 0; g < m->n_groups; g++) {
        row_wise |= m->plan[g] == SHARD_ROW_WISE;
        alltoall |= m->plan[g] == SHARD_TABLE_WISE || m->plan[g] == SHARD_COLUMN_WISE || m->plan[g] == SHARD_HYBRID;
    }
    return row_wise && alltoall ? "row_wise groups reduce-scatter their pooled vectors while table_wise, column_wise "
                                  "and hybrid groups alltoall them, and a step has one collective per embedding "
                                  "exchange"
                                : NULL;
}

static void add_cost(sharding_cost *into, const sharding_cost *c)
{
    add_traffic(into, c);
    into->alltoall_bytes += c->alltoall_bytes;
    into->reduce_scatter_bytes += c->reduce_scatter_bytes;
    into->allgather_bytes += c->allgather_bytes;
    into->allreduce_bytes += c->allreduce_bytes;
    into->hot_rows += c->hot_rows;
    into->index_bytes += c->index_bytes;
    into->index_kernels += c->index_kernels;
    into->index_s += c->index_s;
    into->id_bytes += c->id_bytes;
    into->id_s += c->id_s;
    into->params_bytes += c->params_bytes;
    into->optimizer_bytes += c->optimizer_bytes;
}

void sharding_mix_cost_of(const workload_embedding *e, const sharding_mix *m, const sharding_options *o,
                          sharding_cost *out, sharding_cost group[SHARD_MAX_GROUPS], int tables[SHARD_MAX_GROUPS])
{
    memset(out, 0, sizeof *out);
    out->kind = m->plan[0];
    workload_table *sub = calloc(e->n_tables ? e->n_tables : 1, sizeof *sub);
    double lookups = 0, hot_lookups = 0;
    for (int g = 0; g < m->n_groups; g++) {
        workload_embedding part = *e;
        part.tables = sub;
        part.n_tables = 0;
        for (size_t i = 0; i < e->n_tables; i++)
            if (sharding_group_of(m, e->tables[i].rows) == g)
                sub[part.n_tables++] = e->tables[i];
        tables[g] = (int)part.n_tables;
        sharding_cost_of(&part, m->plan[g], o, &group[g]);
        add_cost(out, &group[g]);
        lookups += group[g].lookups;
        hot_lookups += group[g].lookups * group[g].hot_lookup_share;
    }
    out->hot_lookup_share = lookups > 0 ? hot_lookups / lookups : 0;
    free(sub);
}
