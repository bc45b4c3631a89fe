/* model_internal.h: what the graph builder (graph.c), the planner (plan.c)
 * and the interpreter (model.c) share: a model is tensors and the layers
 * (ops) between them, in forward order. Not for use outside those files. */
#ifndef TT_MODEL_INTERNAL_H
#define TT_MODEL_INTERNAL_H

#include <stdint.h>

#include "trainer/graph.h"
#include "trainer/layers.h"
#include "trainer/model.h"

enum {
    OP_LINEAR, OP_CONV, OP_BN, OP_LN, OP_RELU, OP_GELU, OP_TANH, OP_DROPOUT, OP_MAXPOOL,
    OP_GAP, OP_ADD, OP_FLATTEN, OP_EMBED, OP_ATTN, OP_EMBBAG, OP_INTERACT,
    OP_SLICE0, OP_GATHER, OP_VITEMBED, OP_SOFTMAX_CE, OP_BCE, OP_CONCAT, OP_CROSS,
    OP_RMSNORM, OP_ROPE, OP_CATTN, OP_SWIGLU, OP_MOE, OP_COUNT
};

typedef struct tensor {
    int ndim, dims[3];
    long numel;      /* per sample */
    int depends;     /* computed from parameters: a gradient can flow into it */
    int needs_grad;  /* some layer's backward writes its gradient */
    float *data, *grad;
} tensor;

typedef struct op {
    int type;
    char name[64];
    int in[2], nin, out; /* out is -1 for the loss */
    int pv, npv;         /* parameter views this layer owns */
    int wv;              /* weight view it reads (own or tied), -1 when none */
    int acc[2];          /* input i's gradient is added to another consumer's */
    conv_shape cs;
    pool_shape pl;
    int rows, C, OC, T, NH, F, D, L, mode, P, V, ntypes, R;
    int relu;            /* linear, batchnorm: relu fused into the output pass */
    int haspos;          /* embedding: a learned position table */
    int KV, HS;          /* causal attention and rope: key/value heads, head size */
    int E, topk, FF;     /* moe: experts, experts per token, expert FFN width */
    const char *kind, *split; /* a tagged linear: its GEMM's kind and tensor-parallel split */
    float eps, p, theta; /* theta: rope base */
    long saved_ps, isaved_ps, saved_fixed, isaved_fixed, scratch, scratch_ps; /* *_ps: per sample */
    float *saved;
    int *isaved;
    model_layer info;
} op;

struct model {
    char name[32];
    param_set ps;
    int *init_kind;  /* per view */
    float *init_val;
    int cap_init;
    int style;
    tensor *t;
    int nt, cap_t;
    op *ops;
    int nops, cap_ops;
    int loss_op, x_tensor, finalised;
    model_inputs in;
    long table_rows[MODEL_MAX_TABLES];
    int table_bags[MODEL_MAX_TABLES];
    int batch, training;
    uint64_t seed, step;
    float loss, aux_loss; /* aux_loss: the MoE layers' load-balancing terms, in loss */
    float *arena, *scratch, *accbuf[2];
    int *iarena;
    void (*observe)(void *ctx, int layer, int backward);
    void *observe_ctx;
    int bad;
    char err[512];
};

enum { IK_ZERO, IK_ONE, IK_UNIFORM, IK_NORMAL };

static inline int last_dim(const model *m, int t)
{
    return m->t[t].dims[m->t[t].ndim - 1];
}

#endif
