/* closed_form.c: the alpha-beta-gamma formulas, derived per algorithm from
 * its steps (not from the schedule code, so the tests compare two derivations). */
#include "collectives/closed_form.h"

#include <math.h>

#include "collectives/schedule_impl.h"

/* Depth of the last position of a heap of k positions. */
static int heap_depth_of(int k, int arity)
{
    int d = 0;
    for (int p = k - 1; p > 0; p = (p - 1) / arity)
        d++;
    return d;
}

double coll_closed_form_s(const coll_params *p, double a, double beta, double g)
{
    int n = p->ranks;
    double M = p->bytes, nn = n;
    if (n < 2)
        return 0.0;
    int L = ilog2_ceil(n), Lf = ilog2_floor(n), p2 = 1 << Lf, c = coll_chunks(p, (size_t)M);
    double x = M / c, fold = n > p2 ? 2 * (a + M / beta) + M * g : 0.0;
    int D2 = heap_depth_of(n, 2);
    double tree_steps = D2 + c - 1, chain_steps = n - 1 + c - 1;
    switch (p->op) {
    case OP_ALLREDUCE:
        switch (p->algo) {
        case ALGO_RING:
            return 2 * (nn - 1) * (a + M / (nn * beta)) + (nn - 1) * (M / nn) * g;
        case ALGO_RHD:
            return fold + 2 * Lf * a + 2 * (1 - 1.0 / p2) * M / beta + (1 - 1.0 / p2) * M * g;
        case ALGO_RD:
            return fold + Lf * (a + M / beta + M * g);
        case ALGO_BINOMIAL:
            return L * (2 * a + 2 * M / beta + M * g);
        case ALGO_TREE:
            /* Up: a node receives two chunks per step; down: sends two. */
            return n % 2 ? tree_steps * (2 * a + 4 * x / beta + 2 * x * g) : NAN;
        case ALGO_DBTREE:
            /* Each tree carries half; a rank's link carries two half-chunks per step. */
            return n % 2 ? tree_steps * (2 * a + 2 * x / beta + x * g) : NAN;
        case ALGO_TORUS2D:
        case ALGO_TORUS: {
            /* Two opposite rings per dimension, each on half the vector; a
             * dimension works on what the earlier ones left (M / their sizes). */
            int dims[4] = {1, 1, 1, 1}, nd = coll_torus_dims(p, dims);
            if (coll_torus_pods(p) > 1) /* the pods' rings, last */
                dims[nd++] = coll_torus_pods(p);
            double t = 0, Md = M;
            for (int d = 0; d < nd; d++) {
                double k = dims[d];
                t += 2 * (k - 1) * (a + Md / (k * beta)) + (k - 1) * (Md / k) * g;
                Md /= k;
            }
            return t;
        }
        case ALGO_HIER: {
            /* Binomial reduce / broadcast in the NIC groups of q, rings of k leaders, k inter-node rings. */
            double gpn = p->ranks_per_node > 0 ? p->ranks_per_node : 1, N = n / gpn;
            double k = p->nics_per_node > 0 ? p->nics_per_node : gpn, lq = ilog2_ceil((int)(gpn / k));
            return lq * (2 * a + 2 * M / beta + M * g) + 2 * (k - 1) * (a + M / (k * beta)) +
                   (k - 1) * (M / k) * g + 2 * (N - 1) * (a + M / (k * N * beta)) + (N - 1) * (M / (k * N)) * g;
        }
        default: /* direct: every rank sends n-1 blocks at once, twice */
            return 2 * (a + (nn - 1) * M / (nn * beta)) + (nn - 1) * (M / nn) * g;
        }
    case OP_REDUCE_SCATTER:
        switch (p->algo) {
        case ALGO_RING:
            return (nn - 1) * (a + M / (nn * beta) + (M / nn) * g);
        case ALGO_RHD:
            return L * a + (1 - 1 / nn) * M / beta + (1 - 1 / nn) * M * g;
        case ALGO_BINOMIAL: /* reduce, then scatter halves (power of two) */
            return L * (a + M / beta + M * g) + L * a + (nn - 1) * M / (nn * beta);
        default:
            return a + (nn - 1) * M / (nn * beta) + (nn - 1) * (M / nn) * g;
        }
    case OP_ALLGATHER:
        switch (p->algo) {
        case ALGO_RING:
            return (nn - 1) * (a + M / (nn * beta));
        case ALGO_RD:
            return L * a + (nn - 1) * M / (nn * beta);
        case ALGO_BINOMIAL: /* gather (power of two), then broadcast */
            return L * a + (nn - 1) * M / (nn * beta) + L * (a + M / beta);
        default:
            return a + (nn - 1) * M / (nn * beta);
        }
    case OP_BROADCAST:
        if (p->algo == ALGO_RING)
            return chain_steps * (a + x / beta);
        if (p->algo == ALGO_TREE)
            return n % 2 ? tree_steps * (a + 2 * x / beta) : NAN;
        return L * (a + M / beta);
    case OP_REDUCE:
        if (p->algo == ALGO_RING)
            return chain_steps * (a + x / beta + x * g);
        if (p->algo == ALGO_TREE)
            return n % 2 ? tree_steps * (a + 2 * x / beta + 2 * x * g) : NAN;
        return L * (a + M / beta + M * g);
    default:
        switch (p->algo) {
        case ALGO_PAIRWISE:
            return (nn - 1) * (a + M / (nn * beta));
        case ALGO_BRUCK: {
            /* Step k moves the blocks whose index has bit k set. */
            double t = 0;
            for (int k = 0; k < L; k++) {
                int cnt = 0;
                for (int j = 0; j < n; j++)
                    cnt += (j >> k) & 1;
                t += a + cnt * M / (nn * beta);
            }
            return t;
        }
        case ALGO_HIER: {
            double gpn = p->ranks_per_node > 0 ? p->ranks_per_node : 1, N = n / gpn;
            return (gpn > 1 ? a + (gpn - 1) * M / (gpn * beta) : 0) +
                   (N > 1 ? a + (N - 1) * M / (N * beta) : 0);
        }
        default:
            return a + (nn - 1) * M / (nn * beta);
        }
    }
}
