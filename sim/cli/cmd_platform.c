/* ttasim platform list | show NAME | export NAME --xml FILE: the built-in hardware. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "common/clock.h"
#include "common/error.h"
#include "common/outfile.h"
#include "common/jsonx.h"
#include "common/units.h"
#include "platforms/platform.h"
#include "sim/cli/cli.h"
#include "sim/engine/engine.h"

extern const cli_command cmd_platform;

static void platform_help(FILE *out)
{
    fprintf(out,
            "Lists, describes and exports the platforms (platforms/README.md).\n\n"
            "  list                   the built-in and generic platforms\n"
            "  show NAME|FILE         devices, links, bisection, diameter, peak, assumptions\n"
            "  export NAME|FILE --xml OUT   a SimGrid 4.1 platform file, links at line rate (ranks are acc-R\n"
            "                               or nN-COMPONENT)\n"
            "  check NAME|FILE        builds the platform, loads it in SimGrid, prints the host\n"
            "                         count, the wall seconds of each (a benchmark), the load\n"
            "                         estimate and the simulation process's peak resident set\n"
            "  --max-memory SIZE      refuse (exit 2) a platform whose load estimate exceeds SIZE\n"
            "                         (default: MemAvailable, the cgroup's room, ulimit -v)\n\n"
            "  --nodes N              number of nodes (TPU pods: slices of 4N chips)\n"
            "  --link-bw B/S          fabric link bandwidth per direction (\"12.5G\")\n"
            "  --link-latency S       fabric link latency (\"1us\")\n"
            "  --accelerator NAME     replace the accelerator type (platforms/devices.json)\n"
            "  --mesh PATTERN         replace the accelerator mesh (zion: fully_connected)\n"
            "  --shape AxB[xC]        torus grid of the slice, fastest-varying first (default: the\n"
            "                         published slice shape, else the most cube-like)\n"
            "  --json                 show: one JSON document on stdout\n"
            "  --xml FILE             export: where to write (- for stdout)\n"
            "  --help                 this text\n");
}

static json_t *summary_json(const platform *p, const platform_summary *s)
{
    json_t *devs = json_array(), *links = json_array(), *assume = json_array(), *src = json_array();
    for (int i = 0; i < s->n_devices; i++) {
        const device_info *d = s->devices[i].dev;
        json_t *pk = json_object();
        for (int t = 0; t < DTYPE_COUNT; t++)
            json_object_set_new(pk, DTYPE_NAMES[t], json_real(d->peak_flops[t]));
        json_array_append_new(devs, json_pack("{s:s, s:s, s:I, s:s, s:o, s:f, s:f, s:f, s:f, s:f}", "name", d->name,
                                              "kind", DEVICE_KIND_NAMES[d->kind], "count", (json_int_t)s->devices[i].count,
                                              "description", d->description, "peak_flops", pk, "mem_bytes", d->mem_bytes,
                                              "mem_Bps", d->mem_Bps, "tdp_w", d->tdp_w, "price_usd_per_h",
                                              d->price_usd_per_h, "bandwidth_Bps", d->bandwidth_Bps));
    }
    for (int i = 0; i < s->n_link_classes; i++)
        json_array_append_new(links, json_pack("{s:s, s:f, s:I}", "class", s->link_classes[i].name, "bw_Bps",
                                               s->link_classes[i].bw_Bps, "count", (json_int_t)s->link_classes[i].count));
    for (int i = 0; i < platform_assumption_count(p); i++) {
        const char *n, *v, *w;
        platform_assumption(p, i, &n, &v, &w);
        json_array_append_new(assume, json_pack("{s:s, s:s, s:s}", "name", n, "value", v, "why", w));
    }
    for (int i = 0; i < platform_source_count(p); i++)
        json_array_append_new(src, json_string(platform_source(p, i)));
    json_t *notes = json_array();
    for (int i = 0; i < platform_note_count(p); i++)
        json_array_append_new(notes, json_string(platform_note(p, i)));
    json_t *peak = json_object();
    for (int t = 0; t < DTYPE_COUNT; t++)
        json_object_set_new(peak, DTYPE_NAMES[t], json_real(s->peak_flops[t]));
    int dims[3], nd = platform_torus_dims(p, dims);
    json_t *torus = nd ? json_array() : json_null();
    for (int d = 0; d < nd; d++)
        json_array_append_new(torus, json_integer(dims[d]));
    json_t *doc = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:o, s:o, s:f, s:i, s:o, s:o, s:o}", "name",
                     platform_name(p), "description", platform_description(p), "fabric", platform_fabric_name(p),
                     "nodes", s->nodes, "ranks_per_node", platform_ranks_per_node(p), "accelerators", s->accelerators,
                     "cpu_sockets", s->cpu_sockets, "nics", s->nics, "switches", s->switches, "devices", devs,
                     "link_classes", links, "bisection_Bps", s->bisection_Bps, "diameter_hops", s->diameter_hops,
                     "peak_flops", peak, "assumptions", assume, "sources", src);
    json_object_set_new(doc, "torus_dims", torus);
    json_object_set_new(doc, "pods", json_integer(platform_pods(p)));
    json_object_set_new(doc, "notes", notes);
    /* rails: one per NIC of a node; pxn: a cross-rail transfer is relayed over NVLink (platform_rail_relay) */
    int rpn = platform_ranks_per_node(p);
    json_object_set_new(doc, "rails", strcmp(platform_fabric_name(p), "rail") == 0
                                          ? json_pack("{s:i, s:b}", "rails", s->nics / s->nodes, "pxn",
                                                      s->nodes > 1 && rpn > 1 && platform_rail_relay(p, 0, rpn + 1) >= 0)
                                          : json_null());
    int per_leaf, levels, over;
    json_object_set_new(doc, "fattree", platform_fattree_shape(p, &per_leaf, &levels, &over)
                                             ? json_pack("{s:i, s:i, s:i}", "nodes_per_leaf", per_leaf, "levels",
                                                         levels, "oversubscription", over)
                                             : json_null());
    return doc;
}

static void print_summary(const platform *p, const platform_summary *s)
{
    printf("platform        %s\n                %s\n", platform_name(p), platform_description(p));
    printf("fabric          %s, %d node%s x %d accelerators\n", platform_fabric_name(p), s->nodes, s->nodes == 1 ? "" : "s",
           platform_ranks_per_node(p));
    int dims[3], nd = platform_torus_dims(p, dims), per_leaf, levels, over;
    if (platform_fattree_shape(p, &per_leaf, &levels, &over))
        printf("fat tree        %d nodes per leaf, %d level%s, leaf oversubscription %d:1%s\n", per_leaf, levels,
               levels == 1 ? "" : "s", over,
               strcmp(platform_fabric_name(p), "rail") == 0
                   ? "\nrails           rail-optimised: NIC i of every node on rail leaf i (a leaf per rail per group "
                     "of nodes), GPU i leaves by NIC i; a transfer to another rail first crosses NVLink to the GPU "
                     "on the receiver's rail (NCCL's PXN), so traffic between nodes stays on one rail; without "
                     "NVLink it crosses at the leaf level"
                   : "");
    if (nd > 0)
        printf("torus           %d%s%.0d%s%.0d (fastest-varying first, wrap-around)\n", dims[0], nd > 1 ? " x " : "",
               nd > 1 ? dims[1] : 0, nd > 2 ? " x " : "", nd > 2 ? dims[2] : 0);
    if (platform_pods(p) > 1)
        printf("pods            %d of that torus, pod-major ranks, joined by the data-centre network (link class "
               "dcn: a NIC per node); collectives: reduce-scatter in each pod, rings over the pods, all-gather\n",
               platform_pods(p));
    printf("accelerators    %d\ncpu_sockets     %d\nnics            %d\nswitches        %d\n\n", s->accelerators,
           s->cpu_sockets, s->nics, s->switches);
    printf("%-8s %-12s %-22s %s\n", "count", "kind", "device", "description");
    for (int i = 0; i < s->n_devices; i++)
        printf("%-8ld %-12s %-22s %s\n", s->devices[i].count, DEVICE_KIND_NAMES[s->devices[i].dev->kind],
               s->devices[i].dev->name, s->devices[i].dev->description);
    printf("\n%-16s %10s %16s\n", "link class", "count", "B/s per dir");
    for (int i = 0; i < s->n_link_classes; i++)
        printf("%-16s %10ld %16.4g\n", s->link_classes[i].name, s->link_classes[i].count, s->link_classes[i].bw_Bps);
    if (s->bisection_Bps > 0)
        printf("\nbisection_Bps   %.4g (per direction)\n", s->bisection_Bps);
    else
        printf("\nbisection_Bps   unknown (a SimGrid XML of your own)\n");
    printf("diameter_hops   %d\n", s->diameter_hops);
    printf("peak_flops      fp32 %.4g  fp16 %.4g  bf16 %.4g\n", s->peak_flops[DTYPE_FP32], s->peak_flops[DTYPE_FP16],
           s->peak_flops[DTYPE_BF16]);
    printf("\nassumptions (numbers tagged U or C in numbers.md, and modelling choices):\n");
    for (int i = 0; i < platform_assumption_count(p); i++) {
        const char *n, *v, *w;
        platform_assumption(p, i, &n, &v, &w);
        printf("  %s = %s\n      %s\n", n, v, w);
    }
    for (int i = 0; i < platform_note_count(p); i++)
        printf("%s  %s\n", i ? "" : "\nnotes (a value another one overrides):\n", platform_note(p, i));
    printf("\nsources:\n");
    for (int i = 0; i < platform_source_count(p); i++)
        printf("  %s\n", platform_source(p, i));
}

/* Build + SimGrid load of a platform, timed (stdout: figures, not results). */
static int check_platform(const char *name, const platform_options *o, int as_json)
{
    tt_error err = {0};
    double t0 = clock_monotonic_s();
    platform *p = platform_load(name, o, &err);
    if (!p)
        return cli_report_error(err.code, err.msg);
    double t1 = clock_monotonic_s();
    long hosts = 0;
    double peak_bytes = 0;
    platform_load_cost est;
    platform_estimate(p, platform_nodes(p), 0, &est);
    int rc = sim_host_count(p, &hosts, &peak_bytes, &err);
    double t2 = clock_monotonic_s();
    if (rc == TT_OK && as_json)
        printf("{\"platform\": \"%s\", \"accelerators\": %d, \"simgrid_hosts\": %ld, \"build_s\": %.6f, "
               "\"write_and_load_s\": %.6f, \"estimated_hosts\": %.0f, \"estimated_memory_bytes\": %.0f, "
               "\"estimated_cpu_s\": %.3f, \"peak_rss_bytes\": %.0f}\n", platform_name(p), platform_ranks(p), hosts,
               t1 - t0, t2 - t1, est.hosts, est.memory_bytes, est.cpu_s, peak_bytes);
    else if (rc == TT_OK)
        printf("%s: %d accelerators, %ld SimGrid hosts; built in %.3f s, written and loaded by SimGrid in %.3f s\n"
               "  load estimate %.1f MB and %.3g CPU s; the simulation process peaked at %.1f MB resident\n",
               platform_name(p), platform_ranks(p), hosts, t1 - t0, t2 - t1, est.memory_bytes / 1e6, est.cpu_s,
               peak_bytes / 1e6);
    else
        rc = cli_report_error(rc, err.msg);
    platform_free(p);
    return rc;
}

static int parse_positive(const char *opt, const char *arg, int seconds, double *out)
{
    const char *why = NULL;
    static const char *const rate_words[] = {"Bps", "B/s", NULL};
    int rc = seconds ? units_parse_seconds(arg, out, &why) : units_parse_amount(arg, rate_words, out, &why);
    if (rc != 0 || *out <= 0)
        return cli_usage_error(&cmd_platform, "%s %s: expected a positive %s%s%s", opt, arg,
                               seconds ? "duration (\"1us\")" : "rate in bytes per second (\"12.5G\")",
                               why ? ": " : "", why ? why : "");
    return TT_OK;
}

static int platform_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"nodes", required_argument, NULL, 'n'}, {"link-bw", required_argument, NULL, 'b'},
        {"link-latency", required_argument, NULL, 'l'}, {"accelerator", required_argument, NULL, 'a'},
        {"mesh", required_argument, NULL, 'm'}, {"json", no_argument, NULL, 'j'},
        {"xml", required_argument, NULL, 'x'}, {"shape", required_argument, NULL, 's'}, {NULL, 0, NULL, 0}};
    static const char *const SUBS[] = {"list", "show", "export", "check", NULL};
    if (argc < 2)
        return cli_usage_error(&cmd_platform, "missing the subcommand (list, show, export or check)");
    int sub = -1;
    for (int i = 0; SUBS[i]; i++)
        if (strcmp(argv[1], SUBS[i]) == 0)
            sub = i;
    if (sub < 0) {
        const char *near = jx_closest(argv[1], SUBS);
        return cli_usage_error(&cmd_platform, "unknown subcommand '%s'%s%s%s", argv[1], near ? " (did you mean '" : "",
                               near ? near : "", near ? "'?)" : "");
    }
    platform_options o = {0};
    int as_json = 0, c;
    const char *xml = NULL;
    opterr = 0;
    optind = 1;
    argc--;
    argv++;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        long nodes;
        switch (c) {
        case 'n':
            if (cli_int(&cmd_platform, "--nodes", optarg, 1, PLATFORM_MAX_NODES, &nodes))
                return TT_EINPUT;
            o.nodes = (int)nodes;
            break;
        case 'b':
            if (parse_positive("--link-bw", optarg, 0, &o.link_bw_Bps))
                return TT_EINPUT;
            break;
        case 'l':
            if (parse_positive("--link-latency", optarg, 1, &o.link_latency_s))
                return TT_EINPUT;
            break;
        case 'a': o.accelerator = optarg; break;
        case 'm': o.mesh = optarg; break;
        case 's': {
            tt_error e = {0};
            if (platform_shape_parse(optarg, o.shape, &e))
                return cli_usage_error(&cmd_platform, "--shape %s", e.msg);
            break;
        }
        case 'j': as_json = 1; break;
        case 'x': xml = optarg; break;
        default: return cli_bad_option(&cmd_platform, argv, optind, optopt, opts, c == ':');
        }
    }
    tt_error err = {0};
    if (sub == 0 && optind != argc)
        return cli_usage_error(&cmd_platform, "list takes no platform name, got '%s'", argv[optind]);
    if (sub == 0) {
        char **names = platform_list(&err);
        if (!names)
            return cli_report_error(err.code, err.msg);
        for (char **s = names; *s; s++)
            printf("%s\n", *s);
        platform_list_free(names);
        return TT_OK;
    }
    if (optind != argc - 1)
        return cli_usage_error(&cmd_platform, optind == argc ? "missing the platform name" : "expected one platform name");
    if (sub == 2 && !xml)
        return cli_usage_error(&cmd_platform, "export needs --xml FILE");
    if (sub == 3)
        return check_platform(argv[optind], &o, as_json);
    platform *p = platform_load(argv[optind], &o, &err);
    if (!p)
        return cli_report_error(err.code, err.msg);
    int rc = TT_OK;
    if (sub == 1) {
        platform_summary s;
        platform_summarize(p, &s);
        if (as_json) {
            json_t *doc = summary_json(p, &s);
            json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
            fputc('\n', stdout);
            json_decref(doc);
        } else {
            print_summary(p, &s);
        }
    } else {
        FILE *f = stdout;
        outfile *of = NULL;
        const char *input = argv[optind], *what = "the platform file";
        if (strcmp(xml, "-") != 0 && !(rc = outfile_check_distinct(&xml, 1, &input, &what, 1, &err)))
            rc = outfile_open(xml, "the SimGrid XML", &of, &f, &err);
        if (rc == TT_OK && (rc = platform_write_xml(p, NETWORK_IDEAL, f, &err)) != TT_OK)
            outfile_discard(of);
        else if (rc == TT_OK && of)
            rc = outfile_commit(of, &err);
        if (rc)
            rc = cli_report_error(rc, err.msg);
    }
    platform_free(p);
    return rc;
}

/* The options show, export and check share. */
#define PLATFORM_OPTIONS_USAGE                                                                              \
    "[--nodes N]\n           [--link-bw B/S] [--link-latency S] [--accelerator NAME] [--mesh PATTERN] " \
    "[--shape AxB[xC]]"

const cli_command cmd_platform = {
    "platform", "list, show and export the hardware platforms",
    "platform list | show NAME|FILE [--json] " PLATFORM_OPTIONS_USAGE "\n"
    "           | export NAME|FILE --xml FILE " PLATFORM_OPTIONS_USAGE "\n"
    "           | check NAME|FILE [--max-memory SIZE] " PLATFORM_OPTIONS_USAGE,
    platform_main, platform_help,
};
