/* platforms/: routes and hop counts of the fabrics, the built-in platforms'
 * structure against their published descriptions, malformed files, and
 * SimGrid agreeing with platform_path on the exported XML. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives/schedule.h"
#include "platforms/platform.h"
#include "sim/collective_sim.h"
#include "tests/testutil.h"

static platform *load(const char *name, int nodes, double bw, double lat)
{
    platform_options o = {nodes, bw, lat, NULL, NULL};
    tt_error err = {0};
    platform *p = platform_load(name, &o, &err);
    ck_assert_msg(p != NULL, "%s: %s", name, err.msg);
    return p;
}

/* One transfer a -> b simulated on the platform's XML. */
static double simulate_one(const platform *p, network_model net, int a, int b, double bytes)
{
    double t = 0;
    tt_error err = {0};
    ck_assert_msg(sim_point_to_point(p, net, a, b, bytes, &t, &err) == TT_OK, "%s", err.msg);
    return t;
}

static void assert_sim_matches_path(const platform *p, int a, int b)
{
    double lat, bw, bytes = 1e6;
    platform_path(p, a, b, &lat, &bw);
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
    platform_options o = {4, 0, 0, "v900", NULL};
    ck_assert_ptr_null(platform_load("star", &o, &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown accelerator \"v900\""));
}
END_TEST

START_TEST(network_words)
{
    const char *w[8];
    int n = network_simgrid_args(NETWORK_IDEAL, w, 8);
    ck_assert_int_eq(n, 3);
    ck_assert_str_eq(w[2], "--cfg=network/crosstraffic:0");
    n = network_simgrid_args(NETWORK_CALIBRATED, w, 8);
    ck_assert_int_eq(n, 5);
    ck_assert_str_eq(w[2], "--cfg=network/crosstraffic:1");
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
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
