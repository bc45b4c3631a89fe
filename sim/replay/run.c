#include "sim/replay/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/replay/assumptions.h"
#include "sim/replay/batch_schedule.h"
#include "sim/replay/chakra.h"
#include "sim/replay/point.h"
#include "sim/replay/run_ctx.h"
#include "sim/replay/sweep.h"

/* A trace made for a phase without a micro-batch replays the scenario's
 * samples per rank unscaled: the ranks of sc's platform at its node count. */
static int scenario_ranks(const scenario *sc, const cluster *c, int *ranks, tt_error *err)
{
    if (c && c->nodes == sc->nodes) {
        *ranks = platform_ranks(c->p);
        return TT_OK;
    }
    cluster own;
    int rc = cluster_open(sc, sc->nodes, &own, err);
    if (rc == TT_OK)
        *ranks = platform_ranks(own.p);
    cluster_close(&own);
    return rc;
}

/* A language model's scaling law at the scenario's target loss: N from the
 * first phase's trace (its embedding tables and an untied lm_head are not in
 * the non-embedding count, as Kaplan et al. count), batches in its sequences. */
static int load_scaling_law(run_ctx *x, tt_error *err)
{
    const scenario *sc = x->sc;
    const workload *t = &x->tr[0];
    double embedding_bytes = 0;
    int seq = 0;
    for (size_t i = 0; i < t->n_layers; i++) {
        const workload_layer *l = &t->layers[i];
        if (l->cls == OPCLASS_EMBEDDING || strcmp(l->name, "lm_head") == 0)
            embedding_bytes += l->param_bytes;
        if (!seq && l->cls == OPCLASS_ATTENTION)
            seq = l->seq_len;
    }
    char where[600];
    snprintf(where, sizeof where, "%s: $.convergence.scaling_law", sc->path);
    if (seq <= 0)
        return tt_error_set(err, TT_EINPUT, "%s: the workload (%s) has no sequence (attention layers with a "
                            "seq_len): a scaling law is for language models; use a profile for this model",
                            where, x->model);
    double non_embedding = t->param_bytes > 0 ? t->params * (1 - embedding_bytes / t->param_bytes) : 0;
    scaling_law_point law;
    int rc = scaling_law_at((scaling_law_kind)sc->scaling_law, t->params, non_embedding, sc->target_loss, where,
                            &law, err);
    if (rc)
        return rc;
    if (!(x->conv = convergence_scaling_law(&law, seq, sc->target_loss)))
        return tt_error_set(err, TT_EINTERNAL, "convergence: out of memory");
    static const char *const notes[] = {
        "convergence.e_min = the loss fit's tokens D(N, L) taken as E_min, the tokens at a batch far below "
        "B_crit (U: the fits' runs trained at batches under B_crit at their losses)",
        "convergence.b_crit = Kaplan et al.'s B_crit(L) = 2.1e8 tokens / L^(1/0.21) at the target loss, for the "
        "whole run (U: B_crit grows as the loss falls, so early steps above it are spent worse than counted)",
        "convergence.band = the fit's loss known to 0.02 nats (1 sd) and B_crit to a factor of 2 (10th-90th "
        "percentile), both U, with the run spread",
        "convergence.data = the target is a loss on the fit's own data and tokenizer (chinchilla: MassiveText, "
        "kaplan: WebText2 with GPT-2's); on other data the same number is another target (U)"};
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
        snprintf(x->conv_notes[x->n_conv_notes++], sizeof x->conv_notes[0], "%s", notes[i]);
    return TT_OK;
}

static int load_convergence(run_ctx *x, tt_error *err)
{
    const scenario *sc = x->sc;
    int rc;
    if (sc->conv == CONV_PROFILE) {
        if ((rc = convergence_load(sc->profile_path, &x->conv, err)))
            return rc;
        convergence_request want = {x->model, sc->target_dataset, sc->target_metric, sc->target_value,
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_MODEL),
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_DATASET),
                                    !!(sc->accept_mismatch & SCENARIO_ACCEPT_TARGET)};
        if ((rc = convergence_match(x->conv, &want, sc->path, x->conv_notes, &x->n_conv_notes, err)))
            return rc;
    } else if (sc->conv == CONV_MCCANDLISH) {
        if (!(x->conv = convergence_mccandlish(sc->s_min, sc->noise_scale)))
            return tt_error_set(err, TT_EINTERNAL, "convergence: out of memory");
    } else if (sc->conv == CONV_SCALING_LAW) {
        if ((rc = load_scaling_law(x, err)))
            return rc;
    } else if (sc->conv != CONV_STEPS) {
        return tt_error_set(err, TT_EINPUT, "%s: missing \"convergence\": give a \"profile\", \"mccandlish\" "
                            "{s_min, noise_scale}, \"scaling_law\" or \"steps\" to get the time to accuracy",
                            sc->path);
    }
    int assumed;
    double sd = x->conv ? convergence_run_sd(x->conv, &assumed) : 0;
    if (x->conv && assumed)
        snprintf(x->conv_notes[x->n_conv_notes++], sizeof x->conv_notes[0],
                 "convergence.run_spread = %.0f %% sd of the steps to target between seeded runs (U: the "
                 "convergence source states no repeated runs; MLPerf's reference runs spread 1-8 %%): the "
                 "band is its 10th-90th percentile, widened by the model's error between and beyond points",
                 100 * sd);
    return TT_OK;
}

int run_ctx_load(run_ctx *x, const scenario *sc, const cluster *c, tt_error *err)
{
    memset(x, 0, sizeof *x);
    x->sc = sc;
    int rc = TT_OK;
    for (size_t k = 0; rc == TT_OK && k < sc->n_phases; k++) {
        const scenario_phase *sp = &sc->phases[k];
        int mb = sp->micro_batch ? sp->micro_batch : sc->micro_batch, ranks;
        long gb = sp->global_batch ? sp->global_batch : sc->global_batch;
        if (!sp->trace_path && mb == 0 && gb > 0) {
            if ((rc = scenario_ranks(sc, c, &ranks, err)))
                return rc;
            mb = gb % ranks == 0 && gb / ranks <= (1 << 24) ? (int)(gb / ranks) : 0;
        }
        if (sp->trace_path) {
            rc = workload_load(sp->trace_path, &x->tr[k], err);
        } else if ((rc = workload_make(sp->model, &sp->opts, mb, sc->precision, sc->bucket_bytes, sc->optimizer, &x->tr[k],
                                       err))) {
            char phase[32] = "";
            if (json_object_get(json_object_get(sc->doc, "workload"), "phases"))
                snprintf(phase, sizeof phase, ".phases[%zu]", k);
            return tt_error_prefix(err, "%s: $.workload%s.model: ", sc->path, phase);
        }
    }
    if (rc == TT_OK && sc->chakra_path && (rc = chakra_read(sc->chakra_path, &x->chakra, err)) == TT_OK &&
        c && chakra_world(x->chakra) != platform_ranks(c->p))
        rc = tt_error_set(err, TT_EINPUT, "%s: $.workload.chakra: the trace %s has %d ranks, the platform %d; "
                          "expected one trace rank per accelerator", sc->path, sc->chakra_path,
                          chakra_world(x->chakra), platform_ranks(c->p));
    if (rc)
        return rc;
    snprintf(x->model, sizeof x->model, "%s", x->tr[0].model);
    snprintf(x->precision, sizeof x->precision, "%s", sc->precision ? sc->precision : x->tr[0].precision);
    x->optimizer = sc->optimizer ? sc->optimizer : x->tr[0].optimizer;
    return load_convergence(x, err);
}

void run_ctx_free(run_ctx *x)
{
    for (size_t k = 0; k < SCENARIO_MAX_PHASES; k++)
        if (x->tr[k].path)
            workload_free(&x->tr[k]);
    convergence_free(x->conv);
    x->conv = NULL;
    chakra_free(x->chakra);
    x->chakra = NULL;
}

int run_ctx_has_tables(const run_ctx *x)
{
    for (size_t k = 0; k < x->sc->n_phases; k++)
        if (x->tr[k].emb.n_tables > 0)
            return 1;
    return 0;
}

void run_describe(run_result *r, const run_ctx *x, const cluster *c, const run_point *pt)
{
    const device_info *dev = platform_device(c->p, 0);
    r->price_per_h_usd = dev->price_usd_per_h;
    r->busy_w = dev->tdp_w;
    r->idle_w = dev->idle_w;
    r->peak_flops = pt->peak_flops;
    snprintf(r->accelerator, sizeof r->accelerator, "%s", dev->name);
    snprintf(r->platform, sizeof r->platform, "%s", platform_name(c->p));
    memcpy(r->allreduce, pt->allreduce, sizeof r->allreduce);
    memcpy(r->alltoall, pt->alltoall, sizeof r->alltoall);
    assumptions_note(r, x, c, pt);
}

/* The run's workload, optimizer and convergence source, from the scenario's own context. */
static void describe_workload(run_result *r, const run_ctx *x)
{
    const scenario *sc = x->sc;
    snprintf(r->model, sizeof r->model, "%s", x->model);
    snprintf(r->precision, sizeof r->precision, "%s", x->precision);
    snprintf(r->optimizer, sizeof r->optimizer, "%s", x->optimizer->name);
    if (x->conv) {
        if (convergence_recipe(x->conv)) {
            r->recipe = *convergence_recipe(x->conv);
            r->has_recipe = 1;
        }
        snprintf(r->convergence, sizeof r->convergence, "%s", convergence_source(x->conv));
        snprintf(r->target, sizeof r->target, "%s", convergence_target(x->conv));
    } else if (sc->conv == CONV_STEPS) {
        snprintf(r->convergence, sizeof r->convergence, "fixed number of steps from the scenario");
        snprintf(r->target, sizeof r->target, "%.0f steps", sc->fixed_steps);
    }
}

int run_scenario(const scenario *sc, const run_options *opt, run_result *out, tt_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->allreduce, sizeof out->allreduce, "none");
    snprintf(out->alltoall, sizeof out->alltoall, "none");
    out->links_shown = opt->links;
    int swept = run_sweep_points(sc) > 0;
    cluster c;
    tt_error cerr = {0};
    int crc = cluster_open(sc, sc->nodes, &c, &cerr);
    run_ctx x;
    int rc = run_ctx_load(&x, sc, crc ? NULL : &c, err);
    if (rc == TT_OK) {
        describe_workload(out, &x);
        if (crc) {
            *err = cerr;
            rc = crc;
        } else {
            x.sink = opt->sink;
            rc = batch_schedule_point(&x, &c, sc->global_batch, opt->links ? &out->links : NULL, &out->base, err);
            x.sink = NULL;
        }
        if (rc == TT_OK)
            run_describe(out, &x, &c, &out->base);
        if (swept)
            rc = point_failed(rc, &out->base, err);
    }
    if (rc == TT_OK && swept)
        rc = sweep_run(&x, crc ? NULL : &c, opt, out, err);
    /* a point at or beyond a batch where the profile's runs failed: said once */
    double failed = out->base.failed_batch;
    for (size_t i = 0; i < out->n_points && failed == 0; i++)
        failed = out->points[i].failed_batch;
    if (rc == TT_OK && failed > 0) {
        char buf[512];
        snprintf(buf, sizeof buf, "convergence.not_reached = the profile's runs at batch %.0f did not reach the "
                 "target; steps at that batch and above are the fit's, which those runs contradict", failed);
        assumptions_add(out, buf);
    }
    if (rc == TT_OK && sc->schedule.n) {
        char buf[1024], what[900];
        batch_schedule_describe(&sc->schedule, what, sizeof what);
        snprintf(buf, sizeof buf, "convergence.batch_schedule = %s; a phase covers its steps / S(its batch) of the "
                 "way to the target", what);
        assumptions_add(out, buf);
    }
    run_ctx_free(&x);
    cluster_close(&c);
    return rc;
}

void run_result_free(run_result *r)
{
    for (size_t i = 0; i < r->n_assumptions; i++)
        free(r->assumptions[i]);
    free(r->points);
    free(r->records);
    memset(r, 0, sizeof *r);
}
