/* nccl_plan.h: what NCCL would run on a platform's first `ranks` ranks. The
 * communicator NCCL's tuner sees is read off the platform (GPU generation,
 * NVLink or PCIe inside a node, links per GPU, NICs per node, in-switch
 * reduction), then collectives/nccl.h picks the algorithm and protocol. The
 * pick runs as a ttasim schedule on SimGrid; NCCL's modelled latency beyond
 * the links' own is added as software overhead. No SimGrid here. */
#ifndef TT_NCCL_PLAN_H
#define TT_NCCL_PLAN_H

#include "collectives/nccl.h"
#include "collectives/schedule.h"
#include "platforms/platform.h"

typedef struct nccl_plan {
    nccl_comm comm;
    nccl_choice choice;
    coll_params params;  /* what to simulate: the schedule and the bytes on the wire */
    int switch_reduces;  /* NVLS: the switch reduces, the GPUs do not */
    double reduce_s_per_byte; /* the reduction NCCL's pipelined kernels leave exposed */
    double overhead_s;   /* NCCL's latency beyond the links' own, added to the simulated time */
} nccl_plan;

/* 0, or -1 when the ranks are not NVIDIA GPUs (NCCL does not apply). */
int nccl_comm_of(const platform *p, int ranks, nccl_comm *out);

/* The plan for params (op, ranks, bytes; algo is ignored): 0, or -1 when NCCL
 * does not apply (not GPUs, or an alltoall: NCCL has no tuned algorithm). */
int nccl_plan_make(const platform *p, const coll_params *params, nccl_plan *out);
/* The same with the GPU's reduction cost (coll_reduce_s_per_byte): NCCL
 * reduces slice k while slice k+1 is on the wire, so only the part slower
 * than the wire shows. */
int nccl_plan_make_reducing(const platform *p, const coll_params *params, double reduce_s_per_byte,
                            nccl_plan *out);

/* Turns a request for ALGO_NCCL into what runs: NCCL's plan on NVIDIA GPUs
 * (name "ring/Simple", *overhead_s to add to the simulated time), else the
 * platform's native schedule: the torus allreduce on a torus, else auto
 * (name ""). Other requests are left as they are. */
void nccl_resolve(const platform *p, coll_params *params, double *reduce_s_per_byte, double *overhead_s,
                  char *name, size_t name_bytes);

/* "ring/LL128", "nvls/Simple". */
const char *nccl_plan_name(const nccl_plan *plan, char *buf, size_t buf_bytes);

#endif
