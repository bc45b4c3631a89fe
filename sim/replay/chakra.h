/* chakra.h: a step as MLCommons Chakra execution traces (schema: the vendored
 * et_def.proto), out of a scheduled task graph and back into one.
 *
 * On disk: DIR/ttasim.K.et, one file per distinct rank (the task graph's:
 * one for data parallelism, one per pipeline stage), each a GlobalMetadata
 * message then Node messages, every message after a varint of its length
 * (Chakra's protolib); DIR/rank_map.json maps each of the job's ranks to its
 * file. A directory without rank_map.json is read as PREFIX.0.et,
 * PREFIX.1.et, ... one per rank.
 *
 * Nodes: COMP_NODE (duration_micros, or num_ops and tensor_size priced on
 * the device by roofline), COMM_COLL_NODE (comm_type, comm_size in bytes,
 * pg_name: the layout dimensions of its communicator, "dp" or
 * "tp+dp", Megatron's names; priced on the platform unless it has a duration),
 * COMM_SEND_NODE / COMM_RECV_NODE (comm_src, comm_dst: ranks; comm_tag pairs
 * them; a receive ends when its send does). data_deps and ctrl_deps are
 * dependencies alike. ttasim adds attributes the replay honours: ttasim_stream
 * (compute, comm, host, send, side: a stream runs its nodes in file order;
 * default by type, is_cpu_op: host), ttasim_kind (the breakdown's), and
 * ttasim_duration_s / ttasim_wire_s (exact seconds: duration_micros rounds). */
#ifndef TT_CHAKRA_H
#define TT_CHAKRA_H

#include <stddef.h>
#include <stdint.h>

#include "common/error.h"
#include "sim/replay/device_model.h"
#include "sim/replay/step.h"
#include "sim/replay/taskgraph.h"

/* Bounds on what a reader allocates. */
#define CHAKRA_MAX_FILE_BYTES (1u << 30)
#define CHAKRA_MAX_NODES (1L << 24)
#define CHAKRA_MAX_FILES 4096
#define CHAKRA_MAX_RANKS (1 << 20)

typedef struct chakra_trace chakra_trace;

/* A scheduled step graph (step_sink) as a trace: collective tasks tagged
 * with their step_coll (c, n) name its type, size and layout dimensions;
 * world ranks, file_of_rank[r] the graph rank that rank r runs. */
int chakra_from_graph(const taskgraph *g, const step_coll *c, size_t n, int world, const int *file_of_rank,
                      chakra_trace **out, tt_error *err);

/* Writes DIR (created if missing) as above. */
int chakra_write(const chakra_trace *t, const char *dir, tt_error *err);

/* Reads DIR; errors name the file, the node id or byte offset, the field and
 * what was expected. */
int chakra_read(const char *dir, chakra_trace **out, tt_error *err);

/* Parses one file's bytes (named `name` in errors) as a one-rank trace. */
int chakra_parse(const char *name, const uint8_t *bytes, size_t len, chakra_trace **out, tt_error *err);

/* The collectives without a recorded duration, in file and node order: what
 * the platform prices (coll_s of chakra_replay). Returns how many; out may be
 * NULL to count. */
size_t chakra_collectives(const chakra_trace *t, step_coll *out);
/* The job's ranks (a one-rank-per-file trace: its files). */
int chakra_world(const chakra_trace *t);

/* Replays the trace: compute nodes by duration or num_ops and tensor_size on
 * d, unpriced collectives by coll_s (chakra_collectives' order). Fills
 * time_s (the last rank's end), compute_s, optimizer_s, comm_s,
 * exposed_comm_s, host_embedding_s and idle_s of out. */
int chakra_replay(const chakra_trace *t, const device_model *d, const double *coll_s, step_result *out,
                  tt_error *err);

void chakra_free(chakra_trace *t);

#endif
