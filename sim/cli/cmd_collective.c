/* ttasim collective: an nccl-tests-like table for a collective on a simulated platform. */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/nccl.h"
#include "collectives/schedule.h"
#include "common/error.h"
#include "common/jsonx.h"
#include "common/units.h"
#include "platforms/platform.h"
#include "sim/cli/cli.h"
#include "sim/engine/collective_sim.h"
#include "sim/report/links.h"

extern const cli_command cmd_collective;

#define MAX_SIZES 64

static void collective_help(FILE *out)
{
    fprintf(out,
            "Simulates a collective on a platform and prints, per size, the time, the\n"
            "algorithm bandwidth (size / time) and the bus bandwidth (nccl-tests' factors:\n"
            "allreduce 2(n-1)/n; reduce_scatter, allgather, alltoall (n-1)/n; others 1).\n\n"
            "  --platform P         a built-in platform, star|ring|torus2d|torus3d|fattree, or a file\n"
            "  --nodes N            nodes (generic platforms: accelerators)\n"
            "  --link-bw B          generic platforms: link payload bandwidth, bytes/s per direction\n"
            "  --link-latency S     generic platforms: link latency, seconds\n"
            "  --op OP              allreduce (default), reduce_scatter, allgather, broadcast,\n"
            "                       reduce, alltoall\n"
            "  --algo ALG           nccl (default): what NCCL picks on NVIDIA GPUs (ring, tree,\n"
            "                       nvls, nvls_tree, collnet_direct, collnet_chain with LL, LL128\n"
            "                       or Simple: its channels per NIC, pipelines and latencies),\n"
            "                       the torus schedule on a torus, else auto; auto: the fastest\n"
            "                       of ttasim's own schedules below, each simulated; or one of\n"
            "                       them: ring (one ring; rings per NIC under nccl), rhd, rd,\n"
            "                       binomial, tree, dbtree (over ranks), torus2d, torus, hier,\n"
            "                       direct, pairwise, bruck\n"
            "  --nccl-algo LIST     as NCCL_ALGO: the algorithms nccl may pick (tree, ring,\n"
            "                       collnetdirect, collnetchain, nvls, nvlstree; ^LIST: all but)\n"
            "  --nccl-proto LIST    as NCCL_PROTO: ll, ll128, simple (^LIST: all but)\n"
            "  --nccl-collnet       as NCCL_COLLNET_ENABLE=1: CollNet and NVLS across nodes\n"
            "                       where the fabric reduces in the network (SHARP)\n"
            "  --bytes S[,S...]     sizes (nccl-tests' meaning: the whole vector per rank);\n"
            "                       K/M/G and Ki/Mi/Gi suffixes\n"
            "  --ranks N            use ranks 0..N-1 only (default: every accelerator)\n"
            "  --chunk S            pipeline chunk of tree, dbtree and chains (default 1Mi; 0: none)\n"
            "  --ranks-per-node N   hier: ranks per node (default: the platform's); hier\n"
            "                       allreduce runs one inter-node ring per NIC of a node\n"
            "  --dim-x N            torus2d: ranks per row (default: the divisor nearest sqrt)\n"
            "  --inter ALG          hier allreduce: the inter-node phase, ring (default) or rhd\n"
            "                       (recursive halving/doubling; a power-of-two node count)\n"
            "  --staging W          hier allreduce: device (default) or host: the node's reduced\n"
            "                       vector is copied to a CPU socket's memory over PCIe, the\n"
            "                       inter-node steps run from there and are summed by one CPU\n"
            "                       thread, the result is copied back (Gloo over TCP)\n"
            "  --network M          ideal|calibrated (default calibrated)\n"
            "  --messages           message-level executor (slow reference) instead of rounds\n"
            "  --links N            per size, the N busiest links (class, ends, bytes, busy time,\n"
            "                       utilisation over the collective) and the bottleneck class\n"
            "  --json               print one JSON document on stdout\n"
            "  --help               this text\n");
}

typedef struct collective_args {
    const char *platform;
    platform_options popt;
    coll_params params; /* what the options ask; coll_request_build fills the rest */
    double sizes[MAX_SIZES];
    int nsizes;
    int chunk_set; /* --chunk given: 0 means no pipelining, not the default */
    network_model net;
    int messages, as_json;
    int links; /* --links N: the N busiest links per size (0: no report) */
} collective_args;

static int parse_count(const char *word, const char *opt, int *out)
{
    long v;
    int rc = cli_int(&cmd_collective, opt, word, 1, 1 << 20, &v);
    if (rc == TT_OK)
        *out = (int)v;
    return rc;
}

static int parse_amount(const char *word, const char *opt, int seconds, double *out)
{
    const char *why;
    int rc = seconds ? units_parse_seconds(word, out, &why) : units_parse_bytes(word, out, &why);
    if (rc == 0)
        return TT_OK;
    return cli_usage_error(&cmd_collective, "%s: '%s' %s", opt, word, why);
}

/* Splits a copy of the whole list: a fixed buffer would cut a long one mid-number. */
static int parse_sizes(const char *list, collective_args *a)
{
    char *buf = strdup(list);
    int rc = TT_OK;
    if (!buf)
        return cli_report_error(TT_EINTERNAL, "out of memory");
    a->nsizes = 0;
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w && rc == TT_OK; w = strtok_r(NULL, ",", &save)) {
        if (a->nsizes == MAX_SIZES)
            rc = cli_usage_error(&cmd_collective, "--bytes takes at most %d sizes", MAX_SIZES);
        else if (parse_amount(w, "--bytes", 0, &a->sizes[a->nsizes]))
            rc = TT_EINPUT;
        else if (a->sizes[a->nsizes] < 1)
            rc = cli_usage_error(&cmd_collective, "--bytes: sizes must be at least 1 byte, got '%s'", w);
        else
            a->nsizes++;
    }
    free(buf);
    if (rc == TT_OK && a->nsizes == 0)
        rc = cli_usage_error(&cmd_collective, "--bytes needs at least one size");
    return rc;
}

static int parse_args(int argc, char **argv, collective_args *a)
{
    enum { O_PLATFORM = 1, O_NODES, O_BW, O_LAT, O_OP, O_ALGO, O_BYTES, O_RANKS, O_CHUNK, O_RPN,
           O_DIMX, O_NETWORK, O_MESSAGES, O_JSON, O_LINKS, O_INTER, O_STAGING, O_NCCL_ALGO, O_NCCL_PROTO,
           O_NCCL_COLLNET };
    static const struct option opts[] = {
        {"platform", required_argument, NULL, O_PLATFORM}, {"nodes", required_argument, NULL, O_NODES},
        {"link-bw", required_argument, NULL, O_BW}, {"link-latency", required_argument, NULL, O_LAT},
        {"op", required_argument, NULL, O_OP}, {"algo", required_argument, NULL, O_ALGO},
        {"bytes", required_argument, NULL, O_BYTES}, {"ranks", required_argument, NULL, O_RANKS},
        {"chunk", required_argument, NULL, O_CHUNK}, {"ranks-per-node", required_argument, NULL, O_RPN},
        {"dim-x", required_argument, NULL, O_DIMX}, {"network", required_argument, NULL, O_NETWORK},
        {"messages", no_argument, NULL, O_MESSAGES}, {"json", no_argument, NULL, O_JSON},
        {"links", required_argument, NULL, O_LINKS}, {"inter", required_argument, NULL, O_INTER},
        {"staging", required_argument, NULL, O_STAGING}, {"nccl-algo", required_argument, NULL, O_NCCL_ALGO},
        {"nccl-proto", required_argument, NULL, O_NCCL_PROTO}, {"nccl-collnet", no_argument, NULL, O_NCCL_COLLNET},
        {NULL, 0, NULL, 0}};
    const char *op_names[OP_COUNT + 1], *algo_names[ALGO_COUNT + 1], *nets[] = {"ideal", "calibrated", NULL};
    for (int i = 0; i < OP_COUNT; i++)
        op_names[i] = coll_op_name((coll_op)i);
    op_names[OP_COUNT] = NULL;
    int nalgos = ALGO_NCCL + 1; /* ALGO_PIPELINE is NCCL's own, never asked for */
    for (int i = 0; i < nalgos; i++)
        algo_names[i] = coll_algo_name((coll_algo)i);
    algo_names[nalgos] = NULL;
    memset(a, 0, sizeof *a);
    a->params.op = OP_ALLREDUCE;
    a->params.algo = ALGO_NCCL;
    a->net = NETWORK_CALIBRATED;
    int c, v = 0, rc = TT_OK;
    opterr = 0;
    optind = 1;
    while (rc == TT_OK && (c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
        switch (c) {
        case O_PLATFORM: a->platform = optarg; break;
        case O_NODES: {
            long nodes = 0;
            rc = cli_int(&cmd_collective, "--nodes", optarg, 1, PLATFORM_MAX_NODES, &nodes);
            a->popt.nodes = (int)nodes;
            break;
        }
        case O_BW: rc = parse_amount(optarg, "--link-bw", 0, &a->popt.link_bw_Bps); break;
        case O_LAT: rc = parse_amount(optarg, "--link-latency", 1, &a->popt.link_latency_s); break;
        case O_OP:
            rc = cli_choice(&cmd_collective, "--op", optarg, op_names, &v);
            a->params.op = (coll_op)v;
            break;
        case O_ALGO:
            rc = cli_choice(&cmd_collective, "--algo", optarg, algo_names, &v);
            a->params.algo = (coll_algo)v;
            break;
        case O_BYTES: rc = parse_sizes(optarg, a); break;
        case O_RANKS: rc = parse_count(optarg, "--ranks", &a->params.ranks); break;
        case O_CHUNK:
            rc = parse_amount(optarg, "--chunk", 0, &a->params.chunk_bytes);
            a->chunk_set = 1;
            break;
        case O_RPN: rc = parse_count(optarg, "--ranks-per-node", &a->params.ranks_per_node); break;
        case O_DIMX: rc = parse_count(optarg, "--dim-x", &a->params.dim_x); break;
        case O_NETWORK:
            rc = cli_choice(&cmd_collective, "--network", optarg, nets, &v);
            a->net = (network_model)v;
            break;
        case O_MESSAGES: a->messages = 1; break;
        case O_INTER:
            rc = cli_choice(&cmd_collective, "--inter", optarg, coll_inter_words(), &v);
            a->params.inter = coll_inter_algo(v);
            break;
        case O_STAGING:
            rc = cli_choice(&cmd_collective, "--staging", optarg, coll_staging_words(), &v);
            a->params.staging = (coll_staging)v;
            break;
        case O_LINKS:
            rc = parse_count(optarg, "--links", &a->links);
            if (rc == TT_OK && a->links > LINK_USAGE_MAX)
                rc = cli_usage_error(&cmd_collective, "--links %d: at most %d links are kept", a->links,
                                     LINK_USAGE_MAX);
            break;
        case O_NCCL_ALGO:
        case O_NCCL_PROTO: {
            const char *bad;
            int len;
            int proto = c == O_NCCL_PROTO;
            if ((proto ? nccl_parse_protos(optarg, &a->params.nccl_protos, &bad, &len)
                       : nccl_parse_algos(optarg, &a->params.nccl_algos, &bad, &len)) ||
                (proto ? a->params.nccl_protos : a->params.nccl_algos) == 0)
                rc = cli_usage_error(&cmd_collective, "%s: '%s' names %s '%.*s' (expected a list of: %s)",
                                     proto ? "--nccl-proto" : "--nccl-algo", optarg,
                                     len ? "an unknown" : "nothing", len, bad, proto ? nccl_proto_words() : nccl_algo_words());
            break;
        }
        case O_NCCL_COLLNET: a->params.nccl_collnet = 1; break;
        case O_JSON: a->as_json = 1; break;
        default: return cli_bad_option(&cmd_collective, argv, optind, optopt, opts, c == ':');
        }
    }
    if (rc != TT_OK)
        return rc;
    if (optind != argc)
        return cli_usage_error(&cmd_collective, "unexpected argument '%s'", argv[optind]);
    if (!a->platform)
        return cli_usage_error(&cmd_collective, "missing --platform");
    if (!a->nsizes)
        return cli_usage_error(&cmd_collective, "missing --bytes");
    return TT_OK;
}

/* nccl-tests' algorithm bandwidth: size / time (0 when nothing moved). */
static double algbw_Bps(const coll_request *rq, const coll_result *res)
{
    return res->time_s > 0 ? rq->params.bytes / res->time_s : 0.0;
}

/* hier's phase between the nodes: rings unless rhd was asked for */
static const char *inter_node_name(const coll_params *c)
{
    return coll_algo_name(c->inter == ALGO_RHD ? ALGO_RHD : ALGO_RING);
}

/* What ran: "nccl" for NCCL's pick (its algorithm and protocol in the nccl
 * column), else ttasim's own schedule, so NCCL's rings per NIC and ttasim's
 * single ring never share a name. */
static const char *result_algo_name(const coll_result *res)
{
    return res->nccl[0] ? "nccl" : coll_algo_name(res->algo);
}

static void print_table(const collective_args *a, const platform *p, const coll_request *rq,
                        const coll_result *res)
{
    int n = rq[0].params.ranks;
    printf("# ttasim collective: %s, algo %s, on %s (%d ranks), network %s\n", coll_op_name(a->params.op),
           coll_algo_name(a->params.algo), platform_name(p), n, network_name(a->net));
    for (int i = 0; i < platform_note_count(p); i++)
        printf("# note: %s\n", platform_note(p, i));
    printf("# %s executor, chunk %.0f bytes, staging %s, inter-node %s\n#\n", a->messages ? "message-level" : "rounds",
           rq[0].params.chunk_bytes, coll_staging_name(a->params.staging), inter_node_name(&a->params));
    printf("# %14s  %-9s %-21s %14s %13s %13s\n", "size(B)", "algo", "nccl", "time(us)", "algbw(GB/s)",
           "busbw(GB/s)");
    for (int i = 0; i < a->nsizes; i++) {
        double algbw = algbw_Bps(&rq[i], &res[i]);
        printf("  %14.0f  %-9s %-21s %14.3f %13.3f %13.3f\n", rq[i].params.bytes, result_algo_name(&res[i]),
               res[i].nccl[0] ? res[i].nccl : "-", res[i].time_s * 1e6, algbw / 1e9,
               algbw * coll_busbw_factor(a->params.op, n) / 1e9);
    }
    for (int i = 0; a->links && i < a->nsizes; i++) {
        printf("\n# links at %.0f bytes\n", rq[i].params.bytes);
        links_report_text(stdout, &res[i].links, res[i].time_s, "collective", a->links);
    }
}

static json_t *result_json(const collective_args *a, const platform *p, const coll_request *rq,
                           const coll_result *res)
{
    int n = rq[0].params.ranks;
    json_t *list = json_array();
    for (int i = 0; i < a->nsizes; i++) {
        double algbw = algbw_Bps(&rq[i], &res[i]);
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:f, s:i, s:f, s:f, s:f}", "op", coll_op_name(a->params.op),
                            "algo", result_algo_name(&res[i]), "requested_algo",
                            coll_algo_name(a->params.algo), "bytes", rq[i].params.bytes, "ranks", n,
                            "time_s", res[i].time_s, "algbw_Bps", algbw, "busbw_Bps",
                            algbw * coll_busbw_factor(a->params.op, n)));
        json_t *row = json_array_get(list, json_array_size(list) - 1);
        json_object_set_new(row, "nccl", res[i].nccl[0] ? json_string(res[i].nccl) : json_null());
        if (a->links)
            json_object_set_new(row, "links", links_report_json(&res[i].links, res[i].time_s, "collective", a->links));
    }
    json_t *notes = json_array();
    for (int i = 0; i < platform_note_count(p); i++)
        json_array_append_new(notes, json_string(platform_note(p, i)));
    return json_pack("{s:s, s:s, s:i, s:s, s:f, s:s, s:s, s:o, s:o}", "platform", platform_name(p), "network",
                     network_name(a->net), "ranks", n, "executor", a->messages ? "messages" : "rounds",
                     "chunk_bytes", rq[0].params.chunk_bytes, "staging", coll_staging_name(a->params.staging),
                     "inter_node", inter_node_name(&a->params), "results", list, "notes", notes);
}

static int collective_main(int argc, char **argv)
{
    collective_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc)
        return rc;
    tt_error err = {0};
    platform *p = platform_load(a.platform, &a.popt, &err);
    if (!p)
        return cli_report_error(err.code ? err.code : TT_EINPUT, err.msg);
    int n = a.params.ranks ? a.params.ranks : platform_ranks(p);
    if (n < 2) {
        platform_free(p);
        return cli_usage_error(&cmd_collective, "a collective needs at least 2 ranks, got %d", n);
    }
    if (n > platform_ranks(p)) {
        platform_free(p);
        return cli_usage_error(&cmd_collective, "--ranks %d: the platform has %d accelerators", n,
                               platform_ranks(p));
    }
    coll_request rq[MAX_SIZES];
    coll_result res[MAX_SIZES];
    for (int i = 0; i < a.nsizes; i++) {
        a.params.bytes = a.sizes[i];
        rq[i] = coll_request_build(p, &a.params);
        if (a.chunk_set)
            rq[i].params.chunk_bytes = a.params.chunk_bytes;
        rq[i].messages = a.messages;
        rq[i].links = a.links > 0;
    }
    rc = coll_simulate(p, a.net, rq, a.nsizes, res, &err);
    if (rc) {
        platform_free(p);
        return cli_report_error(rc, err.msg);
    }
    if (a.as_json) {
        json_t *doc = result_json(&a, p, rq, res);
        json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
        fputc('\n', stdout);
        json_decref(doc);
    } else {
        print_table(&a, p, rq, res);
    }
    platform_free(p);
    return TT_OK;
}

const cli_command cmd_collective = {
    "collective", "nccl-tests-like table of a collective on a simulated platform",
    "collective --platform P [--nodes N] [--link-bw B] [--link-latency S] [--op OP] [--algo ALG|nccl|auto]\n"
    "           [--nccl-algo LIST] [--nccl-proto LIST] [--nccl-collnet] --bytes S[,S...] [--ranks N]\n"
    "           [--chunk S] [--ranks-per-node N] [--dim-x N] [--inter ALG] [--staging W] [--network M]\n"
    "           [--messages] [--links N] [--json]",
    collective_main, collective_help,
};
