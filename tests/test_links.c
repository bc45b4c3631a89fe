/* The link report (--links): bytes counted on SimGrid's routes, worked out
 * by hand for ring and alltoall on NVSwitch nodes; rails' PXN relay; a
 * fabric rate the NIC overrides is noted. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
#include "tests/testutil.h"

static coll_result simulate(const char *name, int nodes, const json_t *fabric, coll_op op, coll_algo algo,
                            double bytes)
{
    platform_options o = {.nodes = nodes, .fabric = fabric};
    tt_error err = {0};
    platform *p = platform_load(name, &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_params asked = {.op = op, .algo = algo, .bytes = bytes};
    coll_request rq = coll_request_build(p, &asked);
    rq.links = 1;
    coll_result r;
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &r, &err) == TT_OK, "%s", err.msg);
    platform_free(p);
    return r;
}

static const link_use *find(const link_usage *u, const char *from, const char *to)
{
    for (int i = 0; i < u->n; i++)
        if (strcmp(u->top[i].link.from, from) == 0 && strcmp(u->top[i].link.to, to) == 0)
            return &u->top[i];
    return NULL;
}

static const link_class_use *class_of(const link_usage *u, const char *cls)
{
    for (int i = 0; i < u->n_classes; i++)
        if (strcmp(u->classes[i].cls, cls) == 0)
            return &u->classes[i];
    return NULL;
}

START_TEST(ring_on_one_nvswitch_node)
{
    /* 8 GB ring/Simple on 8 GPUs: every GPU sends and receives 2(n-1)/n x 8 GB
     * = 14 GB over its NVLinks to the crossbar, and nothing else moves. */
    coll_result r = simulate("dgx-a100", 1, NULL, OP_ALLREDUCE, ALGO_NCCL, 8e9);
    ck_assert_str_eq(r.nccl, "ring/Simple");
    ck_assert_int_eq(r.links.links_used, 16);
    ck_assert_str_eq(r.links.top[0].link.cls, "nvlink3");
    ck_assert_int_eq(r.links.n_classes, 1);
    ck_assert_double_eq_tol(r.links.classes[0].bytes, 16 * 14e9, 16);
    for (int i = 0; i < r.links.n; i++)
        ck_assert_double_eq_tol(r.links.top[i].bytes, 14e9, 1);
    const link_use *l = find(&r.links, "n0-gpu3", "n0-nvswitch");
    ck_assert_ptr_nonnull(l);
    ck_assert_double_eq_tol(l->busy_s, 14e9 / (12 * 25e9), 1e-9); /* 12 NVLink3 of 25 GB/s */
}
END_TEST

START_TEST(rings_cross_nodes_at_every_nic)
{
    /* Two DGX A100: 8 channel rings, each entering a node at another NIC, so
     * each of the 16 NICs carries 1/8 of 2(n-1)/n x 1 GB each way. */
    coll_result r = simulate("dgx-a100", 2, NULL, OP_ALLREDUCE, ALGO_NCCL, 1e9);
    for (int node = 0; node < 2; node++)
        for (int nic = 0; nic < 8; nic++) {
            char a[40], b[40];
            snprintf(a, sizeof a, "n%d-nic%d", node, nic);
            snprintf(b, sizeof b, "n%d-port", node);
            const link_use *up = find(&r.links, a, b), *down = find(&r.links, b, a);
            ck_assert_msg(up && down, "%s", a);
            ck_assert_double_eq_tol(up->bytes, 2 * 15.0 / 16 * 1e9 / 8, 1);
            ck_assert_double_eq_tol(down->bytes, up->bytes, 1);
        }
}
END_TEST

START_TEST(rails_relay_cross_rail_over_nvlink)
{
    tt_error err = {0};
    platform_options o = {.nodes = 2};
    platform *p = platform_load("dgx-h100", &o, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(platform_rail_relay(p, 0, 9), 1); /* GPU 0 -> node 1's GPU 1: via GPU 1, rail 1 */
    ck_assert_int_eq(platform_rail_relay(p, 3, 13), 5);
    ck_assert_int_eq(platform_rail_relay(p, 0, 8), -1); /* same rail */
    ck_assert_int_eq(platform_rail_relay(p, 0, 1), -1); /* same node */
    platform_free(p);
    /* Pairwise alltoall of 1.6 GB per rank on 16 ranks: 100 MB per pair.
     * Every GPU sends 7 x 100 MB to its node's GPUs over two NVLink bundles
     * (to the switch, from it); on rails 7 x 100 MB more, relayed to the GPUs
     * on the other node's other rails: twice the fat-tree twin's NVLink bytes. */
    json_t *ft = json_pack("{s:s, s:i}", "topology", "fattree", "nodes_per_leaf", 4);
    coll_result rail = simulate("dgx-h100", 2, NULL, OP_ALLTOALL, ALGO_PAIRWISE, 1.6e9);
    coll_result tree = simulate("dgx-h100", 2, ft, OP_ALLTOALL, ALGO_PAIRWISE, 1.6e9);
    json_decref(ft);
    const link_class_use *nvr = class_of(&rail.links, "nvlink4"), *nvt = class_of(&tree.links, "nvlink4");
    ck_assert_msg(nvr && nvt, "no NVLink class");
    ck_assert_int_eq(nvr->links, 32); /* 16 GPUs, both directions */
    ck_assert_double_eq_tol(nvr->bytes, 2 * 2 * 16 * 7 * 1e8, 1); /* into and out of the switch */
    ck_assert_double_eq_tol(nvt->bytes, 2 * 16 * 7 * 1e8, 1);
    const link_use *a, *b;
    /* NIC 0 carries what node 0 sends to node 1's GPU 0 (8 x 100 MB) on rails,
     * what GPU 0 sends to node 1 (8 x 100 MB) on the twin. */
    a = find(&rail.links, "n0-nic0", "n0-port");
    b = find(&tree.links, "n0-nic0", "n0-port");
    ck_assert_msg(a && b, "NIC 0 not among the busiest");
    ck_assert_double_eq_tol(a->bytes, 8e8, 1);
    ck_assert_double_eq_tol(b->bytes, 8e8, 1);
}
END_TEST

START_TEST(fabric_rate_above_the_nic_is_noted)
{
    tt_error err = {0};
    json_t *fab = json_pack("{s:{s:f, s:s}}", "link", "bandwidth_Bps", 1e11, "latency_s", "0.5us");
    platform_options o = {.nodes = 2, .fabric = fab};
    platform *p = platform_load("dgx-a100", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_note_count(p), 1);
    ck_assert_msg(strstr(platform_note(p, 0), "1e+11") && strstr(platform_note(p, 0), "2.5e+10") &&
                      strstr(platform_note(p, 0), "ib-hdr"), "%s", platform_note(p, 0));
    platform_summary s;
    platform_summarize(p, &s);
    platform_free(p);
    json_decref(fab);
    /* the NIC's rate still sets the uplinks: the same busbw as without the override */
    o = (platform_options){.nodes = 2};
    p = platform_load("dgx-a100", &o, &err);
    ck_assert_int_eq(platform_note_count(p), 0);
    platform_summary plain;
    platform_summarize(p, &plain);
    ck_assert_double_eq(s.bisection_Bps, plain.bisection_Bps);
    platform_free(p);
}
END_TEST

START_TEST(cli_links_report)
{
    char out[65536];
    json_t *doc = tu_run_ttasim_json("collective --platform dgx-a100 --nodes 2 --bytes 1G --links 3 --json", 0, out,
                                     sizeof out);
    json_t *links = json_object_get(json_array_get(json_object_get(doc, "results"), 0), "links");
    ck_assert_msg(links != NULL, "%s", out);
    ck_assert_int_eq(json_array_size(json_object_get(links, "links")), 3);
    json_t *first = json_array_get(json_object_get(links, "links"), 0);
    double interval = json_real_value(json_object_get(links, "interval_s"));
    ck_assert_double_eq_tol(json_real_value(json_object_get(first, "utilisation")),
                            json_real_value(json_object_get(first, "busy_s")) / interval, 1e-12);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(links, "bottleneck"), "class")),
                     json_string_value(json_object_get(first, "class")));
    json_decref(doc);
    ck_assert_int_eq(tu_run_ttasim("collective --platform dgx-a100 --bytes 1G --links 0", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--links"), "%s", out);
}
END_TEST

START_TEST(run_links_name_the_zion_host_bottleneck)
{
    /* Zion with the tables in host memory: the rows and gradients, not the
     * allreduce, load the links, and the CPU-to-PCIe-switch uplinks (PCIe
     * Gen3) are the busiest (the example's own description says so). */
    char out[1 << 17];
    json_t *doc = tu_run_ttasim_json("run " TTASIM_SRCDIR "/scenarios/examples/zion-dlrm-host.json --quiet --json --links 4",
                                     0, out, sizeof out);
    json_t *links = json_object_get(doc, "links");
    ck_assert_msg(links != NULL, "%s", out);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(links, "bottleneck"), "class")), "pcie3");
    ck_assert_str_eq(json_string_value(json_object_get(links, "over")), "step");
    ck_assert_double_eq_tol(json_real_value(json_object_get(links, "interval_s")),
                            json_real_value(json_object_get(json_object_get(doc, "step"), "time_s")), 1e-15);
    json_t *first = json_array_get(json_object_get(links, "links"), 0);
    ck_assert_str_eq(json_string_value(json_object_get(first, "from")), "n0-cpu0");
    ck_assert_str_eq(json_string_value(json_object_get(first, "to")), "n0-pcie0");
    json_decref(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("links");
    TCase *t = tcase_create("links");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, ring_on_one_nvswitch_node);
    tcase_add_test(t, rings_cross_nodes_at_every_nic);
    tcase_add_test(t, rails_relay_cross_rail_over_nvlink);
    tcase_add_test(t, fabric_rate_above_the_nic_is_noted);
    tcase_add_test(t, cli_links_report);
    tcase_add_test(t, run_links_name_the_zion_host_bottleneck);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? 1 : 0;
}
