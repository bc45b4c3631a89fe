/* Host staging of hier allreduce (coll_params.staging, collectives/README.md):
 * the schedule still sums correctly, the simulated time is the hand-worked
 * timeline of copies, CPU sums and network steps, and bad requests are
 * refused with what to do. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collectives/functional.h"
#include "collectives/schedule.h"
#include "config.h"
#include "platforms/platform.h"
#include "sim/engine/collective_sim.h"
#include "tests/testutil.h"

#define TRACE TTASIM_SRCDIR "/tests/data/tiny-trace.json"

/* Staged and unstaged, ring and rhd across nodes, one or several leaders a
 * node: every element of every rank ends as the sum over ranks. */
START_TEST(staged_schedules_sum)
{
    static const struct {
        int ranks, per_node, nics;
    } SHAPES[] = {{16, 8, 1}, {16, 4, 2}, {32, 4, 4}, {8, 1, 1}, {12, 4, 1}};
    for (size_t k = 0; k < sizeof SHAPES / sizeof SHAPES[0]; k++)
        for (int inter = 0; inter < 2; inter++)
            for (int staging = 0; staging < 2; staging++) {
                int nodes = SHAPES[k].ranks / SHAPES[k].per_node;
                if (inter && (nodes & (nodes - 1)))
                    continue;
                coll_params prm = {.op = OP_ALLREDUCE, .algo = ALGO_HIER, .ranks = SHAPES[k].ranks,
                                   .ranks_per_node = SHAPES[k].per_node, .nics_per_node = SHAPES[k].nics,
                                   .inter = inter ? ALGO_RHD : ALGO_RING, .staging = (coll_staging)staging};
                for (size_t count = 5; count <= 1000; count *= 200) {
                    schedule s;
                    tt_error err = {0};
                    char why[256];
                    prm.bytes = (double)count;
                    ck_assert_msg(schedule_build(&prm, count, 1.0, &s, &err) == TT_OK, "%s", err.msg);
                    ck_assert_msg(schedule_verify(&s, why, sizeof why) == 0, "%d ranks, %d a node, %d NICs, %s, %s: %s",
                                  prm.ranks, prm.ranks_per_node, prm.nics_per_node, coll_algo_name(prm.inter),
                                  coll_staging_name(prm.staging), why);
                    int staged = 0, on_host = 0;
                    for (int i = 0; i < s.nstages; i++) {
                        staged += s.stages[i].staging != 0;
                        on_host += s.stages[i].on_host;
                    }
                    /* one copy down and one up around the two inter-node stages, only when staged */
                    ck_assert_int_eq(staged, staging && nodes > 1 ? 2 : 0);
                    ck_assert_int_eq(on_host, staging && nodes > 1 ? 2 : 0);
                    schedule_free(&s);
                }
            }
}
END_TEST

static double staged_time_s(const platform *p, coll_algo inter, double bytes, coll_staging staging, int messages)
{
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_HIER, .bytes = bytes, .inter = inter, .staging = staging};
    coll_request rq = coll_request_build(p, &asked);
    rq.messages = messages;
    coll_result res;
    tt_error err = {0};
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &res, &err) == TT_OK, "%s", err.msg);
    return res.time_s;
}

/* Two Big Basin servers (big-basin-p100.json, ideal network: no payload
 * efficiency, no cross-traffic), hier allreduce of S = 16e6 bytes, one NIC a
 * server (GPU 0 leads), rhd across the servers. A P100 reduces at
 * 720e9 x 0.75 = 540e9 B/s (3 bytes a byte reduced); one Xeon thread at
 * 19.9e9 B/s (xeon-e5-generic thread_mem_Bps).
 *   binomial reduce, 3 steps over NVLink (20e9 B/s, 0.5 us):
 *     3 x (16e6/20e9 + 0.5 us + 3 x 16e6/540e9)      = 3 x 889.389 = 2668.167 us
 *   device staging:
 *     halving: GPU 0 <-> GPU 8, S/2 = 8e6 at 6.25e9 B/s
 *       + 6 us (PCIe 0.5 + 0.5, Ethernet 2 + 2, PCIe 0.5 + 0.5) + 3 x 8e6/540e9
 *                                                    = 1280 + 6 + 44.444 = 1330.444 us
 *     doubling: 1280 + 6                             = 1286 us
 *   binomial broadcast: 3 x (800 + 0.5)              = 2401.5 us
 *   total                                            = 7686.111 us
 *   host staging adds the copy down, GPU 0 -> cpu0 over two PCIe links
 *   (16e9 B/s, 0.5 us each): 16e6/16e9 + 1 us = 1001 us, the copy up (1001 us),
 *   sums the halving's 8e6 bytes on one CPU thread, 3 x 8e6/19.9e9 =
 *   1206.030 us instead of 44.444 us, and the kernel TCP stack's 16.6 us
 *   (xeon-e5-generic tcp_message_s) at each of the two network steps; cpu0
 *   reaches the NIC through the same PCIe switch, so the wire is unchanged,
 *   but the socket's one TCP receive thread reads each step's 8e6 bytes at
 *   3.125e9 B/s (xeon-e5-generic tcp_rx_Bps), 2560 us from the step's start,
 *   while the wire takes 1280 + 6 us: each network step ends 1274 us later:
 *     7686.111 + 2 x 1001 + 1206.030 - 44.444 + 2 x 16.6 + 2 x 1274
 *                                                    = 13430.897 us */
START_TEST(staged_timeline_two_servers)
{
    platform_options opt = {.nodes = 2};
    tt_error err = {0};
    platform *p = platform_load("big-basin-p100", &opt, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    const double S = 16e6, gpu_sum = 3 / (720e9 * 0.75), cpu_sum = 3 / 19.9e9, us = 1e-6, tcp_s = 16.6 * us;
    const double read_s = S / 2 / 3.125e9 - (S / 2 / 6.25e9 + 6 * us); /* the receive thread past the wire */
    double tree_s = 3 * (S / 20e9 + 0.5 * us + S * gpu_sum) + 3 * (S / 20e9 + 0.5 * us);
    double device_s = tree_s + (S / 2 / 6.25e9 + 6 * us + S / 2 * gpu_sum) + (S / 2 / 6.25e9 + 6 * us);
    double copy_s = S / 16e9 + 1 * us;
    double host_s = device_s + 2 * copy_s + S / 2 * (cpu_sum - gpu_sum) + 2 * tcp_s + 2 * read_s;
    double dev = staged_time_s(p, ALGO_RHD, S, STAGING_DEVICE, 0);
    double host = staged_time_s(p, ALGO_RHD, S, STAGING_HOST, 0);
    ck_assert_msg(fabs(dev / device_s - 1) < 1e-6, "device staging: %.3f us, by hand %.3f us", dev / us,
                  device_s / us);
    ck_assert_msg(fabs(host / host_s - 1) < 1e-6, "host staging: %.3f us, by hand %.3f us", host / us, host_s / us);
    /* slower by the copies, the CPU sums, the TCP stacks and the receive thread, 5744.786 us */
    ck_assert_msg(fabs((host - dev) - (2 * copy_s + S / 2 * (cpu_sum - gpu_sum) + 2 * tcp_s + 2 * read_s)) < 1e-9,
                  "host - device: %.3f us", (host - dev) / us);
    /* the message-level executor moves the workers the same way */
    double msg = staged_time_s(p, ALGO_RHD, S, STAGING_HOST, 1);
    ck_assert_msg(fabs(msg / host_s - 1) < 1e-6, "messages: %.3f us, by hand %.3f us", msg / us, host_s / us);
    platform_free(p);
}
END_TEST

/* Four Big Basin servers, ideal network, a small buffer (S = 4000 bytes):
 * staged, each network step pays the kernel TCP stack's 16.6 us once, 2(p-1)
 * = 6 steps for the ring and 2 log2 p = 4 for halving/doubling (Goyal et al.
 * 2017 section 4.1), on top of the copies, 2 x (S/16e9 + 1 us), and the
 * halving's CPU sums of S/2 + S/4 (the ring's 3 x S/4) bytes. */
START_TEST(staged_steps_pay_tcp)
{
    platform_options opt = {.nodes = 4};
    tt_error err = {0};
    platform *p = platform_load("big-basin-p100", &opt, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    const double S = 4000, us = 1e-6, tcp_s = 16.6 * us;
    const double fixed_s = 2 * (S / 16e9 + 1 * us) + 0.75 * S * (3 / 19.9e9 - 3 / (720e9 * 0.75));
    static const struct {
        coll_algo inter;
        int steps;
    } CASES[] = {{ALGO_RING, 6}, {ALGO_RHD, 4}};
    for (size_t k = 0; k < 2; k++) {
        double dev = staged_time_s(p, CASES[k].inter, S, STAGING_DEVICE, 0);
        double host = staged_time_s(p, CASES[k].inter, S, STAGING_HOST, 0);
        double want = CASES[k].steps * tcp_s + fixed_s;
        ck_assert_msg(fabs((host - dev) / want - 1) < 1e-6, "%s: host - device %.4f us, by hand %.4f us",
                      coll_algo_name(CASES[k].inter), (host - dev) / us, want / us);
    }
    platform_free(p);
}
END_TEST

/* Hier rhd allreduce of S bytes on two Big Basin servers (ideal network)
 * with `leaders` a server and the socket's receive thread at rx_Bps. */
static double leaders_time_s(int leaders, double rx_Bps, double S)
{
    char text[128];
    snprintf(text, sizeof text, "{\"xeon-e5-generic\": {\"tcp_rx_Bps\": %g}}", rx_Bps);
    json_t *devices = json_loads(text, 0, NULL);
    platform_options opt = {.nodes = 2, .devices = devices};
    tt_error err = {0};
    platform *p = platform_load("big-basin-p100", &opt, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    coll_params asked = {.op = OP_ALLREDUCE, .algo = ALGO_HIER, .bytes = S, .inter = ALGO_RHD,
                         .staging = STAGING_HOST, .nics_per_node = leaders};
    coll_request rq = coll_request_build(p, &asked);
    coll_result res;
    ck_assert_msg(coll_simulate(p, NETWORK_IDEAL, &rq, 1, &res, &err) == TT_OK, "%s", err.msg);
    platform_free(p);
    json_decref(devices);
    return res.time_s;
}

/* The receive thread is the server's (Gloo's one device per process), not
 * the leader's or the socket's. Two servers, S = 16e6 bytes, receive
 * threads slow enough to bind (1e9 and 0.5e9 B/s, against 6.25e9 on the
 * wire): one leader a server reads S/2 at the halving step and S/2 at the
 * doubling step; two leaders (GPU 0 and GPU 4, staged through the server's
 * two sockets) read S/4 each at each step through the same thread, so the
 * later one waits for the other: either way the step chain reads 16e6
 * bytes through one thread, and halving its rate adds
 * 16e6 x (2e-9 - 1e-9) = 16000 us (8000 us if each had its own thread). */
START_TEST(receive_thread_shared)
{
    const double S = 16e6, want_s = S * (1 / 0.5e9 - 1 / 1e9);
    for (int leaders = 1; leaders <= 2; leaders++) {
        double slower = leaders_time_s(leaders, 0.5e9, S) - leaders_time_s(leaders, 1e9, S);
        ck_assert_msg(fabs(slower / want_s - 1) < 1e-6, "%d leader(s) a server: %.3f us slower, by hand %.3f us",
                      leaders, slower * 1e6, want_s * 1e6);
    }
}
END_TEST

/* `ttasim ARGS` exits with rc and its message names `want`. */
static void refused(const char *args, int rc, const char *want)
{
    char out[4096];
    int got = tu_run_ttasim(args, out, sizeof out);
    ck_assert_msg(got == rc, "ttasim %s: exit %d, expected %d: %s", args, got, rc, out);
    ck_assert_msg(strstr(out, want) != NULL, "ttasim %s: no '%s' in: %s", args, want, out);
}

START_TEST(collective_refuses)
{
    /* a flat star has no CPU sockets to stage through */
    refused("collective --platform star --nodes 4 --algo hier --staging host --bytes 1M", 2, "needs CPU sockets");
    /* a socket whose device does not say what one thread streams */
    refused("collective --platform dgx1-v100 --nodes 2 --algo hier --staging host --bytes 1M", 2,
            "no thread_mem_Bps");
    refused("collective --platform big-basin-p100 --nodes 2 --algo ring --staging host --bytes 1M", 2,
            "hier allreduce");
    refused("collective --platform big-basin-p100 --nodes 3 --algo hier --inter rhd --bytes 1M", 2,
            "power-of-two node count");
    refused("collective --platform big-basin-p100 --nodes 2 --algo hier --staging hots --bytes 1M", 2,
            "did you mean 'host'");
}
END_TEST

/* A scenario with this collectives block and `extra` top-level keys, on
 * platform:nodes, is refused naming `want`. */
static void scenario_refused(const char *plat, int nodes, const char *collectives, const char *extra,
                             const char *want)
{
    char text[1024], path[64], args[128];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"staging\", \"platform\": {\"name\": \"%s\", \"nodes\": %d},\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"micro_batch\": 8},%s\n"
             " \"collectives\": %s, \"convergence\": {\"steps\": 1}}\n",
             plat, nodes, extra, collectives);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    refused(args, 2, want);
    unlink(path);
}

START_TEST(scenario_refuses)
{
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"hier\", \"staging\": \"hots\"}", "",
                     "$.collectives.staging");
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"hier\", \"inter_node\": \"tree\"}", "",
                     "$.collectives.inter_node");
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"ring\", \"staging\": \"host\"}", "",
                     "$.collectives.staging: \"host\" is an option of the hier allreduce");
    scenario_refused("star", 4, "{\"allreduce\": \"hier\", \"staging\": \"host\"}", "",
                     "$.collectives.staging: host staging needs CPU sockets");
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"hier\", \"concurrent_ops\": 0}", "",
                     "$.collectives.concurrent_ops");
    /* a socket device that does not say what the kernel TCP stack costs a message */
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"hier\", \"staging\": \"host\"}",
                     " \"devices\": {\"xeon-e5-generic\": {\"tcp_message_s\": 0}},", "no tcp_message_s");
    /* nor what its TCP transport's one receive thread reads */
    scenario_refused("big-basin-p100", 2, "{\"allreduce\": \"hier\", \"staging\": \"host\"}",
                     " \"devices\": {\"xeon-e5-generic\": {\"tcp_rx_Bps\": 0}},", "no tcp_rx_Bps");
}
END_TEST

/* The scenario key reaches the simulation: a staged run's allreduces take
 * what `ttasim collective --staging host` gives for the trace's buckets. */
START_TEST(scenario_runs_staged)
{
    char text[1024], path[64];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"staging\", \"platform\": {\"name\": \"big-basin-p100\", \"nodes\": 2},\n"
             " \"network\": \"calibrated\",\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"micro_batch\": 8},\n"
             " \"collectives\": {\"allreduce\": \"hier\", \"inter_node\": \"rhd\", \"staging\": \"host\"},\n"
             " \"convergence\": {\"steps\": 1}}\n");
    tu_write_temp(text, path, sizeof path);
    char args[256], out[1 << 16];
    snprintf(args, sizeof args, "run --json %s", path);
    json_t *run = tu_run_ttasim_json(args, 0, out, sizeof out);
    unlink(path);
    json_t *coll = tu_run_ttasim_json("collective --json --platform big-basin-p100 --nodes 2 --algo hier --inter rhd "
                                      "--staging host --bytes 10M,40M",
                                      0, out, sizeof out);
    json_t *res = json_object_get(coll, "results");
    double sum_s = json_real_value(json_object_get(json_array_get(res, 0), "time_s")) +
                   json_real_value(json_object_get(json_array_get(res, 1), "time_s"));
    double comm_s = json_real_value(json_object_get(json_object_get(run, "step"), "comm_s"));
    ck_assert_msg(fabs(comm_s / sum_s - 1) < 1e-9, "run %.9g s, collective %.9g s", comm_s, sum_s);
    ck_assert_str_eq(json_string_value(json_object_get(json_object_get(run, "collectives"), "allreduce")),
                     "hier (rhd, host-staged)");
    json_decref(run);
    json_decref(coll);
}
END_TEST

/* The staged run's step with its collectives one at a time and two at once:
 * the same collectives (comm_s), and the second overlaps the first's
 * latencies, so less of them is exposed and the step is shorter by exactly
 * that much. */
START_TEST(scenario_concurrent_ops)
{
    double comm_s[2], exposed_s[2], time_s[2];
    for (int k = 0; k < 2; k++) {
        char text[1024], path[64], args[256], out[1 << 16];
        snprintf(text, sizeof text,
                 "{\"version\": 1, \"name\": \"staging\", \"platform\": {\"name\": \"big-basin-p100\", \"nodes\": 2},\n"
                 " \"workload\": {\"trace\": \"" TRACE "\", \"micro_batch\": 8},\n"
                 " \"collectives\": {\"allreduce\": \"hier\", \"inter_node\": \"rhd\", \"staging\": \"host\",\n"
                 "                 \"concurrent_ops\": %d},\n"
                 " \"convergence\": {\"steps\": 1}}\n",
                 k + 1);
        tu_write_temp(text, path, sizeof path);
        snprintf(args, sizeof args, "run --json %s", path);
        json_t *run = tu_run_ttasim_json(args, 0, out, sizeof out);
        unlink(path);
        json_t *step = json_object_get(run, "step");
        comm_s[k] = json_real_value(json_object_get(step, "comm_s"));
        exposed_s[k] = json_real_value(json_object_get(step, "exposed_comm_s"));
        time_s[k] = json_real_value(json_object_get(step, "time_s"));
        json_decref(run);
    }
    ck_assert_msg(fabs(comm_s[1] / comm_s[0] - 1) < 1e-12, "comm %.9g s vs %.9g s", comm_s[1], comm_s[0]);
    ck_assert_msg(exposed_s[1] < exposed_s[0] - 1e-6, "exposed %.9g s with 2 at once, %.9g s one at a time",
                  exposed_s[1], exposed_s[0]);
    ck_assert_msg(fabs((time_s[0] - time_s[1]) - (exposed_s[0] - exposed_s[1])) < 1e-12, "step %.9g -> %.9g s",
                  time_s[0], time_s[1]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("staging");
    TCase *t = tcase_create("staging");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, staged_schedules_sum);
    tcase_add_test(t, staged_timeline_two_servers);
    tcase_add_test(t, staged_steps_pay_tcp);
    tcase_add_test(t, receive_thread_shared);
    tcase_add_test(t, collective_refuses);
    tcase_add_test(t, scenario_refuses);
    tcase_add_test(t, scenario_runs_staged);
    tcase_add_test(t, scenario_concurrent_ops);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
