/* sim/engine/: a user's SimGrid platform that SimGrid cannot use (a rank on a
 * host the XML lacks, a malformed file, a missing route) is an input error
 * naming the user's file, never a crash of the simulation process. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
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
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
