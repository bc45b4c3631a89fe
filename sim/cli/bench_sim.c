/* bench_sim.c: `ttasim bench sim`: how fast the collective executor runs a
 * 100 MB ring allreduce at 256, 1,024 and 4,096 ranks on a star, a 2-D torus
 * and a fat tree, and whether the rounds executor keeps the message-level
 * simulated time. Each run is one forked simulation; wall time includes the
 * fork, the platform XML and SimGrid's start-up. */
#include "sim/cli/bench_sim.h"

#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/units.h"
#include "platforms/platform.h"
#include "sim/cli/bench_scale.h"
#include "sim/engine/collective_sim.h"

#define GOAL_STAR_1024_S 2.0
#define GOAL_TORUS_4096_S 10.0
#define GOAL_RSS_BYTES 1e9
#define GOAL_REL_DIFF 0.005

static const char *const PLATFORMS[] = {"star", "torus2d", "fattree"};
static const int RANKS[] = {256, 1024, 4096};

typedef struct bench_row {
    const char *platform;
    int ranks, messages;
    double wall_s, peak_rss_bytes, sim_s;
} bench_row;

static int bench_one(const char *name, int ranks, int messages, double bytes, network_model net,
                     bench_row *row, tt_error *err)
{
    platform_options o = {.nodes = ranks};
    platform *p = platform_load(name, &o, err);
    if (!p)
        return err->code ? err->code : TT_EINPUT;
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .bytes = bytes};
    coll_request rq = coll_request_build(p, &asked);
    rq.messages = messages;
    coll_result r;
    double t0 = clock_monotonic_s();
    int rc = coll_simulate(p, net, &rq, 1, &r, err);
    *row = (bench_row){name, ranks, messages, clock_monotonic_s() - t0, r.peak_rss_bytes, r.time_s};
    platform_free(p);
    return rc;
}

void bench_sim_help(FILE *out)
{
    fprintf(out,
            "ttasim bench sim [--json] [--bytes S] [--network ideal|calibrated] [--no-messages]\n"
            "ttasim bench sim --scale [--only WORD] [--json]\n\n"
            "Ring allreduce (default 100M bytes) on star, torus2d and fattree at 256, 1024\n"
            "and 4096 ranks with the rounds executor: wall seconds, peak memory of the\n"
            "simulation process, simulated seconds. The message-level executor (one\n"
            "message per rank per step) also runs at 256 and 1024 ranks; the rounds time\n"
            "must stay within 0.5 %% of it. Goals: star 1024 <= 2 s, torus2d 4096 <= 10 s,\n"
            "under 1 GB; exit status 1 when one is missed.\n\n"
            "--scale runs the scale cases instead, each as a child ttasim: a 64-point sweep\n"
            "at -j 1 and -j 2 (goal: -j 2 <= 0.6x the wall time, identical output),\n"
            "alltoall on a 1,024-rank switch, direct and pairwise, 64 MiB (<= 3 s, 400 MB),\n"
            "direct, pairwise and bruck at 4,096 (<= 30 s), auto at 4,096 (<= 2x the wall\n"
            "time of the case it picked, 300 MB), ResNet-50 on 2,048 DGX A100 nodes\n"
            "(<= 10 s, 1 GB), and building a 65,536-GPU DGX A100 platform in SimGrid\n"
            "(<= 30 s, 4 GB). Peak memory is the largest resident set of the case and its\n"
            "simulation processes; a case past its stop time (a few times its goal) is\n"
            "killed and reported as stopped.\n"
            "--only WORD runs only the cases whose name contains WORD (\"alltoall\").\n");
}

int bench_sim_main(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"bytes", required_argument, NULL, 'b'},
                                         {"network", required_argument, NULL, 'n'},
                                         {"no-messages", no_argument, NULL, 'm'},
                                         {"scale", no_argument, NULL, 's'},
                                         {"only", required_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    int as_json = 0, with_messages = 1, scale = 0, c;
    double bytes = 100e6;
    network_model net = NETWORK_CALIBRATED;
    const char *why, *only = NULL;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case 'j': as_json = 1; break;
        case 'm': with_messages = 0; break;
        case 's': scale = 1; break;
        case 'o': only = optarg; break;
        case 'b':
            if (units_parse_bytes(optarg, &bytes, &why) || bytes < 1) {
                fprintf(stderr, "ttasim bench sim: --bytes: '%s' is not a size (%s)\n", optarg, why ? why : "");
                return TT_EINPUT;
            }
            break;
        case 'n':
            if (strcmp(optarg, "ideal") && strcmp(optarg, "calibrated")) {
                fprintf(stderr, "ttasim bench sim: --network expects ideal or calibrated, got '%s'\n", optarg);
                return TT_EINPUT;
            }
            net = strcmp(optarg, "ideal") == 0 ? NETWORK_IDEAL : NETWORK_CALIBRATED;
            break;
        default:
            fprintf(stderr, "ttasim bench sim: unknown option '%s'\nTry 'ttasim bench sim --help'.\n",
                    argv[optind - 1]);
            return TT_EINPUT;
        }
    }
    if (optind != argc) {
        fprintf(stderr, "ttasim bench sim: unexpected argument '%s'\n", argv[optind]);
        return TT_EINPUT;
    }
    if (only && !scale) {
        fprintf(stderr, "ttasim bench sim: --only selects --scale cases; add --scale\n");
        return TT_EINPUT;
    }
    if (scale)
        return bench_scale_run(as_json, only);
    bench_row rows[32];
    int nrows = 0, failed = 0;
    tt_error err = {0};
    if (!as_json)
        printf("# ring allreduce of %.0f bytes, network %s\n# %-8s %6s %-9s %10s %10s %16s %10s\n", bytes,
               network_name(net), "platform", "ranks", "executor", "wall(s)", "peak(MB)", "simulated(s)",
               "vs msgs");
    for (int pi = 0; pi < 3; pi++)
        for (int ri = 0; ri < 3; ri++)
            for (int m = 0; m <= (with_messages && RANKS[ri] <= 1024); m++) {
                bench_row *row = &rows[nrows];
                int rc = bench_one(PLATFORMS[pi], RANKS[ri], m, bytes, net, row, &err);
                if (rc) {
                    fprintf(stderr, "ttasim bench sim: %s\n", err.msg);
                    return rc;
                }
                nrows++;
                double rel = m ? row[-1].sim_s / row->sim_s - 1 : NAN;
                if (m && fabs(rel) > GOAL_REL_DIFF)
                    failed = 1;
                if (!m && row->peak_rss_bytes > GOAL_RSS_BYTES)
                    failed = 1;
                if (!m && ((RANKS[ri] == 1024 && pi == 0 && row->wall_s > GOAL_STAR_1024_S) ||
                           (RANKS[ri] == 4096 && pi == 1 && row->wall_s > GOAL_TORUS_4096_S)))
                    failed = 1;
                if (!as_json) {
                    printf("  %-8s %6d %-9s %10.3f %10.1f %16.9f", row->platform, row->ranks,
                           m ? "messages" : "rounds", row->wall_s, row->peak_rss_bytes / 1e6, row->sim_s);
                    if (m)
                        printf(" %+9.4f%%", 100 * rel);
                    printf("\n");
                    fflush(stdout);
                }
            }
    if (as_json) {
        json_t *list = json_array();
        for (int i = 0; i < nrows; i++)
            json_array_append_new(list, json_pack("{s:s, s:i, s:s, s:f, s:f, s:f}", "platform",
                                                  rows[i].platform, "ranks", rows[i].ranks, "executor",
                                                  rows[i].messages ? "messages" : "rounds", "wall_s",
                                                  rows[i].wall_s, "peak_rss_bytes", rows[i].peak_rss_bytes,
                                                  "sim_time_s", rows[i].sim_s));
        json_t *doc = json_pack("{s:s, s:f, s:s, s:o, s:b}", "collective", "allreduce ring", "bytes", bytes,
                                "network", network_name(net), "runs", list, "goals_met", !failed);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        printf("# goals: star 1024 <= %.0f s wall, torus2d 4096 <= %.0f s, peak < 1 GB, rounds within "
               "0.5 %% of messages: %s\n",
               GOAL_STAR_1024_S, GOAL_TORUS_4096_S, failed ? "MISSED" : "met");
    }
    return failed ? TT_EFAIL : TT_OK;
}
