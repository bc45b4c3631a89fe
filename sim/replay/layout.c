/* layout.c: parallel layouts and their communicators (layout.h). */
#include "sim/replay/layout.h"

#include <string.h>

static const char *const NAMES[LAYOUT_DIMS] = {"tp", "cp", "ep", "dp", "pp"};
/* Megatron-Core's default order (parallel_state: order="tp-cp-ep-dp-pp"). */
static const int DEFAULT_ORDER[LAYOUT_DIMS] = {LAYOUT_TENSOR, LAYOUT_CONTEXT, LAYOUT_EXPERT, LAYOUT_DATA,
                                               LAYOUT_PIPELINE};

const char *layout_dim_name(layout_dim d)
{
    return d >= 0 && d < LAYOUT_DIMS ? NAMES[d] : "?";
}

static int parse_order(const char *text, int order[LAYOUT_DIMS])
{
    int seen = 0, n = 0;
    const char *s = text;
    while (*s && n < LAYOUT_DIMS) {
        size_t len = strcspn(s, "-");
        int d = -1;
        for (int k = 0; k < LAYOUT_DIMS && d < 0; k++)
            if (len == 2 && strncmp(s, NAMES[k], 2) == 0)
                d = k;
        if (d < 0 || seen >> d & 1)
            return -1;
        seen |= 1 << d;
        order[n++] = d;
        s += len + (s[len] == '-');
    }
    return n == LAYOUT_DIMS && !*s ? 0 : -1;
}

int layout_make(const int degree[LAYOUT_DIMS], const char *order, int ranks, const char *where, layout *out,
                tt_error *err)
{
    memset(out, 0, sizeof *out);
    out->ranks = ranks;
    memcpy(out->order, DEFAULT_ORDER, sizeof out->order);
    if (order && parse_order(order, out->order))
        return tt_error_set(err, TT_EINPUT, "%s.order: \"%s\" is not an order of the five dimensions; expected "
                            "tp, cp, ep, dp and pp each once joined by '-', innermost first (\"tp-cp-ep-dp-pp\")",
                            where, order);
    long others = 1;
    for (int d = 0; d < LAYOUT_DIMS; d++) {
        out->degree[d] = degree[d] > 0 ? degree[d] : 1;
        if (d != LAYOUT_DATA)
            others *= out->degree[d];
    }
    if (degree[LAYOUT_DATA] <= 0) {
        if (others > ranks || ranks % others)
            return tt_error_set(err, TT_EINPUT, "%s: the degrees other than data (%ld ranks) do not divide the "
                                "%d ranks; choose degrees whose product divides them", where, others, ranks);
        out->degree[LAYOUT_DATA] = (int)(ranks / others);
    }
    out->expert_dims = LAYOUT_DIM(LAYOUT_EXPERT);
    if (others * out->degree[LAYOUT_DATA] != ranks)
        return tt_error_set(err, TT_EINPUT, "%s: tensor %d x context %d x expert %d x data %d x pipeline %d is %ld "
                            "ranks, the platform has %d; leave data out to derive it", where,
                            out->degree[LAYOUT_TENSOR], out->degree[LAYOUT_CONTEXT], out->degree[LAYOUT_EXPERT],
                            out->degree[LAYOUT_DATA], out->degree[LAYOUT_PIPELINE],
                            others * out->degree[LAYOUT_DATA], ranks);
    return TT_OK;
}

int layout_make_experts(const int degree[LAYOUT_DIMS], int expert_tensor, const char *order, int ranks,
                        const char *where, layout *out, tt_error *err)
{
    int grid[LAYOUT_DIMS], ep = degree[LAYOUT_EXPERT] > 0 ? degree[LAYOUT_EXPERT] : 1;
    for (int d = 0; d < LAYOUT_DIMS; d++)
        grid[d] = degree[d] > 0 ? degree[d] : 1;
    long dense = (long)grid[LAYOUT_TENSOR] * grid[LAYOUT_CONTEXT] * grid[LAYOUT_PIPELINE];
    long dp = degree[LAYOUT_DATA] > 0 ? degree[LAYOUT_DATA] : dense <= ranks && ranks % dense == 0 ? ranks / dense : 0;
    if (dp == 0)
        return tt_error_set(err, TT_EINPUT, "%s: tensor x context x pipeline (%ld ranks) does not divide the %d ranks; "
                            "choose degrees whose product divides them", where, dense, ranks);
    /* the ranks of a stage that hold different experts: its data ranks, or all of them */
    int folded = expert_tensor == 1 && grid[LAYOUT_TENSOR] * grid[LAYOUT_CONTEXT] > 1 && ep > 1;
    int inner = folded ? grid[LAYOUT_TENSOR] * grid[LAYOUT_CONTEXT] : 1;
    if (ep % inner || dp % (ep / inner))
        return tt_error_set(err, TT_EINPUT, "%s.expert: %d expert-parallel ranks do not divide %s%ld data-parallel "
                            "ranks%s; choose an expert degree that does", where, ep, folded ? "tensor x context x " : "",
                            dp, folded ? " in whole multiples of tensor x context (expert_tensor 1)" : "");
    grid[LAYOUT_EXPERT] = ep / inner;
    grid[LAYOUT_DATA] = (int)(dp / grid[LAYOUT_EXPERT]);
    int rc = layout_make(grid, order, ranks, where, out, err);
    if (rc == TT_OK && folded)
        out->expert_dims = LAYOUT_DIM(LAYOUT_TENSOR) | LAYOUT_DIM(LAYOUT_CONTEXT) | LAYOUT_DIM(LAYOUT_EXPERT);
    return rc;
}

void layout_data_only(int ranks, layout *out)
{
    int degree[LAYOUT_DIMS] = {0};
    tt_error ignored = {0};
    layout_make(degree, NULL, ranks, "", out, &ignored);
}

void layout_coords(const layout *l, int rank, int coord[LAYOUT_DIMS])
{
    for (int k = 0; k < LAYOUT_DIMS; k++) {
        int d = l->order[k];
        coord[d] = rank % l->degree[d];
        rank /= l->degree[d];
    }
}

int layout_rank(const layout *l, const int coord[LAYOUT_DIMS])
{
    int rank = 0;
    for (int k = LAYOUT_DIMS - 1; k >= 0; k--) {
        int d = l->order[k];
        rank = rank * l->degree[d] + coord[d];
    }
    return rank;
}

int layout_group_size(const layout *l, unsigned dims)
{
    int n = 1;
    for (int d = 0; d < LAYOUT_DIMS; d++)
        if (dims & LAYOUT_DIM(d))
            n *= l->degree[d];
    return n;
}

int layout_groups(const layout *l, unsigned dims)
{
    return l->ranks / layout_group_size(l, dims);
}

/* Mixed-radix counting over the dimensions of a set (in or out of it), in
 * layout order, innermost fastest: the k-th combination's coordinates. */
static void spread(const layout *l, unsigned dims, int in, int k, int coord[LAYOUT_DIMS])
{
    for (int i = 0; i < LAYOUT_DIMS; i++) {
        int d = l->order[i];
        if (!(dims & LAYOUT_DIM(d)) == !!in) /* in: the set's dimensions; else the others */
            continue;
        coord[d] = k % l->degree[d];
        k /= l->degree[d];
    }
}

void layout_group(const layout *l, unsigned dims, int g, int *members)
{
    int coord[LAYOUT_DIMS] = {0}, n = layout_group_size(l, dims);
    spread(l, dims, 0, g, coord); /* the group: the other dimensions' coordinates */
    for (int k = 0; k < n; k++) {
        spread(l, dims, 1, k, coord);
        members[k] = layout_rank(l, coord);
    }
}
