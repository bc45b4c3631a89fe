/* scenario_parallel.c: a scenario's "parallel" section (scenario_load.h). */
#include "sim/replay/scenario_load.h"

#include <string.h>

/* parallel: {tensor, pipeline, context, expert, data (0: the ranks over
 * tensor x context x pipeline; expert is carved out of them, as
 * Megatron-Core counts), expert_tensor (1 or the tensor degree),
 * expert_dispatcher ("alltoall" | "deepep"), expert_overlap, order, sequence_parallel, virtual_stages, zero 0-3, recompute,
 * first_stage_layers, last_stage_layers}.
 * The degrees' product is checked against the ranks at run (layout_make),
 * once the platform is known. recompute: "full" is workload.recompute,
 * "selective" (Korthikanti et al. 2022: the attention core recomputed, its
 * scores not kept) is workload.attention "fused"'s memory and work. */
int scenario_load_parallel(const jx_obj *r, scenario *s)
{
    static const char *const keys[] = {"tensor", "pipeline", "context", "expert", "data", "expert_tensor",
                                       "expert_dispatcher", "expert_overlap", "order",
                                       "sequence_parallel", "virtual_stages", "zero", "recompute",
                                       "first_stage_layers", "last_stage_layers", NULL};
    static const char *const names[] = {"tensor", "context", "expert", "data", "pipeline"}; /* layout_dim order */
    static const char *const recompute[] = {"none", "selective", "full", NULL};
    static const char *const dispatchers[] = {"alltoall", "deepep", NULL};
    jx_obj p;
    long zero = 0, vs = 1, v, first = 0, last = 0, etp = 0;
    int rc, rec = -1;
    const char *order = NULL;
    if ((rc = jx_child(r, "parallel", 0, &p)) || !p.obj)
        return rc;
    if (s->is_collective)
        return tt_error_set(r->err, TT_EINPUT, "%s: $.parallel: a collective scenario has no training step to "
                            "parallelise; remove it", r->file);
    if ((rc = jx_check_keys(&p, keys)))
        return rc;
    for (int d = 0; d < LAYOUT_DIMS; d++) {
        if ((rc = jx_int(&p, names[d], 0, 1, 1 << 20, &v)))
            return rc;
        s->degree[d] = jx_has(&p, names[d]) ? (int)v : 0;
    }
    if ((rc = jx_int(&p, "zero", 0, 0, 3, &zero)) ||
        (rc = jx_int(&p, "expert_tensor", 0, 1, 1 << 20, &etp)) ||
        (rc = jx_enum(&p, "expert_dispatcher", 0, dispatchers, &s->expert_dispatcher)) ||
        (rc = jx_bool(&p, "expert_overlap", 0, &s->expert_overlap)) ||
        (rc = jx_string(&p, "order", 0, &order)) || (rc = jx_bool(&p, "sequence_parallel", 0, &s->sequence_parallel)) ||
        (rc = jx_int(&p, "virtual_stages", 0, 1, 1024, &vs)) || (rc = jx_enum(&p, "recompute", 0, recompute, &rec)) ||
        (rc = jx_int(&p, "first_stage_layers", 0, 1, 1 << 20, &first)) ||
        (rc = jx_int(&p, "last_stage_layers", 0, 1, 1 << 20, &last)))
        return rc;
    if (etp > 1 && etp != (s->degree[LAYOUT_TENSOR] > 0 ? s->degree[LAYOUT_TENSOR] : 1))
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.expert_tensor: %ld; each expert is split over 1 rank or "
                            "over the tensor group (%d); use 1 or leave it out", p.file, p.path, etp,
                            s->degree[LAYOUT_TENSOR] > 0 ? s->degree[LAYOUT_TENSOR] : 1);
    /* ZeRO-3 gathers each block's parameters over the data group as it runs: with pipeline stages or
     * experts its groups and its schedule would be another's (DeepSpeed refuses ZeRO-3 with pipelines) */
    if (zero == 3 && (s->degree[LAYOUT_PIPELINE] > 1 || s->degree[LAYOUT_EXPERT] > 1))
        return tt_error_set(p.err, TT_EINPUT, "%s: %s.zero: 3 (ZeRO-3, FSDP's FULL_SHARD) with %s %d, which ttasim "
                            "does not model; use zero 1 or 2 with pipeline or expert parallelism, or leave them 1",
                            p.file, p.path, s->degree[LAYOUT_PIPELINE] > 1 ? "pipeline" : "expert",
                            s->degree[LAYOUT_PIPELINE] > 1 ? s->degree[LAYOUT_PIPELINE] : s->degree[LAYOUT_EXPERT]);
    s->expert_tensor = (int)etp;
    s->first_stage_layers = (int)first;
    s->last_stage_layers = (int)last;
    if (jx_has(&p, "recompute") && rec == 2)
        s->recompute = 1;
    else if (jx_has(&p, "recompute") && rec == 1)
        s->fused_attention = 1;
    else if (jx_has(&p, "recompute"))
        s->recompute = 0;
    s->zero = (int)zero;
    s->virtual_stages = (int)vs;
    s->layout_order = scenario_dup(order);
    return TT_OK;
}
