/* Embedding tables at the scenario's batch: distinct rows of Zipf lookups
 * (against counting real draws and the exact sum), and each sharding plan's
 * traffic, collectives and memory against hand-computed values. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/sharding.h"
#include "tests/testutil.h"
#include "trainer/rng.h"
#include "trainer/synth.h"

/* Two rows, s = 1: P(row 0) = ln 2 / ln 3. */
START_TEST(zipf_unique_by_hand)
{
    double p0 = log(2.0) / log(3.0), p1 = 1 - p0;
    ck_assert_double_eq_tol(synth_zipf_cdf(1, 2, 1.0), p0, 1e-15);
    ck_assert_double_eq_tol(synth_zipf_unique(2, 1.0, 2, 2), (1 - p1 * p1) + (1 - p0 * p0), 1e-12);
    ck_assert_double_eq_tol(synth_zipf_unique(2, 1.0, 2, 1), 1 - p1 * p1, 1e-12);
    ck_assert_double_eq(synth_zipf_unique(2, 1.0, 0, 2), 0);
}
END_TEST

/* The geometric blocks of the cold tail against the exact per-row sum. */
START_TEST(zipf_unique_tail_blocks)
{
    long n = 300000;
    double draws = 50000, s = 1.05, exact = 0;
    for (long k = 0; k < n; k++) {
        double p = synth_zipf_cdf((double)k + 1, n, s) - synth_zipf_cdf((double)k, n, s);
        exact += -expm1(draws * log1p(-p));
    }
    ck_assert_double_eq_tol(synth_zipf_unique(n, s, draws, n), exact, 1e-4 * exact);
}
END_TEST

/* What the synthetic click logs really draw: 40,000 ids of a 4M-row table. */
START_TEST(zipf_unique_matches_draws)
{
    long n = 4000000;
    int draws = 40000;
    char *seen = calloc((size_t)n, 1);
    rng r = rng_at(7, 3);
    long distinct = 0;
    for (int i = 0; i < draws; i++) {
        long k = synth_zipf(rng_uniform(&r), n, SYNTH_CLICK_ZIPF_S);
        distinct += !seen[k];
        seen[k] = 1;
    }
    free(seen);
    double u = synth_zipf_unique(n, SYNTH_CLICK_ZIPF_S, draws, n);
    ck_assert_msg(fabs(u - distinct) < 0.02 * distinct, "expected %.0f distinct rows, drew %ld", u, distinct);
    /* fewer distinct rows per lookup as the batch grows: the hot rows repeat */
    ck_assert_double_lt(synth_zipf_unique(n, 1.05, 4 * draws, n), 4 * u);
}
END_TEST

static workload_table TABLES[2] = {{4, 8, 1}, {4, 8, 1}};
static const workload_embedding EMB = {0, 1.0, 2, TABLES};

/* The ids' input alltoall on 2 ranks joined by one link of latency_s and
 * bw_Bps: one pairwise exchange of half of it. */
static void set_link(sharding_options *o, double latency_s, double bw_Bps)
{
    o->alltoall_latency_s = latency_s;
    o->alltoall_s_per_byte = 0.5 / bw_Bps;
}

static sharding_options options(int micro_batch)
{
    sharding_options o = {.ranks = 2, .micro_batch = micro_batch, .table_dtype_bytes = 2, .act_dtype_bytes = 2,
                          .grad_dtype_bytes = 2, .master_weights = 0, .optimizer = EMB_SGD, .zipf_s = 1.0,
                          .mem_Bps = 1e12, .dispatch_s = 0, .node_ranks = 2, .hybrid = HYBRID_PARAMS_DEFAULT};
    set_link(&o, 0, 1e9);
    return o;
}

/* Two 4-row, 8-wide tables on two ranks, fp16, 4 samples per rank: table-wise
 * puts one table on each; it serves the 8 samples of the micro-step. */
START_TEST(table_wise_by_hand)
{
    sharding_options o = options(4);
    sharding_cost c;
    sharding_cost_of(&EMB, SHARD_TABLE_WISE, &o, &c);
    double u = synth_zipf_unique(4, 1.0, 8, 4);
    ck_assert_double_eq_tol(c.lookups, 8, 1e-12);
    ck_assert_double_eq_tol(c.unique_rows, u, 1e-12);
    ck_assert_double_eq_tol(c.lookup_bytes, 8 * 8 * 2 + 8 * 8 * 2, 1e-9);
    /* pooled gradients, expanded per lookup, then per distinct row: gradient, row read, row written */
    ck_assert_double_eq_tol(c.update_bytes, 8 * 8 * 2 + 8 * 8 * 2 + u * 8 * (2 + 2 * 2), 1e-9);
    ck_assert_double_eq_tol(c.update_flops, 8 * 8 + u * 8 * 2, 1e-9);
    ck_assert_double_eq_tol(c.alltoall_bytes, 4 * 16 * 2, 1e-12);
    ck_assert_double_eq(c.reduce_scatter_bytes, 0);
    ck_assert_double_eq(c.allreduce_bytes, 0);
    ck_assert_double_eq_tol(c.params_bytes, 4 * 8 * 2, 1e-12); /* no fp32 master unless asked */
    ck_assert_double_eq(c.optimizer_bytes, 0);
    /* row-wise Adagrad: one fp32 word per row, read and written per distinct row; a master copy */
    o.optimizer = EMB_ROWWISE_ADAGRAD;
    o.master_weights = 1;
    sharding_cost_of(&EMB, SHARD_TABLE_WISE, &o, &c);
    ck_assert_double_eq_tol(c.optimizer_bytes, 4 * 4, 1e-12);
    ck_assert_double_eq_tol(c.params_bytes, 4 * 8 * (2 + 4), 1e-12);
    ck_assert_double_eq_tol(c.update_bytes, 8 * 8 * 2 + 8 * 8 * 2 + u * (8 * (2 + 2 * 2 + 8) + 8), 1e-9);
    ck_assert_double_eq_tol(c.update_flops, 8 * 8 + u * 8 * 4, 1e-9);
}
END_TEST

START_TEST(row_column_data_parallel_by_hand)
{
    sharding_options o = options(4);
    sharding_cost c;
    double u = synth_zipf_unique(4, 1.0, 8, 4);
    /* row-wise: half of each table's rows; partial sums of all 8 samples reduce-scattered */
    sharding_cost_of(&EMB, SHARD_ROW_WISE, &o, &c);
    ck_assert_double_eq_tol(c.lookups, 2 * 8 / 2.0, 1e-12);
    ck_assert_double_eq_tol(c.unique_rows, 2 * u / 2, 1e-12);
    ck_assert_double_eq_tol(c.reduce_scatter_bytes, 8 * 16 * 2, 1e-12);
    ck_assert_double_eq_tol(c.allgather_bytes, 8 * 16 * 2, 1e-12);
    ck_assert_double_eq(c.alltoall_bytes, 0);
    ck_assert_double_eq_tol(c.params_bytes, 2 * 2 * 8 * 2, 1e-12);
    /* column-wise: 4 of the 8 columns of both tables, all 8 samples */
    sharding_cost_of(&EMB, SHARD_COLUMN_WISE, &o, &c);
    ck_assert_double_eq_tol(c.lookup_bytes, 2 * (8 * 4 * 2 + 8 * 4 * 2), 1e-9);
    ck_assert_double_eq_tol(c.alltoall_bytes, 4 * 16 * 2, 1e-12);
    ck_assert_double_eq_tol(c.params_bytes, 2 * 4 * 4 * 2, 1e-12);
    /* data-parallel: own 4 samples, both whole tables, their dense gradients allreduced */
    sharding_cost_of(&EMB, SHARD_DATA_PARALLEL, &o, &c);
    ck_assert_double_eq_tol(c.lookups, 2 * 4, 1e-12);
    ck_assert_double_eq_tol(c.unique_rows, 2 * synth_zipf_unique(4, 1.0, 4, 4), 1e-12);
    ck_assert_double_eq_tol(c.allreduce_bytes, 2 * 4 * 8 * 2, 1e-12);
    ck_assert_double_eq(c.alltoall_bytes, 0);
    ck_assert_double_eq_tol(c.params_bytes, 2 * 4 * 8 * 2, 1e-12);
}
END_TEST

/* The probability of row k (from 0) of a 4-row table, s = 1: F(k+1) - F(k),
 * F(h) = ln(h + 1) / ln 5. */
static double p4(int k)
{
    return (log(k + 2.0) - log(k + 1.0)) / log(5.0);
}

/* Hybrid, HugeCTR's frequent categories (calibration_data.cu): on one node
 * those expected at least G sqrt(2 p_dup / (M (M - 1))) times in a global
 * batch. 2 ranks of 4 samples (G = 8), p_dup 0.5: 8 sqrt(1 / 12) = 2.31, so
 * row 0 (8 x 0.431 = 3.45) of each table is frequent and row 1 (2.02) not. */
START_TEST(hybrid_frequent_by_count)
{
    sharding_options o = options(4);
    o.hybrid.p_dup_max = 0.5;
    sharding_cost c;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    double f = p4(0), cold = 1 - f;
    ck_assert_double_eq_tol(8 * f, 3.446, 1e-3);
    ck_assert_double_eq_tol(8 * p4(1), 2.015, 1e-3);
    ck_assert_double_eq_tol(c.hot_rows, 2, 1e-12);
    ck_assert_double_eq_tol(c.hot_lookup_share, f, 1e-12);
    /* the infrequent rows dealt round-robin: each rank serves half of the 8 samples' cold lookups
     * and sends a vector for each: an even alltoall of 4 x (1 - F(1)) vectors a table */
    ck_assert_double_eq_tol(c.lookups, 2 * (4 * f + 8 * cold / 2), 1e-12);
    ck_assert_double_eq_tol(c.alltoall_bytes, 2 * 4 * cold * 8 * 2, 1e-12);
    /* one node: only the frequent rows the global batch touched are exchanged (NVLink pulls) */
    ck_assert_double_eq_tol(c.allreduce_bytes, 2 * synth_zipf_unique(4, 1.0, 8, 1) * 8 * 2, 1e-12);
    /* every rank: the frequent row, half of the 3 others */
    ck_assert_double_eq_tol(c.params_bytes, 2 * (1 + 3 / 2.0) * 8 * 2, 1e-12);

    /* across N = 2 nodes: N^2 / (N - 1) x 1.3e12 / 1.3e11 = 40 a global batch of 16 x 8 = 128 samples:
     * row 0 (55.1) is frequent, row 1 (32.2) not, and the whole frequent set is allreduced */
    o = options(64);
    o.node_ranks = 1;
    o.hybrid.all_to_all_Bps = 1.3e12;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.hot_rows, 2, 1e-12);
    ck_assert_double_eq_tol(c.allreduce_bytes, 2 * 1 * 8 * 2, 1e-12);
    /* HugeCTR's default bandwidths (1.9e11 / 1.3e11): 5.85, every row is frequent, nothing to send */
    o.hybrid = HYBRID_PARAMS_DEFAULT;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.hot_rows, 8, 1e-12);
    ck_assert_double_eq_tol(c.hot_lookup_share, 1, 1e-12);
    ck_assert_double_eq_tol(c.alltoall_bytes, 0, 1e-12);
    ck_assert_double_eq_tol(c.allreduce_bytes, 2 * 4 * 8 * 2, 1e-12);
}
END_TEST

/* Hybrid without a frequent row (a threshold no row reaches) on 4 ranks: the
 * infrequent rows dealt round-robin make the alltoall even, each rank
 * sending what it looks up for the global batch, where table-wise's largest
 * sender sends a whole table's vectors. A sample's 3 lookups into a table
 * land on up to 3 of the 4 ranks: R (1 - (1 - 1/R)^3) = 37/16 vectors. */
START_TEST(hybrid_infrequent_round_robin)
{
    workload_table t[2] = {{1000, 8, 1}, {1000, 8, 3}};
    workload_embedding emb = {0, 1.0, 2, t};
    sharding_options o = options(4);
    o.ranks = 4;
    o.node_ranks = 1;
    o.hybrid.all_to_all_Bps = 1e15;
    sharding_cost hyb, tw;
    sharding_cost_of(&emb, SHARD_HYBRID, &o, &hyb);
    sharding_cost_of(&emb, SHARD_TABLE_WISE, &o, &tw);
    ck_assert_double_eq(hyb.hot_rows, 0);
    ck_assert_double_eq(hyb.allreduce_bytes, 0);
    ck_assert_double_eq_tol(hyb.lookups, 16 * (1 + 3) / 4.0, 1e-12);
    ck_assert_double_eq_tol(hyb.alltoall_bytes, 4 * (1 + 37 / 16.0) * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(hyb.params_bytes, 2 * 1000 / 4.0 * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(tw.alltoall_bytes, 16 * 8 * 2, 1e-12); /* a table's vectors for all 16 samples */
    ck_assert_double_eq_tol(tw.params_bytes, 1000 * 8 * 2, 1e-12);
}
END_TEST

/* Hybrid's index handling on one node, 64 samples per rank, every row
 * frequent (G = 128: row 3 is expected 17.7 times, above the 0.29 that
 * p_dup 0.01 asks). 256 global ids, 128 local, all hot, 8 frequent rows of 64
 * elements; kernels and their bytes as hybrid_indices.cu runs them, each at
 * 1e9 B/s and at least 1 us. */
START_TEST(hybrid_index_by_hand)
{
    sharding_options o = options(64);
    o.mem_Bps = 1e9;
    o.dispatch_s = 1e-6;
    sharding_cost c;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.hot_rows, 8, 1e-12);
    /* every id hot, so every category entry in L2 (no sector): data_to_unique_categories 256 x 8;
     * frequent samples 128 x 4 read + 128 x 4 written; model indices 256 x 4 (no cold id to write);
     * masks zeroed 2 x 8; fused_cache_masks 256 x 4; two selects over 8 flags writing 8 ids (8 x 5 each) */
    double bytes[] = {2048, 1024, 1024, 16, 1024, 40, 40};
    double sum = 0, s = 0;
    for (size_t k = 0; k < sizeof bytes / sizeof bytes[0]; k++) {
        sum += bytes[k];
        s += fmax(bytes[k] / 1e9, 1e-6);
    }
    ck_assert_double_eq_tol(c.index_bytes, sum, 1e-9);
    ck_assert_double_eq_tol(c.index_kernels, 19, 1e-12);
    ck_assert_double_eq_tol(c.index_s, s + 12 * 1e-6, 1e-15); /* 12 kernels of no bytes of their own */
    ck_assert_double_eq_tol(c.index_s, 2.048e-6 + 3 * 1.024e-6 + 15 * 1e-6, 1e-15);
    /* the data reader computes the indices ahead: the frequent path's 4 kernels are what is waited for */
    o.hybrid.precomputed_indices = 1;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.index_bytes, sum, 1e-9);
    ck_assert_double_eq_tol(c.index_s, 4 * 1e-6, 1e-15);
    o.hybrid.precomputed_indices = 0;

    /* across nodes (a threshold of 5.85 at G = 128: every row frequent): the network indices instead
     * of the cache masks, and the dense passes over the 64 frequent elements: zeroed (4 B), cast to
     * fp16 (4 + 2), SGD (2 + 8) */
    o.node_ranks = 1;
    sharding_cost_of(&EMB, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.hot_rows, 8, 1e-12);
    double multi[] = {2048, 1024, 1024, 128 * 6, 128 * 2, 0, 64 * 4, 64 * 6, 64 * 10};
    sum = 0;
    for (size_t k = 0; k < sizeof multi / sizeof multi[0]; k++)
        sum += multi[k];
    ck_assert_double_eq_tol(c.index_bytes, sum, 1e-9);
    ck_assert_double_eq_tol(c.index_kernels, 15, 1e-12);
    ck_assert_double_eq_tol(c.index_s, (2048 + 1024 + 1024) / 1e9 + 12 * 1e-6, 1e-15);
}
END_TEST

/* Table-wise balances by traffic: three equal tables on two ranks leave
 * two on the busiest rank (its lookups, updates and memory, and the alltoall's
 * largest sender: both tables' vectors for all 8 samples, more than the 4 x 3
 * tables' vectors each rank receives); four put two on each. */
START_TEST(table_wise_balances)
{
    workload_table t[4] = {{1000, 8, 1}, {1000, 8, 1}, {1000, 8, 1}, {1000, 8, 1}};
    workload_embedding three = {0, 1.0, 3, t}, four = {0, 1.0, 4, t};
    sharding_options o = options(4);
    sharding_cost c3, c4;
    sharding_cost_of(&three, SHARD_TABLE_WISE, &o, &c3);
    sharding_cost_of(&four, SHARD_TABLE_WISE, &o, &c4);
    ck_assert_double_eq_tol(c3.lookups, 2 * 8, 1e-12);
    ck_assert_double_eq_tol(c3.unique_rows, 2 * synth_zipf_unique(1000, 1.0, 8, 1000), 1e-9);
    ck_assert_double_eq_tol(c3.params_bytes, 2 * 1000 * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(c3.alltoall_bytes, 8 * 2 * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(c4.update_bytes, c3.update_bytes, 1e-9);
    ck_assert_double_eq_tol(c4.alltoall_bytes, 4 * 32 * 2, 1e-12);
}
END_TEST

/* Per-group plans: two 4-row tables (at most 10 rows: data-parallel) and a
 * 1000-row one (table-wise) on two ranks, 4 samples per rank, fp16. */
START_TEST(mix_by_hand)
{
    static const workload_table three[] = {{4, 8, 1}, {1000, 8, 1}, {4, 8, 1}};
    const workload_embedding e = {0, 1.0, 3, (workload_table *)three};
    sharding_mix m = {2, {10, 0}, {SHARD_DATA_PARALLEL, SHARD_TABLE_WISE}};
    ck_assert_int_eq(sharding_group_of(&m, 4), 0);
    ck_assert_int_eq(sharding_group_of(&m, 10), 0);
    ck_assert_int_eq(sharding_group_of(&m, 11), 1);
    ck_assert_int_eq(sharding_group_of(&m, 1e9), 1);
    sharding_options o = options(4);
    sharding_cost c, g[SHARD_MAX_GROUPS];
    int tables[SHARD_MAX_GROUPS];
    sharding_mix_cost_of(&e, &m, &o, &c, g, tables);
    ck_assert_int_eq(tables[0], 2);
    ck_assert_int_eq(tables[1], 1);
    /* data-parallel: each rank its own 4 samples of both small tables, their 2 x 4 x 8 fp16 gradients allreduced */
    ck_assert_double_eq_tol(g[0].lookups, 2 * 4, 1e-12);
    ck_assert_double_eq_tol(g[0].allreduce_bytes, 2 * 4 * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(g[0].params_bytes, 2 * 4 * 8 * 2, 1e-12);
    ck_assert_double_eq(g[0].alltoall_bytes, 0);
    /* table-wise: the big table's rank serves the micro-step's 8 samples and sends their 8-wide vectors */
    ck_assert_double_eq_tol(g[1].lookups, 8, 1e-12);
    ck_assert_double_eq_tol(g[1].alltoall_bytes, 8 * 8 * 2, 1e-12);
    ck_assert_double_eq_tol(g[1].params_bytes, 1000 * 8 * 2, 1e-12);
    ck_assert_double_eq(g[1].allreduce_bytes, 0);
    ck_assert_double_eq_tol(c.lookups, 16, 1e-12);
    ck_assert_double_eq_tol(c.alltoall_bytes, 128, 1e-12);
    ck_assert_double_eq_tol(c.allreduce_bytes, 128, 1e-12);
    ck_assert_double_eq_tol(c.params_bytes, 128 + 16000, 1e-12);
    ck_assert_double_eq_tol(c.update_bytes, g[0].update_bytes + g[1].update_bytes, 1e-9);
    ck_assert_double_eq_tol(c.hot_lookup_share, 0.5, 1e-12); /* the data-parallel half is local */
    ck_assert_ptr_null(sharding_mix_conflict(&m));
    m.plan[1] = SHARD_ROW_WISE;
    ck_assert_ptr_null(sharding_mix_conflict(&m));
    m.plan[0] = SHARD_HYBRID;
    ck_assert_ptr_nonnull(sharding_mix_conflict(&m));
}
END_TEST

/* The ids each plan's shards need, two ranks, 4 samples each (8 in the
 * micro-step), a table looked up once and one three times per sample: an
 * int64 id per lookup and an int32 length per sample and table. */
START_TEST(id_bytes_by_hand)
{
    workload_table tables[2] = {{4, 8, 1}, {4, 8, 3}};
    workload_embedding emb = {0, 1.0, 2, tables};
    sharding_options o = options(4);
    set_link(&o, 1e-6, 1e9);
    sharding_cost c;
    /* table-wise: one table per rank; the largest receiver holds the 3-lookup one */
    sharding_cost_of(&emb, SHARD_TABLE_WISE, &o, &c);
    ck_assert_double_eq_tol(c.id_bytes, 8 * (3 * 8 + 4), 1e-9);
    ck_assert_double_eq(c.id_s, 0); /* the scenario's reader loads them */
    /* column-wise: both ranks hold a column shard of both tables, so all the ids */
    sharding_cost_of(&emb, SHARD_COLUMN_WISE, &o, &c);
    ck_assert_double_eq_tol(c.id_bytes, 8 * (4 * 8 + 2 * 4), 1e-9);
    /* row-wise: each id to its one owner, every sample's lengths to both */
    sharding_cost_of(&emb, SHARD_ROW_WISE, &o, &c);
    ck_assert_double_eq_tol(c.id_bytes, 8 * (4 * 8 / 2 + 2 * 4), 1e-9);
    /* data-parallel: the rank's own samples' ids, nothing to send */
    sharding_cost_of(&emb, SHARD_DATA_PARALLEL, &o, &c);
    ck_assert_double_eq(c.id_bytes, 0);
    /* hybrid: every rank sorts the global batch's uint32 ids */
    sharding_cost_of(&emb, SHARD_HYBRID, &o, &c);
    ck_assert_double_eq_tol(c.id_bytes, 8 * 4 * 4, 1e-9);
    /* by the input alltoall: pairwise, (R - 1) (latency + bytes / (R bandwidth)) */
    o.ids = IDS_ALLTOALL;
    sharding_cost_of(&emb, SHARD_COLUMN_WISE, &o, &c);
    ck_assert_double_eq_tol(c.id_s, 1e-6 + 320 / (2 * 1e9), 1e-15);
    sharding_cost_of(&emb, SHARD_TABLE_WISE, &o, &c);
    ck_assert_double_eq_tol(c.id_s, 1e-6 + 224 / (2 * 1e9), 1e-15);
    sharding_cost_of(&emb, SHARD_DATA_PARALLEL, &o, &c);
    ck_assert_double_eq(c.id_s, 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("sharding");
    TCase *tc = tcase_create("plans");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, zipf_unique_by_hand);
    tcase_add_test(tc, zipf_unique_tail_blocks);
    tcase_add_test(tc, zipf_unique_matches_draws);
    tcase_add_test(tc, table_wise_by_hand);
    tcase_add_test(tc, row_column_data_parallel_by_hand);
    tcase_add_test(tc, hybrid_frequent_by_count);
    tcase_add_test(tc, hybrid_infrequent_round_robin);
    tcase_add_test(tc, hybrid_index_by_hand);
    tcase_add_test(tc, table_wise_balances);
    tcase_add_test(tc, mix_by_hand);
    tcase_add_test(tc, id_bytes_by_hand);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
