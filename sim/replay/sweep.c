#include "sim/replay/sweep.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/parallel.h"
#include "sim/replay/batch_schedule.h"
#include "sim/replay/point.h"

size_t run_record_bytes(void)
{
    return sizeof(point_outcome);
}

size_t run_sweep_points(const scenario *sc)
{
    if (!sc->n_sweep_batch && !sc->n_sweep_nodes && !sc->n_sweep_paths)
        return 0;
    size_t n = (sc->n_sweep_batch ? sc->n_sweep_batch : 1) * (sc->n_sweep_nodes ? sc->n_sweep_nodes : 1);
    for (size_t k = 0; k < sc->n_sweep_paths; k++)
        n *= json_array_size(sc->sweep_values[k]);
    return n;
}

/* A platform the sweep's points run on: their scenario's "platform" and
 * "devices" at a node count, loaded once for all the points that ask it. */
typedef struct sweep_cluster {
    const scenario *sc; /* the run's, or own (a swept path changed its platform) */
    int nodes;
    int has_sc;
    scenario own_sc;
    const cluster *c; /* &own, or the scenario's own point's; NULL: rc and err say why */
    cluster own;
    int rc;
    tt_error err;
} sweep_cluster;

/* The sweep as independent points: point i is combination i / grid of the
 * swept paths, then node count (i mod grid) / nb and batch i mod nb. */
typedef struct sweep {
    const run_ctx *x;
    const run_point *base; /* the scenario's own point */
    size_t nb, grid;
    const size_t *own;     /* the points this process runs, in sweep order */
    const sweep_cluster *clusters; /* every platform this process's points run on */
    size_t n_clusters;
    void (*progress)(size_t done, size_t total);
} sweep;

/* Whether a sweep point's scenario agrees with the run's on the keys a part
 * of the run is built from (its traces and convergence, its platform). */
static int same_keys(const scenario *a, const scenario *b, const char *const *keys)
{
    for (int i = 0; keys[i]; i++) {
        json_t *x = json_object_get(a->doc, keys[i]), *y = json_object_get(b->doc, keys[i]);
        if ((x || y) && !json_equal(x, y))
            return 0;
    }
    return 1;
}

static const char *const WORKLOAD_KEYS[] = {"workload", "optimizer", "convergence", NULL};
static const char *const PLATFORM_KEYS[] = {"platform", "devices", NULL};

/* Combination `combo` of the swept paths (the last varies fastest): its
 * scenario and its label. */
static int path_point(const scenario *sc, size_t combo, scenario *out, char *label, size_t label_bytes,
                      tt_error *err)
{
    json_t *vals[SCENARIO_MAX_SWEEP_PATHS];
    size_t used = 0;
    label[0] = '\0';
    for (size_t k = sc->n_sweep_paths; k-- > 0;) {
        size_t n = json_array_size(sc->sweep_values[k]);
        vals[k] = json_array_get(sc->sweep_values[k], combo % n);
        combo /= n;
    }
    for (size_t k = 0; k < sc->n_sweep_paths; k++) {
        char *text = json_dumps(vals[k], JSON_ENCODE_ANY | JSON_COMPACT), real[32];
        const char *shown = json_is_string(vals[k]) ? json_string_value(vals[k]) : text;
        if (json_is_real(vals[k])) { /* 0.8, not Jansson's 0.80000000000000004 */
            snprintf(real, sizeof real, "%.6g", json_real_value(vals[k]));
            shown = real;
        }
        used += (size_t)snprintf(label + used, used < label_bytes ? label_bytes - used : 0, "%s%s=%s",
                                 k ? ", " : "", sc->sweep_path[k], shown ? shown : "?");
        free(text);
    }
    return scenario_at(sc, sc->sweep_path, vals, sc->n_sweep_paths, out, err);
}

/* Point i's context: its combination's scenario, its request and cluster,
 * and, when its scenario changes the workload, its own traces and
 * convergence model; a platform that does not load is the point's error. */
typedef struct point_ctx {
    const scenario *sc; /* the run's, or &psc */
    const run_ctx *x;
    const cluster *c; /* NULL: crc and cerr say why */
    int crc;
    tt_error cerr;
    int nodes;
    long global_batch;
    int paths, has_x;
    scenario psc;
    run_ctx own_x;
    cluster own_c;
    char label[160];
} point_ctx;

/* Point i's scenario, label, node count and global batch. */
static int point_request(const sweep *s, size_t i, point_ctx *pc, tt_error *err)
{
    const scenario *sc = s->x->sc;
    memset(pc, 0, sizeof *pc);
    pc->sc = sc;
    pc->x = s->x;
    pc->paths = sc->n_sweep_paths > 0;
    int rc;
    if (pc->paths) {
        if ((rc = path_point(sc, i / s->grid, &pc->psc, pc->label, sizeof pc->label, err)))
            return rc;
        pc->sc = &pc->psc;
    }
    size_t g = i % s->grid;
    pc->nodes = pc->sc->n_sweep_nodes ? pc->sc->sweep_nodes[g / s->nb] : pc->sc->nodes;
    pc->global_batch = pc->sc->n_sweep_batch ? pc->sc->sweep_batch[g % s->nb] : pc->sc->global_batch;
    return TT_OK;
}

static const sweep_cluster *find_cluster(const sweep_cluster *sc, size_t n, const scenario *ps, int nodes)
{
    for (size_t k = 0; k < n; k++)
        if (sc[k].nodes == nodes && (sc[k].sc == ps || same_keys(sc[k].sc, ps, PLATFORM_KEYS)))
            return &sc[k];
    return NULL;
}

static int point_open(const sweep *s, size_t i, point_ctx *pc, tt_error *err)
{
    int rc = point_request(s, i, pc, err);
    if (rc)
        return rc;
    const sweep_cluster *found = find_cluster(s->clusters, s->n_clusters, pc->sc, pc->nodes);
    if (found) {
        pc->c = found->c;
        pc->crc = found->rc;
        pc->cerr = found->err;
    } else if ((pc->crc = cluster_open(pc->sc, pc->nodes, &pc->own_c, &pc->cerr)) == TT_OK) {
        pc->c = &pc->own_c;
    }
    if (pc->sc == s->x->sc || same_keys(s->x->sc, pc->sc, WORKLOAD_KEYS))
        return TT_OK;
    pc->has_x = 1;
    pc->x = &pc->own_x;
    return run_ctx_load(&pc->own_x, pc->sc, pc->c, err);
}

static void point_close(point_ctx *pc)
{
    if (pc->has_x)
        run_ctx_free(&pc->own_x);
    cluster_close(&pc->own_c);
    if (pc->paths)
        scenario_free(&pc->psc);
}

static void sweep_point(void *arg, size_t j, void *result)
{
    const sweep *s = arg;
    const scenario *sc = s->x->sc;
    point_outcome *o = result;
    size_t i = s->own[j];
    memset(o, 0, sizeof *o);
    o->present = 1;
    point_ctx pc;
    o->rc = point_open(s, i, &pc, &o->err);
    /* the scenario's own point (same request) is usually in its sweep: not simulated twice */
    if (o->rc == TT_OK && !pc.paths && pc.nodes == sc->nodes && pc.global_batch == sc->global_batch &&
        !s->base->error[0]) {
        o->pt = *s->base;
        o->reused = 1;
    } else if (o->rc == TT_OK) {
        int rc = pc.crc;
        if (rc)
            o->err = pc.cerr;
        else
            rc = batch_schedule_point(pc.x, pc.c, pc.global_batch, NULL, &o->pt, &o->err);
        o->rc = point_failed(rc, &o->pt, &o->err);
        if (o->pt.error[0]) {
            o->pt.nodes = pc.nodes ? pc.nodes : s->base->nodes;
            o->pt.global_batch = pc.global_batch;
        }
    }
    snprintf(o->pt.label, sizeof o->pt.label, "%s", pc.label);
    point_close(&pc);
}

static void sweep_progress(void *arg, size_t done, size_t total)
{
    const sweep *s = arg;
    if (s->progress)
        s->progress(done, total);
}

/* When the scenario's own point could not run, the first sweep point that
 * did names the platform and the assumptions (its context again: no simulation). */
static int describe_first_point(const sweep *s, const point_outcome *o, size_t n, run_result *out, tt_error *err)
{
    size_t i = 0;
    while (i < n && (o[i].reused || o[i].pt.error[0]))
        i++;
    if (i == n)
        return TT_OK;
    point_ctx pc;
    int rc = point_open(s, i, &pc, err);
    if (rc == TT_OK && pc.crc) {
        *err = pc.cerr;
        rc = pc.crc;
    }
    if (rc == TT_OK)
        run_describe(out, pc.x, pc.c, &o[i].pt);
    point_close(&pc);
    return rc;
}

/* Points this process runs: all, or its shard's (i mod shards); `jobs` at a time. */
static int run_own_points(const sweep *s, point_outcome *o, size_t m, const run_options *opt, tt_error *err)
{
    point_outcome *mine = calloc(m + 1, sizeof *mine);
    if (!mine)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    int rc = parallel_run(m, opt->jobs, sizeof *mine, sweep_point, sweep_progress, (void *)s, mine, err);
    for (size_t j = 0; rc == TT_OK && j < m; j++)
        o[s->own[j]] = mine[j];
    free(mine);
    return rc;
}

/* The records a merge was given: every point must be in one of them. */
static int take_records(const run_options *opt, const sweep *s, point_outcome *o, size_t n, tt_error *err)
{
    const scenario *sc = s->x->sc;
    memcpy(o, opt->records, n * sizeof *o);
    for (size_t i = 0; i < n; i++)
        if (!o[i].present)
            return tt_error_set(err, TT_EINPUT, "%s: sweep point %zu (%s%snodes %d, global batch %ld) is in none "
                                "of the shards given; merge every shard of the run", sc->path, i,
                                o[i].pt.label, o[i].pt.label[0] ? ", " : "",
                                sc->n_sweep_nodes ? sc->sweep_nodes[(i % s->grid) / s->nb] : sc->nodes,
                                sc->n_sweep_batch ? sc->sweep_batch[i % s->nb] : sc->global_batch);
    return TT_OK;
}

/* Every platform the points of this process run on, loaded here once (the
 * workers only read them): the scenario's own point's, then one per
 * distinct "platform" and "devices" of the points' scenarios and node count. */
static sweep_cluster *open_clusters(const sweep *s, size_t m, const cluster *base, size_t *n)
{
    sweep_cluster *sc = calloc(m + 1, sizeof *sc);
    *n = 0;
    if (sc && base)
        sc[(*n)++] = (sweep_cluster){.sc = s->x->sc, .nodes = base->nodes, .c = base};
    for (size_t j = 0; sc && j < m; j++) {
        point_ctx pc;
        tt_error ignored = {0}; /* a point that cannot make its scenario says so when it runs */
        if (point_request(s, s->own[j], &pc, &ignored) == TT_OK && !find_cluster(sc, *n, pc.sc, pc.nodes)) {
            sweep_cluster *e = &sc[(*n)++];
            e->nodes = pc.nodes;
            e->sc = s->x->sc;
            if (pc.paths) { /* kept while its platform is: the platform may refer to it */
                e->own_sc = pc.psc;
                e->has_sc = 1;
                e->sc = &e->own_sc;
                pc.paths = 0;
            }
            if ((e->rc = cluster_open(e->sc, e->nodes, &e->own, &e->err)) == TT_OK)
                e->c = &e->own;
        }
        point_close(&pc);
    }
    return sc;
}

static void close_clusters(sweep_cluster *sc, size_t n)
{
    for (size_t k = 0; sc && k < n; k++) {
        cluster_close(&sc[k].own);
        if (sc[k].has_sc)
            scenario_free(&sc[k].own_sc);
    }
    free(sc);
}

/* Points in sweep order: the first error stops the run, and when the
 * scenario's own point could not run the first that did describes it. */
static int collect(const sweep *s, point_outcome *o, size_t n, run_result *out, tt_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (o[i].rc) {
            *err = o[i].err;
            return o[i].rc;
        }
        out->points[out->n_points++] = o[i].pt;
    }
    int rc = out->base.error[0] ? describe_first_point(s, o, n, out, err) : TT_OK;
    /* scaling efficiency: throughput per rank against the first point */
    for (size_t i = 0; rc == TT_OK && i < out->n_points && s->x->sc->n_sweep_nodes > 1; i++) {
        const run_point *a = &out->points[0], *b = &out->points[i];
        if (!a->error[0] && !b->error[0])
            out->points[i].scaling_efficiency = (b->samples_per_s / b->ranks) / (a->samples_per_s / a->ranks);
    }
    return rc;
}

int sweep_run(const run_ctx *x, const cluster *base, const run_options *opt, run_result *out, tt_error *err)
{
    const scenario *sc = x->sc;
    size_t nb = sc->n_sweep_batch ? sc->n_sweep_batch : 1;
    size_t n = run_sweep_points(sc), m = 0;
    int shards = opt->shards > 1 ? opt->shards : 1;
    out->points = calloc(n, sizeof *out->points);
    point_outcome *o = calloc(n, sizeof *o);
    size_t *own = calloc(n, sizeof *own);
    int rc = !out->points || !o || !own ? tt_error_set(err, TT_EINTERNAL, "out of memory") : TT_OK;
    for (size_t i = 0; rc == TT_OK && i < n; i++)
        if ((int)(i % (size_t)shards) == opt->shard)
            own[m++] = i;
    sweep s = {x, &out->base, nb, nb * (sc->n_sweep_nodes ? sc->n_sweep_nodes : 1), own, NULL, 0, opt->progress};
    sweep_cluster *clusters = NULL;
    if (rc == TT_OK && !opt->records && !(clusters = open_clusters(&s, m, base, &s.n_clusters)))
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    s.clusters = clusters;
    if (rc == TT_OK && opt->progress && !opt->records)
        opt->progress(0, m);
    if (rc == TT_OK)
        rc = opt->records ? take_records(opt, &s, o, n, err) : run_own_points(&s, o, m, opt, err);
    if (rc == TT_OK && opt->shards > 0) { /* a shard: its records go to merge */
        out->records = o;
        out->n_records = n;
        o = NULL;
    } else if (rc == TT_OK) {
        rc = collect(&s, o, n, out, err);
    }
    close_clusters(clusters, s.n_clusters);
    free(o);
    free(own);
    return rc;
}
