/* platforms/: routes and hop counts of the fabrics, the built-in platforms'
 * structure against their published descriptions, malformed files, and
 * SimGrid agreeing with platform_path on the exported XML. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
#include "tests/testutil.h"

static platform *load(const char *name, int nodes, double bw, double lat)
{
    platform_options o = {.nodes = nodes, .link_bw_Bps = bw, .link_latency_s = lat};
    tt_error err = {0};
    platform *p = platform_load(name, &o, &err);
    ck_assert_msg(p != NULL, "%s: %s", name, err.msg);
    return p;
}

/* One transfer a -> b simulated on the platform's exported XML: a user
 * platform over that XML whose ranks 0 and 1 are a's and b's hosts, on which
 * a 2-rank chain broadcast is that one message. */
static double simulate_one(const platform *p, network_model net, int a, int b, double bytes)
{
    char hosts[160], ha[64], hb[64];
    snprintf(hosts, sizeof hosts, "%s\n%s\n", platform_rank_host(p, a, ha, sizeof ha),
             platform_rank_host(p, b, hb, sizeof hb));
    tu_user_platform u;
    tu_user_platform_write(&u, NULL, hosts, platform_device(p, a)->name);
    tt_error err = {0};
    FILE *f = fopen(u.xml, "w");
    ck_assert_msg(platform_write_xml(p, NETWORK_IDEAL, f, &err) == TT_OK, "%s", err.msg);
    fclose(f);
    platform *pair = platform_load(u.json, NULL, &err);
    ck_assert_msg(pair != NULL, "%s", err.msg);
    coll_request rq = {.params = {.op = OP_BROADCAST, .algo = ALGO_RING, .ranks = 2, .bytes = bytes}};
    coll_result r;
    ck_assert_msg(coll_simulate(pair, net, &rq, 1, &r, &err) == TT_OK, "%s", err.msg);
    platform_free(pair);
    tu_user_platform_remove(&u);
    return r.time_s;
}

/* A pair one hop apart along a torus side of 2 runs on both its cables in
 * ttasim's own simulations (the engine doubles the one SimGrid routes:
 * platform_paired_link); the exported XML is SimGrid's torus, one cable. */
static void assert_sim_matches_path(const platform *p, int a, int b)
{
    double lat, bw, bytes = 1e6;
    char twin[96];
    platform_path(p, a, b, &lat, &bw);
    if (platform_torus_paired(p, a, b)) {
        ck_assert(platform_paired_link(p, 0, twin, sizeof twin));
        bw /= 2;
    }
    double want = lat + bytes / bw, got = simulate_one(p, NETWORK_IDEAL, a, b, bytes);
    ck_assert_msg(fabs(got / want - 1) < 1e-6, "%s %d->%d: simulated %.9g s, path says %.9g s (lat %g, bw %g)",
                  platform_name(p), a, b, got, want, lat, bw);
}

START_TEST(ring_wraps_around)
{
    platform *p = load("ring", 10, 1e9, 1e-6);
    ck_assert_int_eq(platform_ranks(p), 10);
    ck_assert_int_eq(platform_hops(p, 0, 3), 3);
    ck_assert_int_eq(platform_hops(p, 0, 7), 3); /* the short way round */
    ck_assert_int_eq(platform_hops(p, 2, 7), 5);
    double lat, bw;
    platform_path(p, 9, 1, &lat, &bw);
    ck_assert_double_eq_tol(lat, 2e-6, 1e-15);
    ck_assert_double_eq(bw, 1e9);
    assert_sim_matches_path(p, 0, 7);
    platform_free(p);
}
END_TEST

START_TEST(torus2d_shape_and_distance)
{
    platform *p = load("torus2d", 4096, 0, 0);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.accelerators, 4096);
    ck_assert_int_eq(s.diameter_hops, 64); /* 32 + 32 on a 64 x 64 torus */
    /* rank = x + 64 y: (0,0) -> (63,63) is one hop each way round. */
    ck_assert_int_eq(platform_hops(p, 0, 63 + 64 * 63), 2);
    ck_assert_int_eq(platform_hops(p, 0, 32 + 64 * 32), 64);
    ck_assert_int_eq(platform_hops(p, 5, 5 + 64 * 40), 24);
    ck_assert_double_eq(s.bisection_Bps, 2.0 * 64 * 12.5e9);
    platform_free(p);
}
END_TEST

START_TEST(torus3d_distance)
{
    platform *p = load("torus3d", 64, 0, 0);
    /* 4 x 4 x 4: (0,0,0) -> (2,3,1) = 2 + 1 + 1. */
    ck_assert_int_eq(platform_hops(p, 0, 2 + 4 * 3 + 16 * 1), 4);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.diameter_hops, 6);
    assert_sim_matches_path(p, 0, 2 + 4 * 3 + 16 * 1);
    platform_free(p);
}
END_TEST

START_TEST(fattree_up_down)
{
    platform *p = load("fattree", 64, 10e9, 2e-6);
    /* 16 per leaf: same leaf is up-down through the leaf (2 links), else via a spine (4). */
    ck_assert_int_eq(platform_hops(p, 0, 15), 2);
    ck_assert_int_eq(platform_hops(p, 0, 16), 4);
    ck_assert_int_eq(platform_hops(p, 17, 63), 4);
    double lat, bw;
    platform_path(p, 3, 40, &lat, &bw);
    ck_assert_double_eq_tol(lat, 8e-6, 1e-15);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_double_eq(s.bisection_Bps, 32 * 10e9);
    ck_assert_int_eq(s.diameter_hops, 4);
    assert_sim_matches_path(p, 3, 40);
    assert_sim_matches_path(p, 3, 4);
    platform_free(p);
}
END_TEST

START_TEST(star_two_links)
{
    platform *p = load("star", 8, 5e9, 3e-6);
    ck_assert_int_eq(platform_hops(p, 1, 6), 2);
    ck_assert_int_eq(platform_ranks_per_node(p), 1);
    ck_assert_str_eq(platform_device(p, 0)->name, "generic-accelerator");
    assert_sim_matches_path(p, 1, 6);
    platform_free(p);
}
END_TEST

START_TEST(unknown_names)
{
    tt_error err = {0};
    ck_assert_ptr_null(platform_load("torus2", NULL, &err));
    ck_assert_int_eq(err.code, TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean \"torus2d\""));
    platform_options o = {.nodes = 4, .accelerator = "v900"};
    ck_assert_ptr_null(platform_load("star", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown accelerator \"v900\""));
}
END_TEST

START_TEST(network_words)
{
    const char *w[8];
    platform *p = load("star", 4, 10e9, 1e-6);
    int n = network_simgrid_args(p, NETWORK_IDEAL, w, 8);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(w[2], "--cfg=network/crosstraffic:0");
    n = network_simgrid_args(p, NETWORK_CALIBRATED, w, 8);
    ck_assert_int_eq(n, 5);
    ck_assert_str_eq(w[2], "--cfg=network/crosstraffic:1");
    ck_assert_str_eq(w[3], "--cfg=network/bandwidth-factor:1"); /* the payload rates are in ttasim's XML */
    platform_free(p);
}
END_TEST

START_TEST(dgx1_v100_six_nvlinks_per_gpu)
{
    platform *p = load("dgx1-v100", 0, 0, 0);
    for (int g = 0; g < 8; g++) {
        char name[16];
        snprintf(name, sizeof name, "gpu%d", g);
        ck_assert_int_eq(platform_component_links(p, name, "nvlink2"), 6);
    }
    ck_assert_int_eq(platform_component_links(p, "gpu9", NULL), -1);
    /* 0-3 is a doubled link: 50 GB/s; 0-5 needs a hop through another GPU. */
    double lat, bw;
    platform_path(p, 0, 3, &lat, &bw);
    ck_assert_double_eq(bw, 50e9);
    ck_assert_int_eq(platform_hops(p, 0, 5), 2);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.accelerators, 8);
    ck_assert_int_eq(s.cpu_sockets, 2);
    ck_assert_int_eq(s.nics, 4);
    platform_free(p);
    p = load("dgx1-p100", 0, 0, 0);
    ck_assert_int_eq(platform_component_links(p, "gpu5", "nvlink1"), 4);
    platform_free(p);
}
END_TEST

START_TEST(zion_sockets_and_mesh)
{
    platform *p = load("zion", 0, 0, 0);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.cpu_sockets, 8);
    ck_assert_int_eq(s.accelerators, 8);
    for (int a = 0; a < 8; a++) {
        char name[16];
        snprintf(name, sizeof name, "oam%d", a);
        ck_assert_int_eq(platform_component_links(p, name, "oam-serdes"), 6);
    }
    ck_assert_int_eq(platform_component_links(p, "cpu3", "upi"), 6);
    /* Socket 5 reaches OAM 2 over UPI to socket 1, then its PCIe switch (Gen3 uplink). */
    double lat, bw;
    ck_assert_int_eq(platform_component_path(p, "cpu5", "oam2", &lat, &bw), 3);
    ck_assert_double_eq(bw, 16e9);
    ck_assert_int_eq(platform_component_path(p, "cpu5", "oam9", &lat, &bw), -1);
    platform_free(p);
    platform_options o = {.accelerator = "v100-sxm2", .mesh = "fully_connected"};
    tt_error err = {0};
    p = platform_load("zion", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_component_links(p, "oam4", "oam-serdes"), 7);
    ck_assert_int_eq(platform_hops(p, 1, 6), 1);
    ck_assert_str_eq(platform_device(p, 2)->name, "v100-sxm2");
    platform_free(p);
    o.mesh = "fuly_connected";
    ck_assert_ptr_null(platform_load("zion", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "did you mean fully_connected?"));
}
END_TEST

START_TEST(rail_alignment)
{
    platform *p = load("dgx-a100", 4, 0, 0);
    ck_assert_int_eq(platform_ranks(p), 32);
    for (int r = 0; r < 32; r++) {
        char want[16];
        snprintf(want, sizeof want, "nic%d", r % 8);
        ck_assert_str_eq(platform_rank_exit(p, r), want);
    }
    /* gpu3 -> pcie switch -> nic3 -> leaf -> nic3 -> pcie switch -> gpu3. */
    ck_assert_int_eq(platform_hops(p, 3, 8 + 3), 6);
    double lat, bw;
    platform_path(p, 3, 8 + 3, &lat, &bw);
    ck_assert_double_eq(bw, 25e9); /* one HDR NIC */
    ck_assert_double_eq_tol(lat, 4 * 0.5e-6 + 2 * 0.5e-6, 1e-15);
    /* Inside the node: GPU -> NVSwitch crossbar -> GPU over all 12 NVLinks of
     * 25 GB/s (6 planes x 2), as NCCL's 12 channels use them; one plane would be 50e9. */
    platform_path(p, 0, 7, &lat, &bw);
    ck_assert_int_eq(platform_hops(p, 0, 7), 2);
    ck_assert_double_eq(bw, 300e9);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.switches, 4 * (6 + 4)); /* the 6 planes still count as 6 switches */
    platform_free(p);
    /* DGX H100: 18 NVLink4 per GPU; DGX-2: 6 per GPU on its board, 48 links between the boards. */
    p = load("dgx-h100", 1, 0, 0);
    platform_path(p, 0, 5, &lat, &bw);
    ck_assert_double_eq(bw, 18 * 25e9);
    platform_free(p);
    p = load("dgx2-v100", 1, 0, 0);
    platform_path(p, 0, 15, &lat, &bw);
    ck_assert_int_eq(platform_hops(p, 0, 15), 3);
    ck_assert_double_eq(bw, 6 * 25e9);
    platform_summarize(p, &s);
    ck_assert_int_eq(s.switches, 12 + 8);
    ck_assert_double_eq(s.bisection_Bps, 48 * 25e9 + 20.8e9 * 2);
    platform_free(p);
    /* --link-bw replaces the fabric's rate, NICs included. */
    p = load("dgx-a100", 4, 10e9, 0);
    platform_path(p, 3, 8 + 3, &lat, &bw);
    ck_assert_double_eq(bw, 10e9);
    platform_free(p);
}
END_TEST

/* GB200 NVL72: the rack is one NVLink domain: any two of its 72 GPUs meet
 * through the switch trays (18 NVLink 5 links of 50 GB/s), never a NIC; the
 * next rack is one NDR NIC away. platform.components leaves trays out. */
START_TEST(nvl72_one_nvlink_domain)
{
    platform *p = load("gb200-nvl72", 2, 0, 0);
    ck_assert_int_eq(platform_ranks(p), 144);
    ck_assert_int_eq(platform_ranks_per_node(p), 72);
    double lat, bw;
    const char *cls = NULL;
    platform_path(p, 0, 71, &lat, &bw);
    ck_assert_int_eq(platform_hops(p, 0, 71), 2);
    ck_assert_double_eq(bw, 18 * 50e9);
    ck_assert_int_eq(platform_rank_links(p, 0, 71, &cls), 18);
    ck_assert_str_eq(cls, "nvlink5");
    platform_path(p, 0, 72, &lat, &bw);
    ck_assert_double_eq(bw, 50e9);
    platform_free(p);
    p = load("dgx-b200", 1, 0, 0);
    platform_path(p, 0, 7, &lat, &bw);
    ck_assert_double_eq(bw, 18 * 50e9);
    platform_free(p);
    json_t *comps = json_pack("{s:i, s:i, s:i}", "gpu", 64, "cpu", 32, "nic", 64);
    platform_options o = {.nodes = 2, .components = comps, .overlay_file = "s.json"};
    tt_error err = {0};
    p = platform_load("gb200-nvl72", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_ranks_per_node(p), 64);
    ck_assert_str_eq(platform_rank_exit(p, 63), "nic63");
    platform_free(p);
    json_object_set_new(comps, "tray", json_integer(16));
    ck_assert_ptr_null(platform_load("gb200-nvl72", &o, &err));
    ck_assert_msg(strstr(err.msg, "s.json: $.platform.components.tray: the platform's node has no component group"),
                  "%s", err.msg);
    json_decref(comps);
}
END_TEST

/* Slices take their published shapes; --shape overrides; a pod refuses more chips than it has. */
START_TEST(tpu_slices)
{
    static const int V3[][3] = {{8, 4, 0}, {8, 8, 0}, {16, 8, 0}, {16, 16, 0}, {32, 16, 0}, {32, 32, 0}};
    for (int k = 0; k < 6; k++) {
        platform *p = load("tpu-v3-pod", V3[k][0] * V3[k][1] / 4, 0, 0);
        int dims[3];
        ck_assert_int_eq(platform_torus_dims(p, dims), 2);
        ck_assert_msg(dims[0] == V3[k][0] && dims[1] == V3[k][1], "%d chips: %d x %d", V3[k][0] * V3[k][1], dims[0],
                      dims[1]);
        platform_free(p);
    }
    /* TPU v4: sides of at most 4 or multiples of 4, the most cube-like: 864 chips = 24 x 12 x 3. */
    platform *p = load("tpu-v4-pod", 216, 0, 0);
    int dims[3];
    ck_assert_int_eq(platform_torus_dims(p, dims), 3);
    ck_assert_int_eq(dims[0] * 100 + dims[1] * 10 + dims[2], 24 * 100 + 12 * 10 + 3);
    platform_free(p);
    p = load("tpu-v4-pod", 128, 0, 0); /* 512 chips: 8 x 8 x 8 */
    platform_torus_dims(p, dims);
    ck_assert_int_eq(dims[0] + dims[1] + dims[2], 24);
    platform_free(p);
    tt_error err = {0};
    /* More chips than the pod: whole pods over the data-centre network where the file gives one (v3) */
    platform_options o = {.nodes = 1024};
    p = platform_load("tpu-v3-pod", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_pods(p), 4);
    ck_assert_int_eq(platform_torus_dims(p, dims), 2);
    ck_assert_int_eq(dims[0] * 100 + dims[1], 32 * 100 + 32);
    ck_assert_int_eq(platform_hops(p, 7, 1024 + 7), 1);      /* the next pod: one DCN hop */
    ck_assert_int_eq(platform_hops(p, 7, 2 * 1024 + 7), 2);  /* across the pods' ring */
    platform_free(p);
    o.nodes = 300;
    ck_assert_ptr_null(platform_load("tpu-v3-pod", &o, &err));
    ck_assert_int_eq(err.code, TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "1200 chips asked for, more than the pod's 1024"));
    ck_assert_ptr_nonnull(strstr(err.msg, "a multiple of --nodes 256"));
    o.nodes = 2048; /* tpu-v4-pod gives no data-centre network */
    ck_assert_ptr_null(platform_load("tpu-v4-pod", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "8192 chips asked for, but the pod has 4096"));
    ck_assert_ptr_nonnull(strstr(err.msg, "at most --nodes 1024"));
    o = (platform_options){.nodes = 9}; /* 36 chips: not 9 x 2 x 2 (9 is neither <= 4 nor a multiple of 4) but 4 x 3 x 3 */
    p = platform_load("tpu-v4-pod", &o, &err);
    ck_assert_ptr_nonnull(p);
    platform_torus_dims(p, dims);
    ck_assert_int_eq(dims[0] * 100 + dims[1] * 10 + dims[2], 4 * 100 + 3 * 10 + 3);
    platform_free(p);
    /* A shape of the user's: the 512-chip v3 slice as 16 x 32 instead of 32 x 16. */
    ck_assert_int_eq(platform_shape_parse("16x32", o.shape, &err), TT_OK);
    o.nodes = 128;
    p = platform_load("tpu-v3-pod", &o, &err);
    ck_assert_ptr_nonnull(p);
    platform_torus_dims(p, dims);
    ck_assert_int_eq(dims[0] * 100 + dims[1], 16 * 100 + 32);
    ck_assert_int_eq(platform_hops(p, 0, 16), 1); /* the next row: 16 ranks on */
    platform_free(p);
    o.nodes = 64;
    ck_assert_ptr_null(platform_load("tpu-v3-pod", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "the torus shape has 512 chips but the slice has 256"));
    ck_assert_int_eq(platform_shape_parse("16x", o.shape, &err), TT_EINPUT);
    ck_assert_int_eq(platform_shape_parse("2x2x2x2", o.shape, &err), TT_EINPUT);
    ck_assert_int_eq(platform_shape_parse("8x8x8", o.shape, &err), TT_OK);
    ck_assert_ptr_null(platform_load("tpu-v3-pod", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "3 sizes but the fabric is 2-dimensional"));
    ck_assert_ptr_null(platform_load("dgx-a100", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not a torus"));
    /* Fat-tree parameters are visible; a torus has none. */
    int per_leaf, levels, over;
    p = load("mn1-p100", 0, 0, 0);
    ck_assert_int_eq(platform_fattree_shape(p, &per_leaf, &levels, &over), 1);
    ck_assert_int_eq(per_leaf * 100 + levels * 10 + over, 16 * 100 + 2 * 10 + 4);
    platform_free(p);
    p = load("tpu-v3-pod", 0, 0, 0);
    ck_assert_int_eq(platform_fattree_shape(p, &per_leaf, &levels, &over), 0);
    platform_free(p);
    /* Generic tori have no pod: 4096 ranks are fine. */
    p = load("torus2d", 4096, 0, 0);
    platform_torus_dims(p, dims);
    ck_assert_int_eq(dims[0] * dims[1], 4096);
    platform_free(p);
}
END_TEST

START_TEST(tpu_v3_bisection)
{
    /* 32 x 32 torus: halving one ring dimension cuts 2 links in each of the
     * 32 rings; at 1e11 B/s per link per direction that is the published 6.4 TB/s.
     * With Jouppi's 656 Gb/s (82 GB/s) per link it would be 5.2 TB/s. */
    platform *p = load("tpu-v3-pod", 0, 0, 0);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_int_eq(s.accelerators, 1024);
    ck_assert_int_eq(platform_ranks_per_node(p), 4);
    ck_assert_double_eq_tol(s.bisection_Bps, 6.4e12, 1);
    ck_assert_double_eq_tol(s.peak_flops[DTYPE_BF16], 1024 * 123e12, 1e3);
    ck_assert_int_eq(s.diameter_hops, 32);
    platform_free(p);
    p = load("tpu-v3-pod", 8, 0, 0); /* a 32-chip slice: 8 x 4 */
    ck_assert_int_eq(platform_ranks(p), 32);
    ck_assert_int_eq(platform_hops(p, 0, 31), 2);
    platform_free(p);
    p = load("tpu-v4-pod", 0, 0, 0);
    platform_summarize(p, &s);
    ck_assert_double_eq_tol(s.bisection_Bps, 2 * 256 * 45e9, 1); /* published: 24 TB/s */
    platform_free(p);
}
END_TEST

/* ABCI's EDR fabric as wired (abci-v100.json, abci.rack): a group of 36
 * nodes' 72 ports is full bisection, 24 cables leave it (1/3). By hand: 864
 * nodes = 1,728 ports, 864 of them across the cut at 12.5e9 B/s, a third of
 * that above the groups = 3.6e12 B/s; ranks of nodes 0 and 35 meet in their
 * group (GPU-PCIe-NIC-leaf and back: 6 hops), node 36 is 2 hops further. */
START_TEST(abci_rack_taper)
{
    platform *p = load("abci-v100", 864, 0, 0);
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_double_eq_tol(s.bisection_Bps, 864 * 12.5e9 / 3, 1);
    int nodes_per_leaf = 0, levels = 0, over = 0;
    ck_assert_int_eq(platform_fattree_shape(p, &nodes_per_leaf, &levels, &over), 1);
    ck_assert_int_eq(nodes_per_leaf, 36);
    ck_assert_int_eq(over, 3);
    int in_group = platform_hops(p, 0, 4 * 35), across = platform_hops(p, 0, 4 * 36);
    ck_assert_int_eq(across, in_group + 2);
    platform_free(p);
}
END_TEST

/* Every built-in, at two nodes where it has a fabric: SimGrid's time for one
 * transfer equals platform_path's on the exported XML, inside a node and across. */
START_TEST(builtins_load_in_simgrid)
{
    tt_error err = {0};
    char **names = platform_list(&err);
    ck_assert_ptr_nonnull(names);
    int checked = 0;
    for (char **n = names; *n; n++) {
        platform_options o = {.nodes = 2};
        platform *p = platform_load(*n, &o, &err);
        if (!p) { /* one-node platforms refuse --nodes 2 */
            p = platform_load(*n, NULL, &err);
            ck_assert_msg(p != NULL, "%s: %s", *n, err.msg);
        }
        int last = platform_ranks(p) - 1;
        assert_sim_matches_path(p, 0, last);
        if (platform_ranks_per_node(p) > 1)
            assert_sim_matches_path(p, platform_ranks_per_node(p) - 1, 0);
        /* Every platform names its assumptions; every built-in file cites sources. */
        ck_assert_int_gt(platform_assumption_count(p), 0);
        if (!strstr(" star ring torus2d torus3d fattree ", platform_name(p)))
            ck_assert_msg(platform_source_count(p) > 0, "%s cites no source", *n);
        platform_free(p);
        checked++;
    }
    ck_assert_int_ge(checked, 20);
    platform_list_free(names);
}
END_TEST

START_TEST(calibrated_is_slower)
{
    platform *p = load("star", 4, 10e9, 1e-6);
    double ideal = simulate_one(p, NETWORK_IDEAL, 0, 1, 1e8);
    double cal = simulate_one(p, NETWORK_CALIBRATED, 0, 1, 1e8);
    ck_assert_double_eq_tol(ideal, 2e-6 + 1e-2, 1e-9);
    ck_assert_double_eq_tol(cal, 2e-6 + 1e-2 / 0.8, 1e-5);
    platform_free(p);
}
END_TEST

static const char *GOOD =
    "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"mini\",\n"
    " \"sources\": [\"test\"], \"assumptions\": [{\"name\": \"x\", \"value\": 1, \"why\": \"test\"}],\n"
    " \"node\": {\"components\": [{\"name\": \"gpu\", \"device\": \"v100-sxm2\", \"count\": 2},\n"
    "                          {\"name\": \"nic\", \"device\": \"ib-edr\"}],\n"
    "   \"links\": [{\"a\": \"gpu0\", \"b\": \"gpu1\", \"bandwidth_Bps\": \"25G\", \"latency_s\": \"1us\", \"class\": \"nvlink2\"},\n"
    "             {\"a\": \"gpu\", \"b\": \"nic0\", \"bandwidth_Bps\": \"16G\", \"latency_s\": \"1us\", \"class\": \"pcie3\"}]},\n"
    " \"fabric\": {\"topology\": \"single_switch\", \"nodes\": 3, \"attach\": \"nic\",\n"
    "   \"link\": {\"bandwidth_Bps\": \"12.5G\", \"latency_s\": \"2us\"}}}\n";

/* Loads GOOD with one substring replaced; returns the error message (or "" on success). */
static void load_variant(const char *from, const char *to, char *msg, size_t n)
{
    char text[4096], path[64];
    const char *at = strstr(GOOD, from);
    ck_assert_ptr_nonnull(at);
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - GOOD), GOOD, to, at + strlen(from));
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    unlink(path);
    snprintf(msg, n, "%s", p ? "" : err.msg);
    if (p)
        platform_free(p);
    else
        ck_assert_int_eq(err.code, TT_EINPUT);
}

START_TEST(user_file_loads)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_variant("\"mini\"", "\"mini\"", msg, sizeof msg);
    ck_assert_str_eq(msg, "");
    char path[64];
    tu_write_temp(GOOD, path, sizeof path);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    unlink(path);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(platform_ranks(p), 6);
    double lat, bw;
    platform_path(p, 0, 5, &lat, &bw); /* gpu -> nic -> switch -> nic -> gpu */
    ck_assert_double_eq(bw, 12.5e9);
    ck_assert_double_eq_tol(lat, 1e-6 + 4e-6 + 1e-6, 1e-15);
    assert_sim_matches_path(p, 0, 5);
    assert_sim_matches_path(p, 1, 0);
    platform_free(p);
}
END_TEST

START_TEST(malformed_files)
{
    char msg[TT_ERROR_MSG_BYTES];
    load_variant(", \"device\": \"ib-edr\"", "", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.node.components[1]"));
    ck_assert_ptr_nonnull(strstr(msg, "missing required key \"device\""));
    load_variant("\"device\": \"ib-edr\"", "\"devize\": \"ib-edr\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "did you mean \"device\""));
    load_variant("\"v100-sxm2\"", "\"v100-sxm9\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.node.components[0].device: unknown device \"v100-sxm9\""));
    ck_assert_ptr_nonnull(strstr(msg, "did you mean \"v100-sxm2\""));
    load_variant("\"b\": \"gpu1\"", "\"b\": \"gpu7\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.node.links[0].b: no component \"gpu7\""));
    ck_assert_ptr_nonnull(strstr(msg, "gpu0, gpu1, nic0"));
    load_variant("{\"name\": \"nic\", \"device\": \"ib-edr\"}", "{\"name\": \"nic\", \"device\": \"ib-edr\", \"crossbar\": true}",
                 msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.node.components[1].crossbar: \"ib-edr\" is not a switch"));
    load_variant("\"topology\": \"single_switch\"", "\"topology\": \"singel_switch\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.fabric.topology"));
    ck_assert_ptr_nonnull(strstr(msg, "did you mean \"single_switch\""));
    load_variant("\"attach\": \"nic\"", "\"attach\": \"hca\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "attach: no component named \"hca\""));
    load_variant("\"ttasim-platform\"", "\"ttasim-scenario\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.format"));
    load_variant("\"version\": 1,", "\"version\": 2,", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.version"));
    load_variant("\"version\": 1,", "\"version\": 1", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, ":1:"));
    load_variant("\"latency_s\": \"1us\", \"class\": \"nvlink2\"", "\"class\": \"nvlink2\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "$.node.links[0]"));
    ck_assert_ptr_nonnull(strstr(msg, "latency_s"));
    load_variant("{\"a\": \"gpu\", \"b\": \"nic0\"", "{\"a\": \"gpu\", \"b\": \"gpu0\"", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "to itself"));
    load_variant("{\"name\": \"nic\", \"device\": \"ib-edr\"}", "{\"name\": \"nic\", \"device\": \"ib-edr\"}, {\"name\": \"cpu\", \"device\": \"epyc-7742\"}", msg, sizeof msg);
    ck_assert_ptr_nonnull(strstr(msg, "no route from"));
}
END_TEST

START_TEST(cli_show_export)
{
    static char out[1 << 16];
    ck_assert_int_eq(tu_run_ttasim("platform list", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "dgx1-v100\n"));
    ck_assert_ptr_nonnull(strstr(out, "torus3d\n"));
    ck_assert_int_eq(tu_run_ttasim("platform list dgx1-v100", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "list takes no platform name"));
    ck_assert_int_eq(tu_run_ttasim("platform show tpu-v3-pod --json", out, sizeof out), 0);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "%s", je.text);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "accelerators")), 1024);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "cpu_sockets")), 0);
    ck_assert_int_eq(json_integer_value(json_object_get(doc, "nodes")), 256);
    ck_assert_double_eq_tol(json_real_value(json_object_get(doc, "bisection_Bps")), 6.4e12, 1);
    ck_assert_int_gt(json_array_size(json_object_get(doc, "assumptions")), 3);
    json_decref(doc);
    ck_assert_int_eq(tu_run_ttasim("platform show zion", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "zion.mesh = hybrid cube mesh"));
    ck_assert_int_eq(tu_run_ttasim("platform show dgx-a100 --nodes 0", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("platform shw dgx-a100", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "did you mean 'show'"));
    ck_assert_int_eq(tu_run_ttasim("platform export dgx-a100", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("platform export fattree --nodes 64 --xml -", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "topology=\"FAT_TREE\" topo_parameters=\"2;16,4;1,16;1,1\""));
    /* SimGrid loads the export: 2 DGX-1 = 2 x (8 GPUs + 2 CPUs) hosts (NICs are routers). */
    ck_assert_int_eq(tu_run_ttasim("platform check dgx1-v100 --nodes 2 --json", out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"simgrid_hosts\": 20,"));
}
END_TEST

/* A user's own SimGrid XML and rank -> host file (here: an exported star with
 * the ranks reversed). */
START_TEST(user_simgrid_xml)
{
    char dir[] = "/tmp/ttasim-userxml-XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char xml[128], hosts[128], json[128], out[256];
    snprintf(xml, sizeof xml, "%s/star.xml", dir);
    snprintf(hosts, sizeof hosts, "%s/ranks.txt", dir);
    snprintf(json, sizeof json, "%s/mine.json", dir);
    snprintf(out, sizeof out, "platform export star --nodes 4 --link-bw 5G --link-latency 2us --xml %s", xml);
    static char buf[4096];
    ck_assert_int_eq(tu_run_ttasim(out, buf, sizeof buf), 0);
    FILE *f = fopen(hosts, "w");
    fprintf(f, "# rank i is line i\nacc-3\nacc-2\n\nacc-1\nacc-0\n");
    fclose(f);
    f = fopen(json, "w");
    fprintf(f, "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"mine\", \"sources\": [], \"assumptions\": [],\n"
               " \"simgrid\": {\"xml\": \"star.xml\", \"rank_hosts\": \"ranks.txt\", \"accelerator\": \"a100-sxm4-40gb\",\n"
               "   \"ranks_per_node\": 2, \"path_estimate\": {\"bandwidth_Bps\": \"5G\", \"latency_s\": \"4us\", \"hops\": 2}}}\n");
    fclose(f);
    tt_error err = {0};
    platform *p = platform_load(json, NULL, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    ck_assert_int_eq(platform_ranks(p), 4);
    ck_assert_int_eq(platform_nodes(p), 2);
    char host[32];
    ck_assert_str_eq(platform_rank_host(p, 1, host, sizeof host), "acc-2");
    ck_assert_str_eq(platform_device(p, 3)->name, "a100-sxm4-40gb");
    assert_sim_matches_path(p, 0, 3);
    platform_free(p);
    f = fopen(hosts, "w");
    fprintf(f, "acc-3\nacc 2\n");
    fclose(f);
    ck_assert_ptr_null(platform_load(json, NULL, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "ranks.txt:2: expected one SimGrid host name per line"));
    unlink(xml);
    unlink(hosts);
    unlink(json);
    rmdir(dir);
}
END_TEST

/* Nodes beyond one leaf: the levels above the leaves (FLAT for two levels, a
 * fat tree beyond, a crossbar for a big single switch) route as platform_path says. */
START_TEST(upper_levels_route_as_path_says)
{
    platform *p = load("dgx-a100", 40, 0, 0); /* 20 nodes per leaf: 2 leaves */
    ck_assert_int_eq(platform_hops(p, 3, 8 * 19 + 3), 6);
    ck_assert_int_eq(platform_hops(p, 3, 8 * 25 + 3), 8);
    assert_sim_matches_path(p, 3, 8 * 25 + 3);
    assert_sim_matches_path(p, 8 * 39 + 7, 0);
    platform_free(p);
    p = load("mn1-p100", 0, 0, 0); /* 128 nodes, 16 per group, 4:1 above */
    platform_summary s;
    platform_summarize(p, &s);
    ck_assert_double_eq_tol(s.bisection_Bps, 64 * 14e9 / 4, 1);
    assert_sim_matches_path(p, 0, 1023);
    platform_free(p);
    char path[64];
    static const char *const VARIANTS[][2] = {
        {"\"topology\": \"single_switch\", \"nodes\": 3", "\"topology\": \"single_switch\", \"nodes\": 40"},
        {"\"topology\": \"single_switch\", \"nodes\": 3", "\"topology\": \"fattree\", \"nodes\": 8, \"nodes_per_leaf\": 2, \"levels\": 3"},
    };
    for (int v = 0; v < 2; v++) {
        char text[4096];
        const char *at = strstr(GOOD, VARIANTS[v][0]);
        snprintf(text, sizeof text, "%.*s%s%s", (int)(at - GOOD), GOOD, VARIANTS[v][1], at + strlen(VARIANTS[v][0]));
        tu_write_temp(text, path, sizeof path);
        tt_error err = {0};
        p = platform_load(path, NULL, &err);
        unlink(path);
        ck_assert_msg(p != NULL, "%s", err.msg);
        int last = platform_ranks(p) - 1;
        /* single switch: 2 fabric links; 3-level tree: 6 between the halves. */
        ck_assert_int_eq(platform_hops(p, 0, last), v == 0 ? 1 + 2 + 1 : 1 + 6 + 1);
        assert_sim_matches_path(p, 0, last);
        assert_sim_matches_path(p, 1, 4);
        platform_free(p);
    }
}
END_TEST

/* The load estimate counts what SimGrid loads (its host count, for each
 * kind of platform the writer makes), and a platform past --max-memory is
 * refused before anything is written, with the estimate and what fits. */
START_TEST(load_estimate_and_refusal)
{
    static const char *const cases[] = {"dgx-a100 --nodes 4", "dgx1-v100 --nodes 40", "zion", "star --nodes 8",
                                        "torus2d --nodes 16", "fattree --nodes 64", "dgx-h100 --nodes 1"};
    char out[16384], cmd[128];
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(cmd, sizeof cmd, "platform check %s --json", cases[i]);
        ck_assert_int_eq(tu_run_ttasim(cmd, out, sizeof out), 0);
        json_t *doc = json_loads(out, 0, NULL);
        ck_assert_ptr_nonnull(doc);
        ck_assert_msg(json_number_value(json_object_get(doc, "estimated_hosts")) ==
                          json_number_value(json_object_get(doc, "simgrid_hosts")),
                      "%s: %s", cases[i], out);
        ck_assert_double_gt(json_number_value(json_object_get(doc, "estimated_memory_bytes")), 0);
        json_decref(doc);
    }
    /* 64 DGX A100 nodes: 5.795 MB (644 hosts, 7,688 routes, edges and bypass routes...); 1 MB fits 11 nodes */
    ck_assert_int_eq(tu_run_ttasim("platform check dgx-a100 --nodes 64 --max-memory 1M", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "platform dgx-a100 with 64 nodes (512 accelerators) needs an estimated 5.795MB "
                                      "to load into SimGrid (644 hosts, 2600 links, 7688 routes, 7 zones;"));
    ck_assert_ptr_nonnull(strstr(out, "more than the 1MB this run's simulations may use (--max-memory); use at most 11 nodes"));
    ck_assert_int_eq(tu_run_ttasim("--max-memory=1K run " TTASIM_SRCDIR "/scenarios/quickstart.json", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "needs an estimated"));
    ck_assert_int_eq(tu_run_ttasim("collective --platform star --nodes 64 --bytes 1M --max-memory 100K", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "use at most 6 nodes"));
    ck_assert_int_eq(tu_run_ttasim("platform check dgx-a100 --nodes 4 --max-memory 1G", out, sizeof out), 0);
    ck_assert_int_eq(tu_run_ttasim("platform check star --max-memory 0", out, sizeof out), 2);
    ck_assert_ptr_nonnull(strstr(out, "--max-memory 0: expected a positive size"));
    ck_assert_int_eq(tu_run_ttasim("platform check star --max-memory", out, sizeof out), 2);
    /* 524,288 GPUs: 1.15e3 CPU s (zones x hosts: 3,280 group zones), refused past --max-time before anything is written */
    ck_assert_int_eq(tu_run_ttasim("platform check dgx-a100 --nodes 65536 --max-time 1000 --max-memory 64G", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "would take about 1.15e+03 CPU seconds to load into SimGrid (658637 hosts, 3280 zones)"),
                  "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "more than --max-time 1000; use fewer nodes"));
    ck_assert_int_eq(tu_run_ttasim("--max-time 0.01 platform check dgx-a100 --nodes 64", out, sizeof out), 2);
    ck_assert_int_eq(tu_run_ttasim("platform check dgx-a100 --nodes 64 --max-time=x", out, sizeof out), 2);
}
END_TEST

/* F16 (round 3): a FAT_TREE cluster's load grows with its members times its
 * switches; the estimate was linear, 11x low at 32,768 nodes of knl-cluster
 * (8.8 CPU s measured), so --max-time did not stop 65,536 (55 s measured). */
START_TEST(fat_tree_cluster_estimate)
{
    static const int nodes[] = {16384, 32768};
    double cpu_s[2];
    for (int i = 0; i < 2; i++) {
        tt_error err = {0};
        platform_options o = {.nodes = nodes[i]};
        platform *p = platform_load("knl-cluster", &o, &err);
        ck_assert_msg(p != NULL, "%s", err.msg);
        platform_load_cost c;
        platform_estimate(p, nodes[i], 0, &c);
        cpu_s[i] = c.cpu_s;
        platform_free(p);
    }
    ck_assert_double_gt(cpu_s[1], 6);
    ck_assert_double_gt(cpu_s[1] / cpu_s[0], 3); /* twice the nodes: nearly four times the load */
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("platforms");
    TCase *t = tcase_create("generic");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, ring_wraps_around);
    tcase_add_test(t, torus2d_shape_and_distance);
    tcase_add_test(t, torus3d_distance);
    tcase_add_test(t, fattree_up_down);
    tcase_add_test(t, star_two_links);
    tcase_add_test(t, unknown_names);
    tcase_add_test(t, network_words);
    tcase_add_test(t, calibrated_is_slower);
    suite_add_tcase(s, t);
    t = tcase_create("builtins");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, dgx1_v100_six_nvlinks_per_gpu);
    tcase_add_test(t, zion_sockets_and_mesh);
    tcase_add_test(t, rail_alignment);
    tcase_add_test(t, nvl72_one_nvlink_domain);
    tcase_add_test(t, tpu_v3_bisection);
    tcase_add_test(t, abci_rack_taper);
    tcase_add_test(t, tpu_slices);
    tcase_add_test(t, builtins_load_in_simgrid);
    tcase_add_test(t, fat_tree_cluster_estimate);
    suite_add_tcase(s, t);
    t = tcase_create("files");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, user_file_loads);
    tcase_add_test(t, malformed_files);
    tcase_add_test(t, cli_show_export);
    tcase_add_test(t, user_simgrid_xml);
    tcase_add_test(t, upper_levels_route_as_path_says);
    tcase_add_test(t, load_estimate_and_refusal);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
