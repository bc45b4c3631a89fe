/* host_embedding.h: DLRM embedding tables in the CPU sockets' memory, as on
 * Zion. The tables are sharded over the sockets of every node (N nodes of S
 * sockets: table t on socket t mod NS; a trace merges its tables into one
 * layer, so every socket holds an equal share of the rows a sample looks
 * up). Per micro-step, forward, every socket gathers its rows in DRAM and
 * sends them to every accelerator of every node; backward, every accelerator
 * sends the rows' gradients back and the socket applies the sparse update in
 * DRAM. The transfers all run at once on SimGrid over the platform's routes
 * (UPI, PCIe switches, and between nodes the NICs and the fabric: contention
 * included); the DRAM work runs at the socket's mem_Bps x mem_efficiency,
 * pipelined with the transfers (rows move in chunks), so a direction costs
 * the slower of the two. The flows grow as N^2 S A. */
#ifndef TT_HOST_EMBEDDING_H
#define TT_HOST_EMBEDDING_H

#include "common/error.h"
#include "platforms/host_rows.h"
#include "platforms/link_usage.h"
#include "platforms/platform.h"

/* Times n loads (one per workload phase: what one accelerator moves per
 * micro-step, see step_host_load) in one simulation (none when no load has
 * rows). links (not NULL): the links the rows and gradients cross, load k's
 * micro-step counted link_weight[k] times. Fails with TT_EINPUT when the
 * platform has no CPU socket routed to its accelerators. */
int host_embedding_time(const platform *p, network_model net, const step_host_load *loads, int n,
                        const double *link_weight, host_emb_time *out, link_usage *links, tt_error *err);

#endif
