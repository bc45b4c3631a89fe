/* sim/engine/: a user's SimGrid platform that SimGrid cannot use (a rank on a
 * host the XML lacks, a malformed file, a missing route) is an input error
 * naming the user's file, never a crash of the simulation process; the
 * max-min solver's shares worked by hand. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
#include "sim/engine/maxmin.h"
#include "tests/testutil.h"

/* Three hosts; routes h0 <-> h1 only (symmetrical). */
static const char *XML_OK =
    "<?xml version='1.0'?>\n"
    "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
    "<platform version=\"4.1\">\n"
    " <zone id=\"z\" routing=\"Full\">\n"
    "  <host id=\"h0\" speed=\"1e13f\"/><host id=\"h1\" speed=\"1e13f\"/><host id=\"h2\" speed=\"1e13f\"/>\n"
    "  <link id=\"l\" bandwidth=\"10GBps\" latency=\"1us\"/>\n"
    "  <route src=\"h0\" dst=\"h1\"><link_ctn id=\"l\"/></route>\n"
    " </zone>\n"
    "</platform>\n";

/* A 1 MB ring allreduce on the user's platform: its status, err filled. */
static int simulate(const tu_user_platform *u, double *time_s, tt_error *err)
{
    platform *p = platform_load(u->json, NULL, err);
    ck_assert_msg(p != NULL, "%s", err->msg);
    coll_request rq = {.params = {.op = OP_ALLREDUCE, .algo = ALGO_RING, .ranks = platform_ranks(p), .bytes = 1e6}};
    coll_result r = {0};
    int rc = coll_simulate(p, NETWORK_IDEAL, &rq, 1, &r, err);
    *time_s = r.time_s;
    platform_free(p);
    return rc;
}

START_TEST(user_xml_that_works)
{
    tu_user_platform u;
    tu_user_platform_write(&u, XML_OK, "h0\nh1\n", "v100-sxm2");
    tt_error err = {0};
    double t = 0;
    ck_assert_msg(simulate(&u, &t, &err) == TT_OK, "%s", err.msg);
    /* 2 ranks: 2 steps of 0.5 MB each way on one shared link (5 GB/s a way), 1 us */
    ck_assert_double_eq_tol(t, 2 * (1e-6 + 0.5e6 / 5e9), 1e-9);
    tu_user_platform_remove(&u);
}
END_TEST

START_TEST(rank_on_unknown_host)
{
    tu_user_platform u;
    tu_user_platform_write(&u, XML_OK, "h0\nnope\n", "v100-sxm2");
    tt_error err = {0};
    double t;
    ck_assert_int_eq(simulate(&u, &t, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, u.xml) && strstr(err.msg, "rank 1's host \"nope\""), "%s", err.msg);
    tu_user_platform_remove(&u);
}
END_TEST

/* A file that is not well-formed is refused as it is read, naming the line
 * (user_xml.c); one SimGrid cannot load (a speed it cannot parse) is an
 * input error naming the user's file, not ttasim's copy of it. */
START_TEST(malformed_xml)
{
    const char *cut = strstr(XML_OK, " </zone>");
    char bad[1024];
    snprintf(bad, sizeof bad, "%.*s</platform>\n", (int)(cut - XML_OK), XML_OK);
    tu_user_platform u;
    tu_user_platform_write(&u, bad, "h0\nh1\n", "v100-sxm2");
    tt_error err = {0};
    ck_assert_ptr_null(platform_load(u.json, NULL, &err));
    ck_assert_msg(strstr(err.msg, u.xml) && strstr(err.msg, ":8:12: </platform> closes zone"), "%s", err.msg);
    tu_user_platform_remove(&u);
    const char *speed = strstr(XML_OK, "1e13f");
    snprintf(bad, sizeof bad, "%.*sfast%s", (int)(speed - XML_OK), XML_OK, speed + 5);
    tu_user_platform_write(&u, bad, "h0\nh1\n", "v100-sxm2");
    double t;
    ck_assert_int_eq(simulate(&u, &t, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, u.xml) && strstr(err.msg, "cannot load") && !strstr(err.msg, "/proc/self"),
                  "%s", err.msg);
    tu_user_platform_remove(&u);
}
END_TEST

/* Full routing returns no link for a missing route; Floyd aborts SimGrid. */
START_TEST(missing_route)
{
    const char *at = strstr(XML_OK, "Full");
    char xml[1024];
    snprintf(xml, sizeof xml, "%.*s%s%s", (int)(at - XML_OK), XML_OK, _i ? "Floyd" : "Full", at + 4);
    tu_user_platform u;
    tu_user_platform_write(&u, xml, "h0\nh1\nh2\n", "v100-sxm2");
    tt_error err = {0};
    double t;
    ck_assert_int_eq(simulate(&u, &t, &err), TT_EINPUT);
    ck_assert_msg(strstr(err.msg, u.xml) && strstr(err.msg, _i ? "failed to route" : "has no route") &&
                  strstr(err.msg, "host \"h0\" (rank 0) to host \"h2\" (rank 2)"), "%s", err.msg);
    tu_user_platform_remove(&u);
}
END_TEST

/* The command line's contract: exit 2, the user's file named on stderr. */
START_TEST(cli_exit_status)
{
    tu_user_platform u;
    tu_user_platform_write(&u, XML_OK, "h0\nnope\n", "v100-sxm2");
    char args[256], out[4096];
    snprintf(args, sizeof args, "collective --platform %s --op allreduce --algo ring --bytes 1M", u.json);
    ck_assert_int_eq(tu_run_ttasim(args, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "ttasim: ") && strstr(out, u.xml), "%s", out);
    tu_user_platform_remove(&u);
}
END_TEST

/* Flows A (12 B, latency weight 1) and B (30 B, weight 2) share a 9 B/s
 * link: shares go inversely to the weight, 6 and 3 B/s, so A ends at 2 s;
 * B then has 24 B alone at 9 B/s: 2 + 24/9 s. C starts at 1 s on its own
 * link, bounded to 2 B/s: 4 B end at 3 s. */
START_TEST(maxmin_by_hand)
{
    enum { NF = 3, NC = 2 };
    size_t flow[NF] = {0, 1, 2};
    int use_off[NF + 1] = {0, 1, 2, 3}, use_c[NF] = {0, 0, 1};
    double use_w[NF] = {1, 1, 1}, cap[NC] = {9, 100}, penalty[NF] = {1, 2, 1};
    double bytes[NF] = {12, 30, 4}, start_s[NF] = {0, 0, 1}, bound_Bps[NF] = {1e30, 1e30, 2}, done_s[NF] = {0};
    maxmin_comp c = {NF, NC, flow, use_off, use_c, use_w, cap, penalty};
    double rem[NF], rate[NF], left[NC], wsum[NC];
    unsigned char state[NF];
    int pending[NF], sending[NF], unfixed[NF], fixed[NF], queue[NF], seen[NF];
    int users[NC], cons[NC], con_off[NC + 1], con_seen[NC + 1], con_f[NF];
    maxmin_work w = {rem, rate, state, pending, sending, unfixed, fixed, queue, seen,
                     left, wsum, users, cons, con_off, con_seen, con_f};
    maxmin_solve(&c, bytes, start_s, bound_Bps, done_s, &w);
    ck_assert_double_eq_tol(done_s[0], 2.0, 1e-9);
    ck_assert_double_eq_tol(done_s[1], 2.0 + 24.0 / 9.0, 1e-9);
    ck_assert_double_eq_tol(done_s[2], 3.0, 1e-9);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("engine");
    TCase *t = tcase_create("user_xml");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, user_xml_that_works);
    tcase_add_test(t, rank_on_unknown_host);
    tcase_add_test(t, malformed_xml);
    tcase_add_loop_test(t, missing_route, 0, 2);
    tcase_add_test(t, cli_exit_status);
    suite_add_tcase(s, t);
    TCase *m = tcase_create("maxmin");
    tcase_add_test(m, maxmin_by_hand);
    suite_add_tcase(s, m);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
