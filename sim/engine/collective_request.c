/* collective_request.c: the one place a collective request gets its defaults,
 * so `run`, `collective` and `bench sim` time the same work the same way. */
#include "sim/engine/collective_sim.h"

#include "platforms/device.h"

/* NCCL pipelines in slots of its buffer: DEFAULT_BUFFSIZE 4 MiB (src/init.cc)
 * over NCCL_STEPS 8 (src/include/device.h) = 512 KiB for the Simple protocol;
 * 1 MiB keeps that order of magnitude at half the simulated steps. */
#define COLL_DEFAULT_CHUNK_BYTES 1048576.0

/* The receiver reads both operands and writes the sum: 3 bytes of memory
 * traffic per byte reduced, at the bandwidth a memory-bound kernel reaches
 * (mem_Bps x mem_efficiency, as the roofline uses for layers; 0: unknown). */
static double reduce_s_per_byte(const platform *p)
{
    const device_info *d = platform_device(p, 0);
    return d && d->mem_Bps > 0 ? 3.0 / (d->mem_Bps * d->mem_efficiency) : 0.0;
}

coll_request coll_request_on(const platform *p, const coll_params *asked, const int *members, int replicas)
{
    coll_request r = {.params = *asked, .reduce_s_per_byte = reduce_s_per_byte(p), .members = members,
                      .replicas = replicas > 1 ? replicas : 1};
    coll_params *c = &r.params;
    int per_node = platform_ranks_per_node(p);
    if (!c->ranks)
        c->ranks = platform_ranks(p);
    if (!c->chunk_bytes)
        c->chunk_bytes = COLL_DEFAULT_CHUNK_BYTES;
    if (!c->ranks_per_node && members) { /* the communicator's members on its first member's node */
        for (int i = 0; i < c->ranks; i++)
            c->ranks_per_node += members[i] / per_node == members[0] / per_node;
    }
    if (!c->ranks_per_node)
        c->ranks_per_node = per_node;
    /* hier: one inter-node ring per NIC, as NCCL opens one channel per NIC */
    /* tori: the slice's physical grid, so rings follow its links */
    if (!c->dims[0])
        platform_torus_dims(p, c->dims);
    /* a multi-pod slice: the torus algorithms' last phase runs over the pods
     * (a communicator of every rank in order; others keep to the grid's rules) */
    int whole = c->ranks == platform_ranks(p);
    for (int i = 0; whole && members && i < c->ranks; i++)
        whole = members[i] == i;
    if (!c->pods && whole && platform_pods(p) > 1)
        c->pods = platform_pods(p);
    int nics = platform_node_components(p, DEVICE_NIC, NULL, NULL, 0);
    if (!c->nics_per_node && nics > 0 && c->ranks_per_node % nics == 0)
        c->nics_per_node = nics;
    return r;
}

coll_request coll_request_build(const platform *p, const coll_params *asked)
{
    return coll_request_on(p, asked, NULL, 1);
}
