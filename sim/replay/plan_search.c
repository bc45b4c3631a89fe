#include "sim/replay/plan_search.h"

#include <math.h>
#include <stdlib.h>

#include "sim/replay/point.h"

/* A plan per table group: each "auto" group in turn takes the plan that
 * makes the step fastest with the other groups as they stand (the autos
 * start table_wise, or row_wise beside a row_wise group; a plan that does
 * not fit is +inf, one that conflicts with the others is skipped). */
static int search_mix(const run_ctx *x, const cluster *c, long global_batch, link_usage *links, run_point *pt,
                      tt_error *err)
{
    const sharding_mix *asked = &x->sc->shard_mix;
    sharding_mix m = *asked;
    int row_wise = 0, rc = TT_OK;
    for (int g = 0; g < m.n_groups; g++)
        row_wise |= m.plan[g] == SHARD_ROW_WISE;
    for (int g = 0; g < m.n_groups; g++)
        if (m.plan[g] == SHARD_AUTO)
            m.plan[g] = row_wise ? SHARD_ROW_WISE : SHARD_TABLE_WISE;
    run_point cand;
    for (int g = 0; rc == TT_OK && g < m.n_groups; g++) {
        if (asked->plan[g] != SHARD_AUTO)
            continue;
        sharding_kind best = m.plan[g];
        double best_s = INFINITY;
        for (int k = 0; rc == TT_OK && k < SHARD_HOST; k++) {
            m.plan[g] = (sharding_kind)k;
            if (sharding_mix_conflict(&m))
                continue;
            rc = point_run(x, c, global_batch, m.plan[0], &m, 1, NULL, &cand, err);
            if (rc == TT_OK && cand.step.time_s < best_s) {
                best_s = cand.step.time_s;
                best = (sharding_kind)k;
            }
        }
        m.plan[g] = best;
    }
    return rc ? rc : point_run(x, c, global_batch, m.plan[0], &m, 0, links, pt, err);
}

/* Every plan for "auto", each counting its links into `cand` when asked: the
 * fastest that fits, with its links; none fits: table_wise names why. */
static int search_auto(const run_ctx *x, const cluster *c, long global_batch, link_usage *links, run_point *pt,
                       tt_error *err)
{
    link_usage *cand_links = links ? malloc(sizeof *cand_links) : NULL;
    if (links && !cand_links)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    run_point cand;
    pt->step.time_s = INFINITY;
    int rc = TT_OK;
    for (int k = 0; rc == TT_OK && k < SHARD_COUNT; k++) {
        if (k == SHARD_HOST && (c->sum.cpu_sockets == 0 || x->sc->cpu_ranks)) /* no sockets, or they are the ranks */
            continue;
        rc = point_run(x, c, global_batch, (sharding_kind)k, NULL, 1, cand_links, &cand, err);
        if (rc == TT_OK && cand.step.time_s < pt->step.time_s) {
            *pt = cand;
            if (links)
                *links = *cand_links;
        }
    }
    free(cand_links);
    if (rc == TT_OK && isinf(pt->step.time_s))
        rc = point_run(x, c, global_batch, SHARD_TABLE_WISE, NULL, 0, links, pt, err);
    return rc;
}

int plan_search_point(const run_ctx *x, const cluster *c, long global_batch, link_usage *links, run_point *pt,
                      tt_error *err)
{
    const scenario *sc = x->sc;
    if (sc->shard_mix.n_groups > 0 && run_ctx_has_tables(x))
        return search_mix(x, c, global_batch, links, pt, err);
    if (sc->sharding != SHARD_AUTO || !run_ctx_has_tables(x))
        return point_run(x, c, global_batch, sc->sharding == SHARD_AUTO ? SHARD_TABLE_WISE : sc->sharding,
                         NULL, 0, links, pt, err);
    return search_auto(x, c, global_batch, links, pt, err);
}
