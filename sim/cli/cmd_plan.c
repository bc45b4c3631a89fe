/* ttasim plan SCENARIO.json: the fastest parallel layouts of a transformer
 * scenario on its platform (sim/replay/layout_search.h). */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/outfile.h"
#include "common/parallel.h"
#include "common/units.h"
#include "sim/cli/cli.h"
#include "sim/cli/db_cli.h"
#include "sim/cli/progress.h"
#include "sim/cli/shard.h"
#include "sim/replay/layout_search.h"
#include "sim/replay/scenario.h"
#include "sim/report/human.h"

extern const cli_command cmd_plan;

#define PLAN_JSON_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(12))
#define PLAN_MAX_BATCHES 16

static void plan_help(FILE *out)
{
    fprintf(out,
            "Searches the parallel layouts of a transformer scenario on its platform and\n"
            "node count: tensor (dividing the heads, within a node), pipeline (splitting the\n"
            "blocks, the first and last stages fewer if need be), context, expert (MoE),\n"
            "virtual stages, micro-batch (1, 2, 4, 8), ZeRO 1-3 (3 without pipeline or expert\n"
            "stages), recomputation (none, selective, full), sequence parallelism with\n"
            "tensor > 1. Each layout's step is\n"
            "first screened with closed-form collectives (a layout that does not fit in\n"
            "memory is pruned there, its reason counted); the fastest screened are then\n"
            "simulated as 'ttasim run' runs them and ranked by step time, beside the\n"
            "scenario's own layout. Under each row, which links its communicators cross\n"
            "(tp, cp, ep, dp: the dense gradients' group, pp): in a node and by which\n"
            "links, or over how many nodes and NICs, and a ring's rate at its slowest hop.\n"
            "With a convergence target the rows are also ranked by time to accuracy and\n"
            "by cost.\n\n"
            "  --top N       layouts to print (default 5)\n"
            "  --simulate K  screened layouts to simulate (default 3 x --top, at least --top)\n"
            "  --batch B[,B...]  global batches to search (default: the scenario's)\n"
            "  --tensor-max N    largest tensor degree (default: a node's accelerators)\n"
            "  --context-max N   largest context degree (default 8)\n"
            "  --zero Z[,Z...]   ZeRO stages to search, of 0, 1, 2, 3 (default 1,2,3;\n"
            "                    3: FSDP's FULL_SHARD, without pipeline or expert stages)\n"
            "  --recompute R[,R...]  of none, selective, full (default all three)\n"
            "  --no-sequence-parallel  tensor > 1 without sequence parallelism\n"
            "  --json        print one JSON document on stdout\n"
            "  --csv F       write one CSV row per simulated layout to F\n"
            CLI_SET_HELP
            "  -j, --jobs N  layouts at a time (default: the processors this process may\n"
            "              use); the output is the same for any N\n"
            "  --shard I/N   screen every layout, then simulate only the K + 1 simulations\n"
            "              k (the screen's fastest, the scenario's own last) with k mod N\n"
            "              = I (I from 0), and print them as a shard document on stdout\n"
            "  --merge       SCENARIO.json is followed by the N shards' files: their\n"
            "              simulations are taken instead of run, and the reports are\n"
            "              those of the plan unsharded, byte for byte\n"
            DB_CLI_HELP
            "              (a point per simulated layout, as in \"layouts\" of --json)\n"
            "  --quiet       no progress on stderr\n"
            "  --help        this text\n\n"
            "Each row's \"set\" reproduces it: ttasim run SCENARIO.json followed by those\n"
            "--set options. Exit status 2 when no layout fits.\n\n"
            "Shards split a long search over a batch job array, and make it resumable:\n"
            "each shard is its own file, written by its own redirection, so a search\n"
            "that was interrupted resumes by running again only the shards whose file is\n"
            "missing or refused. The shards and their merge take the same search options\n"
            "(--simulate or the --top it defaults from, --batch, --tensor-max,\n"
            "--context-max, --zero, --recompute, --no-sequence-parallel, --set), --top\n"
            "and the reports' options may differ. A simulation in no shard, a shard given\n"
            "twice, one of other options, of another version of the scenario or ttasim\n"
            "build, run on other files, or changed by a single byte is an input error\n"
            "(exit 2) naming the file. Slurm, for example:\n"
            "  sbatch --array=0-15 --wrap 'ttasim plan s.json --shard $SLURM_ARRAY_TASK_ID/16 \\\n"
            "      > shard-$SLURM_ARRAY_TASK_ID.json'\n"
            "  ttasim plan s.json --merge shard-*.json\n");
}

static const char *const STAGES[] = {"screen", "simulate"};
static int g_quiet, g_stage = -1;
static char g_what[200];

static void plan_progress(int stage, size_t done, size_t total)
{
    if (stage != g_stage) {
        char what[256];
        snprintf(what, sizeof what, "%s: %s", g_what, STAGES[stage]);
        progress_start(what, "layouts", g_quiet);
        g_stage = stage;
    }
    progress_update(done, total);
}

/* ---- text ---- */

static void print_row(FILE *f, int rank, const ls_row *w, int target)
{
    char lw[256], d1[32], d2[32], u[32];
    layout_search_words(&w->l, lw, sizeof lw);
    if (w->pt.error[0]) {
        fprintf(f, "  %2d  %-86s  failed: %s\n", rank, lw, w->pt.error);
        return;
    }
    const step_result *s = &w->pt.step;
    fprintf(f, "  %2d  %9.4f  %9s  %5.1f %%  %6.1f GB  %7.3f  %7.3f  %7.3f  %s", rank, s->time_s,
            isfinite(w->screen_s) ? (snprintf(d1, sizeof d1, "%.4f", w->screen_s), d1) : "-", 100 * s->mfu,
            s->memory.total_bytes / 1e9, s->bubble_s, s->tp_comm_s + s->cp_comm_s + s->ep_comm_s,
            s->exposed_comm_s, lw);
    if (target)
        fprintf(f, "  tta %s cost %s", human_duration(w->pt.time_to_accuracy_s, d2, sizeof d2),
                human_usd(w->pt.total.usd, u, sizeof u));
    fputc('\n', f);
}

/* Under a row: which links each communicator crosses ("tp 8 in a node
 * (nvlink4), ring 450 GB/s; dp 16 over 2 nodes x 8 NICs, ring 400 GB/s"). */
static void print_links(FILE *f, const ls_row *w)
{
    int shown = 0;
    for (int k = 0; k < LS_COMMS; k++) {
        const ls_comm *c = &w->comm[k];
        if (c->size <= 1)
            continue;
        fprintf(f, "%s%s %d ", shown++ ? "; " : "        links  ", layout_search_comm_name((ls_comm_kind)k),
                c->size);
        if (c->nodes <= 1)
            fprintf(f, "in a node (%s)", c->node_link[0] ? c->node_link : "its links");
        else
            fprintf(f, "over %d nodes x %d NIC%s", c->nodes, c->nics, c->nics == 1 ? "" : "s");
        fprintf(f, ", ring %.0f GB/s", c->ring_Bps / 1e9);
    }
    if (shown)
        fputc('\n', f);
}

static const char ROW_HEAD[] =
    "   #     step_s   screen_s    MFU    memory   bubble   tp+cp+ep  exp.dp  layout\n";

typedef double (*row_key)(const ls_row *w);
static double key_tta(const ls_row *w) { return w->pt.time_to_accuracy_s; }
static double key_cost(const ls_row *w) { return w->pt.total.usd; }

/* Rows (that ran) in order of key, ties by their step order. */
static void print_by(FILE *f, const layout_search_result *r, int top, row_key key, const char *what)
{
    size_t *ix = malloc(sizeof *ix * (r->n_rows + 1)), n = 0;
    if (!ix)
        return;
    for (size_t i = 0; i < r->n_rows; i++)
        if (!r->rows[i].pt.error[0])
            ix[n++] = i;
    for (size_t i = 1; i < n; i++) /* insertion sort: stable, a few rows */
        for (size_t j = i; j > 0 && key(&r->rows[ix[j]]) < key(&r->rows[ix[j - 1]]); j--) {
            size_t t = ix[j];
            ix[j] = ix[j - 1];
            ix[j - 1] = t;
        }
    fprintf(f, "\ntop %d by %s\n%s", top < (int)n ? top : (int)n, what, ROW_HEAD);
    for (size_t i = 0; i < n && (int)i < top; i++)
        print_row(f, (int)i + 1, &r->rows[ix[i]], 1);
    free(ix);
}

static double own_gap(const layout_search_result *r)
{
    if (r->own.pt.error[0] || r->n_rows == 0 || r->rows[0].pt.error[0])
        return NAN;
    double best = fmin(r->rows[0].pt.step.time_s, r->own.pt.step.time_s);
    return r->own.pt.step.time_s / best - 1;
}

static void print_text(FILE *f, const scenario *sc, const layout_search_result *r, int top)
{
    char buf[1024];
    fprintf(f, "plan          %s (%s)\n", sc->name, sc->path);
    fprintf(f, "platform      %d ranks, %d per node, %.3g GB each\n", r->ranks, r->ranks_per_node,
            r->device_mem_bytes / 1e9);
    fprintf(f, "search        %zu combinations of degrees and micro-batch: %zu not a layout (%zu ranks, %zu model split, %zu batch "
            "split); %zu layouts screened\n", r->combinations,
            r->rejected[LS_REJECT_RANKS] + r->rejected[LS_REJECT_MODEL] + r->rejected[LS_REJECT_BATCH],
            r->rejected[LS_REJECT_RANKS], r->rejected[LS_REJECT_MODEL], r->rejected[LS_REJECT_BATCH], r->screened);
    fprintf(f, "memory        %zu pruned: %zu by parameters, gradients and optimizer state alone, %zu with "
            "activations; %zu fit\n", r->pruned[LS_PRUNE_STATE] + r->pruned[LS_PRUNE_ACTIVATIONS],
            r->pruned[LS_PRUNE_STATE], r->pruned[LS_PRUNE_ACTIVATIONS], r->feasible);
    if (r->pruned[LS_PRUNE_OTHER])
        fprintf(f, "other         %zu failed otherwise, the first: %s\n", r->pruned[LS_PRUNE_OTHER], r->other);
    fprintf(f, "screen        closed-form collectives; the %zu fastest simulated: |screen/simulated - 1| mean %.1f %%, "
            "max %.1f %%, bias %+.1f %%\n", r->n_rows, 100 * r->screen_err_mean, 100 * r->screen_err_max,
            100 * r->screen_err_bias);
    fprintf(f, "\ntop %d by step time (simulated; memory per rank; bubble, blocking tp+cp+ep and exposed dp "
            "communication in s)\n%s", top < (int)r->n_rows ? top : (int)r->n_rows, ROW_HEAD);
    for (size_t i = 0; i < r->n_rows && (int)i < top; i++) {
        print_row(f, (int)i + 1, &r->rows[i], 0);
        print_links(f, &r->rows[i]);
    }
    if (r->has_target) {
        print_by(f, r, top, key_tta, "time to accuracy");
        print_by(f, r, top, key_cost, "cost (renting)");
    }
    fprintf(f, "\nscenario's layout\n%s", ROW_HEAD);
    print_row(f, 0, &r->own, r->has_target);
    print_links(f, &r->own);
    double gap = own_gap(r);
    if (isfinite(gap))
        fprintf(f, "  its step is %.1f %% over the best simulated (%s the 10 %% bound)", 100 * gap,
                gap <= 0.10 ? "within" : "outside");
    const char *sep = isfinite(gap) ? "; " : "  "; /* a failed row ends its own line */
    if (!r->own_in_space)
        fprintf(f, "%sit is outside the searched space", sep);
    else if (r->own_screen_rank > 0)
        fprintf(f, "%sthe screen ranked it %.0f of %zu", sep, r->own_screen_rank, r->feasible);
    else
        fprintf(f, "%sthe screen pruned it", sep);
    fputc('\n', f);
    if (r->n_rows && !r->rows[0].pt.error[0]) {
        layout_search_sets(&r->rows[0].l, buf, sizeof buf);
        fprintf(f, "\nthe best as a run: ttasim run %s %s\n", sc->path, buf);
    }
}

/* ---- JSON and CSV ---- */

static json_t *num(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *row_json(const ls_row *w)
{
    char sets[1024];
    const ls_layout *l = &w->l;
    layout_search_sets(l, sets, sizeof sets);
    json_t *o = json_pack("{s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:i,s:s,s:b,s:I,s:o,s:s}", "tensor", l->tensor,
                          "pipeline", l->pipeline, "context", l->context, "expert", l->expert, "data", l->data,
                          "virtual_stages", l->virtual_stages, "first_stage_layers", l->first_stage_layers,
                          "last_stage_layers", l->last_stage_layers, "micro_batch", l->micro_batch, "zero",
                          l->zero, "recompute", layout_search_recompute_name(l->recompute), "sequence_parallel",
                          l->sequence_parallel, "global_batch", (json_int_t)l->global_batch, "screen_step_time_s",
                          num(w->screen_s), "set", sets);
    if (!o)
        return NULL;
    if (w->pt.error[0]) {
        json_object_set_new(o, "error", json_string(w->pt.error));
        return o;
    }
    const step_result *s = &w->pt.step;
    json_object_set_new(o, "step", json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "time_s", num(s->time_s),
                                             "compute_s", num(s->compute_s), "bubble_s", num(s->bubble_s),
                                             "tp_comm_s", num(s->tp_comm_s), "cp_comm_s", num(s->cp_comm_s),
                                             "ep_comm_s", num(s->ep_comm_s), "exposed_comm_s",
                                             num(s->exposed_comm_s), "optimizer_s", num(s->optimizer_s), "mfu",
                                             num(s->mfu)));
    json_object_set_new(o, "memory", json_pack("{s:o,s:o,s:o,s:o,s:o}", "params_bytes", num(s->memory.params_bytes),
                                               "gradients_bytes", num(s->memory.gradients_bytes), "optimizer_bytes",
                                               num(s->memory.optimizer_bytes), "activations_bytes",
                                               num(s->memory.activations_bytes), "total_bytes",
                                               num(s->memory.total_bytes)));
    json_object_set_new(o, "time_to_accuracy_s", num(w->pt.time_to_accuracy_s));
    json_object_set_new(o, "cost_usd", num(w->pt.total.usd));
    json_t *comms = json_object();
    for (int k = 0; k < LS_COMMS; k++) {
        const ls_comm *c = &w->comm[k];
        if (c->size > 1)
            json_object_set_new(comms, layout_search_comm_name((ls_comm_kind)k),
                                json_pack("{s:i,s:i,s:i,s:s?,s:o}", "size", c->size, "nodes", c->nodes, "nics",
                                          c->nics, "node_link_class", c->node_link[0] ? c->node_link : NULL,
                                          "ring_Bps", num(c->ring_Bps)));
    }
    json_object_set_new(o, "communicators", comms);
    return o;
}

static json_t *plan_json(const scenario *sc, const layout_search_result *r)
{
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n_rows; i++)
        json_array_append_new(rows, row_json(&r->rows[i]));
    json_t *own = row_json(&r->own);
    if (own) {
        json_object_set_new(own, "in_search", json_boolean(r->own_in_space));
        json_object_set_new(own, "screen_rank", r->own_screen_rank > 0 ? json_integer((json_int_t)r->own_screen_rank)
                                                                       : json_null());
        json_object_set_new(own, "over_best", num(own_gap(r)));
    }
    return json_pack(
        "{s:s,s:s,s:i,s:i,s:o,s:{s:I,s:{s:I,s:I,s:I},s:I,s:{s:I,s:I,s:I},s:s,s:I},"
        "s:{s:s,s:I,s:o,s:o,s:o},s:b,s:o,s:o}",
        "scenario", sc->path, "name", sc->name, "ranks", r->ranks, "ranks_per_node", r->ranks_per_node,
        "device_memory_bytes", num(r->device_mem_bytes), "search", "combinations", (json_int_t)r->combinations,
        "rejected", "ranks", (json_int_t)r->rejected[LS_REJECT_RANKS], "model", (json_int_t)r->rejected[LS_REJECT_MODEL],
        "batch", (json_int_t)r->rejected[LS_REJECT_BATCH], "screened", (json_int_t)r->screened, "pruned",
        "memory_state", (json_int_t)r->pruned[LS_PRUNE_STATE], "memory_activations",
        (json_int_t)r->pruned[LS_PRUNE_ACTIVATIONS], "other", (json_int_t)r->pruned[LS_PRUNE_OTHER], "other_first",
        r->other, "feasible", (json_int_t)r->feasible, "screen", "collectives", "closed form", "simulated",
        (json_int_t)r->n_rows, "error_mean", num(r->screen_err_mean), "error_max", num(r->screen_err_max),
        "error_bias", num(r->screen_err_bias), "has_target", r->has_target, "layouts", rows ? rows : json_null(),
        "scenario_layout", own ? own : json_null());
}

static int write_csv(const char *path, const layout_search_result *r, tt_error *err)
{
    FILE *f;
    outfile *o;
    int rc = outfile_open(path, "the CSV output", &o, &f, err);
    if (rc)
        return rc;
    fprintf(f, "rank,tensor,pipeline,context,expert,data,virtual_stages,first_stage_layers,last_stage_layers,"
               "micro_batch,zero,recompute,sequence_parallel,global_batch,screen_step_time_s,step_time_s,"
               "mfu,memory_bytes,bubble_s,tp_comm_s,cp_comm_s,ep_comm_s,exposed_comm_s,time_to_accuracy_s,"
               "cost_usd,error\n");
    for (size_t i = 0; i < r->n_rows; i++) {
        const ls_row *w = &r->rows[i];
        const ls_layout *l = &w->l;
        const step_result *s = &w->pt.step;
        int ok = !w->pt.error[0];
        fprintf(f, "%zu,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%ld,%.9g,", i + 1, l->tensor, l->pipeline, l->context,
                l->expert, l->data, l->virtual_stages, l->first_stage_layers, l->last_stage_layers, l->micro_batch,
                l->zero, layout_search_recompute_name(l->recompute), l->sequence_parallel, l->global_batch,
                w->screen_s);
        if (ok)
            fprintf(f, "%.9g,%.6g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,\n", s->time_s, s->mfu,
                    s->memory.total_bytes, s->bubble_s, s->tp_comm_s, s->cp_comm_s, s->ep_comm_s, s->exposed_comm_s,
                    w->pt.time_to_accuracy_s, w->pt.total.usd);
        else /* the message has no quote of its own to double: quoted whole */
            fprintf(f, ",,,,,,,,,,\"%s\"\n", w->pt.error);
    }
    return outfile_commit(o, err);
}

/* --zero 1,2 and --recompute none,full: a mask of the names' indexes */
static int parse_mask(const char *opt, const char *text, const char *const *names, unsigned *mask)
{
    char *copy = strdup(text), *save = NULL;
    int rc = copy ? TT_OK : TT_EINTERNAL, k;
    for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w && rc == TT_OK; w = strtok_r(NULL, ",", &save))
        if ((rc = cli_choice(&cmd_plan, opt, w, names, &k)) == TT_OK)
            *mask |= 1u << k;
    free(copy);
    return rc;
}

/* --batch 1024,2048,4K */
static int parse_batches(const char *text, long *out, size_t *n)
{
    char *copy = strdup(text), *save = NULL;
    int rc = copy ? TT_OK : TT_EINTERNAL;
    for (char *w = copy ? strtok_r(copy, ",", &save) : NULL; w && rc == TT_OK; w = strtok_r(NULL, ",", &save)) {
        if (*n == PLAN_MAX_BATCHES) {
            rc = cli_usage_error(&cmd_plan, "--batch: at most %d global batches", PLAN_MAX_BATCHES);
            break;
        }
        rc = cli_int(&cmd_plan, "--batch", w, 1, 1L << 40, &out[(*n)++]);
    }
    free(copy);
    return rc;
}

/* The plan's reports: the CSV file, the database, the text or JSON on stdout. */
static int plan_reports(const scenario *sc, const layout_search_result *r, int top, int as_json, const char *csv,
                        const db_cli *db, tt_error *err)
{
    int rc = csv && parallel_is_writer() ? write_csv(csv, r, err) : TT_OK;
    json_t *doc = rc == TT_OK && (as_json || db->path) ? plan_json(sc, r) : NULL;
    if (rc == TT_OK && (as_json || db->path) && !doc)
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory");
    if (rc == TT_OK)
        rc = db_cli_append(db, &(resultsdb_report){sc->path, sc->name, doc, "layouts"}, 1, err);
    if (rc == TT_OK && parallel_is_writer()) {
        if (as_json)
            cli_print_json(doc, PLAN_JSON_FLAGS);
        else
            print_text(stdout, sc, r, top);
    }
    json_decref(doc);
    return rc;
}

/* The options that change the search, as words ("--simulate 15 --zero 1,2"):
 * a plan's shards and their merge must agree on them. */
static void search_words(const layout_search_options *o, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "--simulate %d", o->simulate);
    for (size_t i = 0; i < o->n_batches && k < n; i++)
        k += (size_t)snprintf(buf + k, n - k, "%s%ld", i ? "," : " --batch ", o->batches[i]);
    if (o->tensor_max && k < n)
        k += (size_t)snprintf(buf + k, n - k, " --tensor-max %d", o->tensor_max);
    if (o->context_max && k < n)
        k += (size_t)snprintf(buf + k, n - k, " --context-max %d", o->context_max);
    for (int z = 0, first = 1; z <= 3 && k < n; z++)
        if (o->zero_mask >> z & 1)
            k += (size_t)snprintf(buf + k, n - k, "%s%d", first ? " --zero " : ",", z), first = 0;
    for (int r = 0, first = 1; r <= LS_RECOMPUTE_FULL && k < n; r++)
        if (o->recompute_mask >> r & 1)
            k += (size_t)snprintf(buf + k, n - k, "%s%s", first ? " --recompute " : ",",
                                  layout_search_recompute_name(r)), first = 0;
    if (o->no_sequence_parallel && k < n)
        snprintf(buf + k, n - k, " --no-sequence-parallel");
}

/* A merge's shard files, read once the search knows its simulations. */
typedef struct plan_merge {
    char *const *files;
    size_t n_files;
    const shard_origin *origin;
    shard_set *set;
} plan_merge;

static int read_shards(void *ctx, size_t n, point_outcome *records, tt_error *err)
{
    plan_merge *m = ctx;
    return shard_set_read(m->files, m->n_files, m->origin, n, records, &m->set, err);
}

static int plan_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'J'},
                                         {"jobs", required_argument, NULL, 'j'},
                                         {"csv", required_argument, NULL, 'c'},
                                         {"set", required_argument, NULL, 'S'},
                                         {"top", required_argument, NULL, 'T'},
                                         {"simulate", required_argument, NULL, 'K'},
                                         {"batch", required_argument, NULL, 'B'},
                                         {"tensor-max", required_argument, NULL, 't'},
                                         {"context-max", required_argument, NULL, 'x'},
                                         {"zero", required_argument, NULL, 'z'},
                                         {"recompute", required_argument, NULL, 'r'},
                                         {"no-sequence-parallel", no_argument, NULL, 'N'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"db", required_argument, NULL, 'D'},
                                         {"shard", required_argument, NULL, 'H'},
                                         {"merge", no_argument, NULL, 'M'},
                                         {NULL, 0, NULL, 0}};
    const cli_command *cmd = &cmd_plan;
    layout_search_options opt = {.top = 5, .jobs = parallel_jobs_default(), .progress = plan_progress};
    long batches[PLAN_MAX_BATCHES], v;
    int as_json = 0, merge = 0, c;
    char *sets[CLI_MAX_SETS];
    size_t n_sets = 0;
    const char *csv = NULL;
    db_cli db = {NULL, argc, argv, sets, 0};
    tt_error err = {0};
    opterr = 0;
    optind = 1;
    g_quiet = 0;
    g_stage = -1;
    while ((c = getopt_long(argc, argv, ":j:", opts, NULL)) != -1) {
        if (c == 'J') {
            as_json = 1;
        } else if (c == 'j') {
            if (parallel_jobs_parse(optarg, &opt.jobs, &err))
                return cli_usage_error(cmd, "%s", err.msg);
        } else if (c == 'c') {
            csv = optarg;
        } else if (c == 'S') {
            if (cli_add_set(cmd, sets, &n_sets, optarg))
                return TT_EINPUT;
        } else if (c == 'T' || c == 'K' || c == 't' || c == 'x') {
            const char *name = c == 'T' ? "--top" : c == 'K' ? "--simulate" : c == 't' ? "--tensor-max" : "--context-max";
            if (cli_int(cmd, name, optarg, 1, 4096, &v))
                return TT_EINPUT;
            *(c == 'T' ? &opt.top : c == 'K' ? &opt.simulate : c == 't' ? &opt.tensor_max : &opt.context_max) = (int)v;
        } else if (c == 'B') {
            if (parse_batches(optarg, batches, &opt.n_batches))
                return TT_EINPUT;
            opt.batches = batches;
        } else if (c == 'z') {
            static const char *const zeros[] = {"0", "1", "2", "3", NULL};
            if (parse_mask("--zero", optarg, zeros, &opt.zero_mask))
                return TT_EINPUT;
        } else if (c == 'r') {
            static const char *const kinds[] = {"none", "selective", "full", NULL};
            if (parse_mask("--recompute", optarg, kinds, &opt.recompute_mask))
                return TT_EINPUT;
        } else if (c == 'N') {
            opt.no_sequence_parallel = 1;
        } else if (c == 'q') {
            g_quiet = 1;
        } else if (c == 'D') {
            db.path = optarg;
        } else if (c == 'H') {
            if (shard_parse(optarg, &opt.shard, &opt.shards, &err))
                return cli_usage_error(cmd, "%s", err.msg);
        } else if (c == 'M') {
            merge = 1;
        } else {
            return cli_bad_option(cmd, argv, optind, optopt, opts, c == ':');
        }
    }
    if (optind == argc)
        return cli_usage_error(cmd, "missing the scenario file");
    if (merge ? optind + 1 == argc : optind + 1 != argc)
        return cli_usage_error(cmd, merge ? "--merge: give the scenario file, then its shard files"
                                          : "expected one scenario file");
    if (opt.shards > 0 && (merge || as_json || csv || db.path))
        return cli_usage_error(cmd, "--shard prints the shard's document for --merge, which writes the reports: "
                                    "drop --merge, --json, --csv and --db");
    if (opt.simulate == 0)
        opt.simulate = 3 * opt.top;
    if (opt.simulate < opt.top)
        return cli_usage_error(cmd, "--simulate %d is fewer than --top %d: the ranking is of simulated layouts",
                               opt.simulate, opt.top);
    db.n_sets = n_sets;
    scenario sc;
    int rc = scenario_load_set(argv[optind], sets, n_sets, &sc, &err);
    if (rc)
        return cli_report_error(rc, err.msg);
    char *const *shards = argv + optind + 1;
    size_t n_shards = (size_t)(argc - optind - 1);
    const char *outs[] = {csv, db.path};
    if ((rc = shard_check_outputs(&sc, shards, n_shards, outs, 2, db.path, &err))) { /* before the search */
        scenario_free(&sc);
        return cli_report_error(rc, err.msg);
    }
    char words[1024];
    search_words(&opt, words, sizeof words);
    shard_origin origin = {"plan", words, argv[optind], sets, n_sets};
    plan_merge pm = {shards, n_shards, &origin, NULL};
    if (merge) {
        opt.take_records = read_shards;
        opt.records_ctx = &pm;
    }
    snprintf(g_what, sizeof g_what, "plan %s", sc.name);
    layout_search_result r;
    rc = layout_search_run(&sc, &opt, &r, &err);
    if (rc == TT_OK && pm.set) /* the shards ran on the files this merge read */
        rc = shard_set_check_inputs(pm.set, &err);
    shard_set_free(pm.set);
    if (rc == TT_OK && r.records && parallel_is_writer()) /* a shard */
        rc = shard_write(stdout, &origin, opt.shard, opt.shards, r.records, r.n_records, &err);
    else if (rc == TT_OK && !r.records)
        rc = plan_reports(&sc, &r, opt.top, as_json, csv, &db, &err);
    if (rc)
        cli_report_error(rc, err.msg);
    layout_search_free(&r);
    scenario_free(&sc);
    return rc;
}

const cli_command cmd_plan = {
    "plan", "the fastest parallel layouts of a transformer scenario, searched",
    "plan SCENARIO.json [--top N] [--simulate K] [--batch B[,B...]] [--tensor-max N] [--context-max N]\n"
    "           [--zero Z[,Z...]] [--recompute R[,R...]] [--no-sequence-parallel] [--json] [--csv F]\n"
    "           [--set PATH=VALUE]... [-j|--jobs N] [--shard I/N | --merge SHARD.json...] [--db FILE] [--quiet]",
    plan_main, plan_help,
};
