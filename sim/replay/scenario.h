/* scenario.h: a scenario file (JSON, documented in scenarios/README.md):
 * platform, workload, optimizer, collectives, convergence source, sweep,
 * outputs, published reference figures and expectations. */
#ifndef TT_SCENARIO_H
#define TT_SCENARIO_H

#include <jansson.h>
#include <stddef.h>

#include "collectives/schedule.h"
#include "common/error.h"
#include "common/jsonx.h"
#include "platforms/platform.h"
#include "sim/replay/batch_schedule.h"
#include "sim/replay/framework.h"
#include "sim/replay/layout.h"
#include "sim/replay/input_pipeline.h"
#include "sim/replay/resilience.h"
#include "sim/replay/sharding.h"
#include "trainer/model.h"
#include "trainer/optimizer.h"

#define SCENARIO_VERSION 1
#define SCENARIO_MAX_SWEEP 64
#define SCENARIO_MAX_EXPECT 32
#define SCENARIO_MAX_PHASES 8
#define SCENARIO_MAX_SWEEP_PATHS 4
#define SCENARIO_MAX_POINTS 4096 /* a sweep's points in all (64 x 64) */
#define SCENARIO_MAX_SETS 32

typedef enum { CONV_NONE, CONV_PROFILE, CONV_MCCANDLISH, CONV_STEPS, CONV_SCALING_LAW } convergence_kind;
enum { SCENARIO_ACCEPT_MODEL = 1, SCENARIO_ACCEPT_DATASET = 2, SCENARIO_ACCEPT_TARGET = 4 };

typedef struct scenario_expect {
    char *metric; /* a dotted path into the run's JSON document ("step.time_s") */
    double min, max; /* -inf / +inf when absent */
} scenario_expect;

/* A part of training with its own trace (BERT: sequence length 128 for 90 %
 * of the steps, 512 for the rest). A plain workload is one phase. */
typedef struct scenario_phase {
    char *trace_path;  /* resolved path of the trace file, or NULL with model */
    char *model;       /* a model name: the trace is made on the fly */
    model_opts opts;   /* its shape, for a model given by shape ({"family": ...}); else the defaults */
    int micro_batch;   /* 0: the workload's */
    long global_batch; /* 0: the workload's (the point's) */
    double fraction;   /* of the optimizer steps */
} scenario_phase;

typedef struct scenario {
    char *path;
    json_t *doc;       /* the document as read, with --set applied (a sweep point's: with its values) */
    size_t n_sets;
    char *sets[SCENARIO_MAX_SETS]; /* "PATH=VALUE" as given, echoed in the run's assumptions */
    char *name;
    char *description;
    char *chakra_path; /* $.workload.chakra: a Chakra trace directory whose step replaces the model's */
    char **assumptions; /* the scenario's own named assumptions (NULL-terminated) */

    /* platform */
    char *platform;    /* built-in name, generic name, or a path */
    int nodes;         /* 0: the platform's default */
    double link_bw_Bps, link_latency_s; /* 0: the platform's default */
    char *accelerator; /* NULL: the platform's */
    char *mesh;        /* NULL: the platform's */
    int cpu_ranks;     /* "ranks": "cpu": the nodes' CPU sockets train, not their accelerators */
    int shape[3];      /* torus grid of the slice (0: the platform's choice) */
    network_model network;
    json_t *fabric;    /* "platform.fabric": merged over the platform file's fabric (in doc) */
    json_t *components; /* "platform.components": node groups' counts replacing the file's (in doc) */
    json_t *devices;   /* "devices": partial or new definitions by name (in doc) */

    /* a collective measurement instead of training (nccl-tests-like): op,
     * algorithm, size per rank, ranks (0: all of the platform's) */
    int is_collective;
    coll_op coll_op;
    coll_algo coll_algo;
    double coll_bytes;
    int coll_ranks;

    /* workload */
    size_t n_phases;  /* >= 1 */
    scenario_phase phases[SCENARIO_MAX_PHASES];
    int micro_batch;  /* 0: global_batch / ranks (with accumulation if needed) */
    long global_batch; /* 0: ranks x micro_batch */
    char *precision;  /* NULL: the trace's */
    char *gradient_precision; /* NULL: the precision's */
    double bucket_bytes; /* for traces made on the fly */
    double dataset_examples; /* 0: unknown (no epochs) */
    embedding_placement embeddings;
    sharding_kind sharding; /* of model-parallel tables (table_wise; host with embeddings "host") */
    sharding_mix shard_mix; /* a plan per table group (n_groups 0: `sharding` for every table) */
    char *table_precision; /* the tables as stored (NULL: precision's) */
    embedding_optimizer table_optimizer;
    int master_weights;    /* an fp32 master copy of low-precision tables */
    double index_zipf_s;   /* the lookups' Zipf exponent (0: the trace's) */
    embedding_ids embedding_ids; /* how the shards get their ids (reader) */
    hybrid_params hybrid;  /* workload.embedding.hybrid: HugeCTR's (HYBRID_PARAMS_DEFAULT) */
    int fusion;       /* norm/elementwise ops fused into their producer: 1, 0, or -1 for the device's default */
    int recompute;    /* activation recomputation (checkpointing at normalisation layers) */
    int fused_attention; /* workload.attention: 0 "standard" (scores kept), 1 "fused" (FlashAttention) */
    int autograd_activations; /* workload.activations: 0 "outputs" (every op's), 1 "autograd" (what backward reads) */
    framework framework; /* its unfused epilogue passes (framework.h); FRAMEWORK_NONE */
    int async_wgrad;    /* workload.async_wgrad: weight gradients on a stream of their own (step_options) */
    input_pipeline_kind input_pipeline; /* workload.input.pipeline; INPUT_NONE: not modelled */
    int input_threads;  /* workload.input.threads: decode workers per node (0: one per host core) */

    const optim_info *optimizer; /* NULL: the trace's */

    /* collectives: algorithm names ("auto" or one of collectives/) */
    char *allreduce, *alltoall;
    coll_algo allreduce_algo, alltoall_algo; /* parsed at load */
    int overlap; /* bucketed allreduces overlap the backward (default 1) */
    int zero;    /* parallel.zero: the distributed optimizer (step_options.zero) */
    /* parallel: the layout's degrees (0: 1; data 0: derived) and order (NULL:
     * "tp-cp-ep-dp-pp"), Megatron's sequence parallelism and virtual stages */
    int degree[LAYOUT_DIMS];
    char *layout_order;
    int sequence_parallel, virtual_stages;
    int expert_tensor; /* parallel.expert_tensor: ranks splitting each expert, 1 or (0) the tensor degree */
    int expert_dispatcher; /* parallel.expert_dispatcher: 0 alltoall (Megatron-Core's), 1 deepep */
    int expert_overlap;    /* parallel.expert_overlap: MoE alltoalls beside the other micro-batch's compute */
    int first_stage_layers, last_stage_layers; /* blocks on the first and last virtual stage (0: even) */
    int overlap_param_gather; /* collectives.overlap_param_gather: its all-gathers during the next forward */
    int grouped; /* collectives.grouped: every gradient in one allreduce after the backward (step_options) */
    int overlap_ar_a2a; /* collectives.overlap_ar_a2a: HugeCTR's alltoall beside the allreduce (step_options) */
    int concurrent_ops; /* collectives.concurrent_ops: collectives in flight at once (default 1) */
    coll_algo inter_algo; /* collectives.inter_node: hier allreduce's inter-node phase (ALGO_RING or ALGO_RHD) */
    coll_staging staging; /* collectives.staging: where hier's inter-node phase keeps its buffers */
    /* collectives.nccl_algo, nccl_proto, nccl_collnet: NCCL_ALGO and NCCL_PROTO as masks
     * (collectives/nccl.h; 0: NCCL's default) and NCCL_COLLNET_ENABLE, for whatever runs nccl */
    unsigned nccl_algos, nccl_protos;
    int nccl_collnet;

    /* convergence */
    convergence_kind conv;
    char *profile_path; /* resolved */
    double s_min, noise_scale; /* McCandlish */
    double fixed_steps; /* CONV_STEPS */
    int scaling_law;    /* CONV_SCALING_LAW: a scaling_law_kind */
    double target_loss; /* its target, nats per token */
    batch_schedule schedule; /* phases at other batches before the point's own (n 0: none) */
    /* the target the scenario names (required with a profile; NULL: not named) */
    char *target_dataset, *target_metric;
    double target_value;
    int accept_mismatch; /* SCENARIO_ACCEPT_*: mismatches with the profile carried as assumptions */

    /* evaluation added to time-to-accuracy: typed in, or from the workload
     * (every_epochs or every_examples > 0: `examples` forward passes over the
     * data-parallel replicas) */
    double eval_every_steps, eval_time_s;
    double eval_every_epochs, eval_every_examples, eval_examples;

    /* owning the cluster ("cost"; defaults in cost.h) */
    double lifetime_years, pue, usd_per_kwh;

    /* interruptions, checkpoints and stragglers ("resilience"; resilience.h) */
    resilience_options resilience;

    /* sweep: every combination of these (empty list: the scenario's value) */
    size_t n_sweep_batch, n_sweep_nodes;
    long sweep_batch[SCENARIO_MAX_SWEEP];
    int sweep_nodes[SCENARIO_MAX_SWEEP];
    /* any other path of the scenario ("platform.fabric.oversubscription"):
     * its list of values (in doc), outermost first */
    size_t n_sweep_paths;
    const char *sweep_path[SCENARIO_MAX_SWEEP_PATHS];
    json_t *sweep_values[SCENARIO_MAX_SWEEP_PATHS];

    /* outputs written by 'ttasim run' besides stdout, as given (see scenario_output_path) */
    char *out_json, *out_csv, *out_svg, *out_html;

    /* reference: published figures echoed and compared (0: absent) */
    double ref_step_time_s, ref_time_s, ref_steps;
    double ref_busbw_Bps, ref_op_time_s; /* collective scenarios */
    double ref_interruptions_per_day;    /* a published run's interruptions (resilience) */
    char *ref_source;
    char *ref_calibrated; /* why this row fed a device's calibration (NULL: a validation row) */

    size_t n_expect;
    scenario_expect expect[SCENARIO_MAX_EXPECT];
} scenario;

/* Loads and validates; errors name the file and the JSON path or line:column.
 * Relative trace and profile paths are looked up next to the scenario, then
 * in the built-in data (scenarios/...). */
int scenario_load(const char *path, scenario *out, tt_error *err);
/* The same with "PATH=VALUE" overrides (override.h) applied before validation. */
int scenario_load_set(const char *path, char *const *sets, size_t n_sets, scenario *out, tt_error *err);
/* A sweep point: base with values[i] at paths[i]; its sweep keeps the global
 * batch and node lists, not the swept paths. A value the scenario refuses
 * names the point. */
int scenario_at(const scenario *base, const char *const *paths, json_t *const *values, size_t n,
                scenario *out, tt_error *err);
void scenario_free(scenario *s);

/* Where an output named in the scenario goes: an absolute path as it is; a
 * relative one under out_dir when given, else next to the scenario (as its
 * inputs are). Returns a malloc'd path, NULL when out of memory. */
char *scenario_output_path(const scenario *s, const char *given, const char *out_dir);

/* The files a run of the scenario reads that exist as files (scenario,
 * traces, profile, a platform given as a path): at most max, with what
 * names each in messages. Returns how many. */
size_t scenario_inputs(const scenario *s, const char **paths, const char **what, size_t max);

/* The platform options the scenario asks for at a node count (0: its own). */
platform_options scenario_platform_options(const scenario *s, int nodes);

/* Whether a JSON file is a scenario: not a document with "format" (a trace,
 * a profile, a shard) nor a report of one ('run --json', 'check --json' and
 * 'compare --json' name their "scenario" or "scenarios", keys no scenario has).
 * Lets 'ttasim check DIR' walk scenarios/ with its data and outputs; when not,
 * why (may be NULL) says what the file is. An unreadable file is a scenario:
 * its loader explains. */
int scenario_file_is_scenario(const char *path, char *why, size_t why_bytes);

/* A relative path at o's key names a file next to o's file, else built-in
 * data under scenarios/ (so published scenarios say "traces/resnet50.json").
 * *out is a malloc'd readable path. */
int scenario_resolve_path(const jx_obj *o, const char *key, const char *rel, char **out);

#endif
