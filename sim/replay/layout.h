/* layout.h: a training job's parallel layout. A job is a shape of parallel
 * dimensions (tensor, context, expert, data, pipeline), each of a degree,
 * their product the platform's ranks, mapped onto the ranks in a stated order
 * (innermost first, as Megatron-Core's `order` "tp-cp-ep-dp-pp": tensor
 * innermost, so its groups stay inside an NVLink domain). A communicator of
 * a set of dimensions is the ranks that differ only in those coordinates:
 * the tensor groups, the data-parallel groups of every pipeline stage, or a
 * MoE model's dense data-parallel group over data x expert. ZeRO/FSDP
 * sharding is a property of the data dimension. Today's jobs are the layout
 * with data parallelism only. Pure arithmetic: no platform, no SimGrid. */
#ifndef TT_LAYOUT_H
#define TT_LAYOUT_H

#include "common/error.h"

typedef enum { LAYOUT_TENSOR, LAYOUT_CONTEXT, LAYOUT_EXPERT, LAYOUT_DATA, LAYOUT_PIPELINE, LAYOUT_DIMS } layout_dim;

/* A set of dimensions: 1 << layout_dim for each. */
#define LAYOUT_DIM(d) (1u << (d))

typedef struct layout {
    int degree[LAYOUT_DIMS];
    int order[LAYOUT_DIMS]; /* the dimensions innermost first: rank = coordinates in this order, mixed radix */
    int ranks;
    int zero; /* the data dimension's sharding: 0 none, 1-3 (step_options.zero) */
    unsigned expert_dims; /* the expert-parallel communicator: the expert dimension, or with experts
                             unsplit by the tensor group, tensor x context x expert (layout_make_experts) */
} layout;

/* The layout of `ranks` ranks with these degrees (0: 1, but the data degree
 * 0 is derived: ranks over the others' product) in the order given as
 * dimension names joined by '-' ("tp-cp-ep-dp-pp"; NULL: that one), names
 * tp, cp, ep, dp, pp, each once. Fails (TT_EINPUT, naming `where`, the
 * scenario path of the layout) when the product is not the ranks or the
 * order is not a permutation of the names. */
int layout_make(const int degree[LAYOUT_DIMS], const char *order, int ranks, const char *where, layout *out,
                tt_error *err);

/* The layout of a MoE job given as Megatron-Core gives it: degree[EXPERT]
 * the expert-parallel size, carved out of the data-parallel ranks, and
 * degree[DATA] the data-parallel size of the dense layers (0: ranks over
 * tensor x context x pipeline). expert_tensor is how many ranks split each
 * expert: the tensor degree (0 means it), or 1 (Megatron-Core's
 * --expert-tensor-parallel-size 1: the tensor and context ranks of a stage
 * hold different experts, so the expert group spans them first). Fails
 * (TT_EINPUT) when the expert size does not divide as that needs. */
int layout_make_experts(const int degree[LAYOUT_DIMS], int expert_tensor, const char *order, int ranks,
                        const char *where, layout *out, tt_error *err);

/* Data parallelism alone over ranks: today's jobs. */
void layout_data_only(int ranks, layout *out);

/* The communicators of the dimensions in `dims` (LAYOUT_DIM bits): how many
 * there are, and the size of each (the product of their degrees). */
int layout_groups(const layout *l, unsigned dims);
int layout_group_size(const layout *l, unsigned dims);

/* The ranks of communicator g (0 <= g < layout_groups) of `dims`, in the
 * order of their coordinates (innermost dimension fastest): group_size of them. */
void layout_group(const layout *l, unsigned dims, int g, int *members);

/* A rank's coordinate in each dimension, and the rank of coordinates. */
void layout_coords(const layout *l, int rank, int coord[LAYOUT_DIMS]);
int layout_rank(const layout *l, const int coord[LAYOUT_DIMS]);

/* "tp", "cp", "ep", "dp", "pp". */
const char *layout_dim_name(layout_dim d);

#endif
