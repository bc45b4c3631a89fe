/* Embedding rows between CPU sockets and accelerators on SimGrid (ideal
 * network: a lone flow takes latency + bytes / bandwidth), against hand
 * computations on small node platforms. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/engine/host_embedding.h"
#include "tests/testutil.h"

/* A CPU whose DRAM serves 1e11 x 0.5 = 5e10 B/s. */
#define TEST_CPU                                                                                         \
    "\"sources\": [\"test\"], \"assumptions\": [],\n"                                                      \
    " \"devices\": {\"test-cpu\": {\"kind\": \"cpu\", \"cores\": 8, \"peak_flops\": {\"fp32\": 1e12},"    \
    " \"mem_Bps\": 1e11, \"mem_efficiency\": 0.5, \"tdp_w\": 100}},\n"

/* One socket, one GPU, one PCIe link of 16 GB/s and 1 us. */
static const char *DIRECT =
    "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"direct\", " TEST_CPU
    " \"node\": {\"components\": [{\"name\": \"cpu\", \"device\": \"test-cpu\"},\n"
    "                           {\"name\": \"gpu\", \"device\": \"v100-sxm2\"}],\n"
    "   \"links\": [{\"a\": \"cpu0\", \"b\": \"gpu0\", \"bandwidth_Bps\": 16e9, \"latency_s\": \"1us\", \"class\": \"pcie3\"}]}}\n";

/* %d GPUs on x16 Gen4 links (32 GB/s) behind one PCIe switch whose uplink to
 * socket 0 is Gen3 (16 GB/s); %s: more sockets and links. */
static const char *SWITCHED =
    "{\"format\": \"ttasim-platform\", \"version\": 1, \"name\": \"switched\", " TEST_CPU
    " \"node\": {\"components\": [{\"name\": \"cpu\", \"device\": \"test-cpu\", \"count\": %d},\n"
    "                           {\"name\": \"gpu\", \"device\": \"v100-sxm2\", \"count\": %d},\n"
    "                           {\"name\": \"pcie\", \"device\": \"pcie-switch\"}],\n"
    "   \"links\": [{\"a\": \"gpu\", \"b\": \"pcie0\", \"bandwidth_Bps\": 32e9, \"latency_s\": \"0.5us\"},\n"
    "             {\"a\": \"pcie0\", \"b\": \"cpu0\", \"bandwidth_Bps\": 16e9, \"latency_s\": \"0.5us\"}%s]}}\n";

static platform *load_text(const char *text)
{
    char path[64];
    tu_write_temp(text, path, sizeof path);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    unlink(path);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

static platform *switched(int sockets, int gpus, const char *extra_links)
{
    char text[4096];
    snprintf(text, sizeof text, SWITCHED, sockets, gpus, extra_links);
    return load_text(text);
}

static host_emb_time simulate(const platform *p, const step_host_load *l)
{
    host_emb_time t;
    tt_error err = {0};
    ck_assert_msg(host_embedding_time(p, NETWORK_IDEAL, l, 1, NULL, &t, NULL, &err) == TT_OK, "%s", err.msg);
    return t;
}

/* Every row crosses the one link: latency + bytes / bandwidth each way; a
 * direction costs the slower of its transfer and its DRAM work. */
START_TEST(one_link_by_hand)
{
    platform *p = load_text(DIRECT);
    step_host_load l[2] = {{1.6e8, 3.2e8, 1e9, 1e8}, {0.8e8, 0.8e8, 1e6, 1e6}};
    host_emb_time t[2];
    tt_error err = {0};
    ck_assert_msg(host_embedding_time(p, NETWORK_IDEAL, l, 2, NULL, t, NULL, &err) == TT_OK, "%s", err.msg);
    ck_assert_double_eq_tol(t[0].forward_transfer_s, 1e-6 + 1.6e8 / 16e9, 1e-12);
    ck_assert_double_eq_tol(t[0].backward_transfer_s, 1e-6 + 3.2e8 / 16e9, 1e-12);
    ck_assert_double_eq_tol(t[0].lookup_s, 1e9 / 5e10, 1e-15);
    ck_assert_double_eq_tol(t[0].update_s, 1e8 / 5e10, 1e-15);
    ck_assert_double_eq_tol(t[0].forward_s, 0.02, 1e-15);                  /* DRAM-bound */
    ck_assert_double_eq_tol(t[0].backward_s, 1e-6 + 3.2e8 / 16e9, 1e-12); /* link-bound */
    /* the second phase in the same simulation */
    ck_assert_double_eq_tol(t[1].forward_transfer_s, 1e-6 + 0.8e8 / 16e9, 1e-12);
    ck_assert_double_eq_tol(t[1].backward_s, 1e-6 + 0.8e8 / 16e9, 1e-12);
    platform_free(p);
}
END_TEST

/* Two GPUs behind one switch share its 16 GB/s uplink: twice as long as one
 * alone, although each has its own 32 GB/s link. */
START_TEST(switch_uplink_contention)
{
    step_host_load l = {3.2e8, 3.2e8, 1e6, 1e6};
    platform *one = switched(1, 1, ""), *two = switched(1, 2, "");
    host_emb_time a = simulate(one, &l), b = simulate(two, &l);
    ck_assert_double_eq_tol(a.forward_transfer_s, 1e-6 + 3.2e8 / 16e9, 1e-12);
    ck_assert_double_eq_tol(b.forward_transfer_s, 1e-6 + 2 * 3.2e8 / 16e9, 1e-12);
    ck_assert_double_eq_tol(b.backward_transfer_s, 1e-6 + 2 * 3.2e8 / 16e9, 1e-12);
    platform_free(one);
    platform_free(two);
}
END_TEST

/* A second socket reaches the switch over UPI (41.6 GB/s): each socket holds
 * half the rows, the uplink still carries all of them, and each socket's DRAM
 * does half the lookups. */
START_TEST(remote_socket_over_upi)
{
    step_host_load l = {3.2e8, 3.2e8, 1e9, 1e9};
    platform *p = switched(2, 1, ",\n {\"a\": \"cpu0\", \"b\": \"cpu1\", \"bandwidth_Bps\": 20.8e9, "
                                 "\"count\": 2, \"latency_s\": \"0.1us\", \"class\": \"upi\"}");
    host_emb_time t = simulate(p, &l);
    /* the remote half starts 0.1 us later: a sliver at full rate at the end */
    ck_assert_double_eq_tol(t.forward_transfer_s, 1.1e-6 + 3.2e8 / 16e9, 1e-7);
    ck_assert_double_eq_tol(t.lookup_s, 1e9 / 2 / 5e10, 1e-15);
    platform_free(p);
}
END_TEST

START_TEST(needs_cpu_sockets)
{
    tt_error err = {0};
    platform *p = platform_load("star", &(platform_options){.nodes = 4}, &err);
    ck_assert_ptr_nonnull(p);
    step_host_load l = {1e6, 1e6, 1e6, 1e6};
    host_emb_time t;
    ck_assert_int_eq(host_embedding_time(p, NETWORK_IDEAL, &l, 1, NULL, &t, NULL, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "need CPU sockets"));
    ck_assert_ptr_nonnull(strstr(err.msg, "\"accelerators\""));
    platform_free(p);
}
END_TEST

/* Two Zion nodes: the tables are sharded over all 16 sockets, so half of
 * every accelerator's rows come from the other node: 8 sockets x 8
 * accelerators x R/16 cross each node's port each way; with gradients, the
 * same back. The links count each micro-step link_weight times. */
START_TEST(sharded_across_nodes)
{
    platform_options o = {.nodes = 2};
    tt_error err = {0};
    platform *p = platform_load("zion", &o, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    step_host_load l = {1.6e7, 0.8e7, 1e6, 1e6};
    double weight = 3;
    host_emb_time t;
    link_usage u;
    ck_assert_msg(host_embedding_time(p, NETWORK_IDEAL, &l, 1, &weight, &t, &u, &err) == TT_OK, "%s", err.msg);
    const link_class_use *port = NULL;
    for (int i = 0; i < u.n_classes; i++)
        if (strcmp(u.classes[i].cls, "node-leaf") == 0)
            port = &u.classes[i];
    ck_assert_ptr_nonnull(port);
    /* each node's port, each way: its rows to the other node's accelerators
     * and its accelerators' gradients to the other node's sockets */
    ck_assert_int_eq(port->links, 4);
    ck_assert_double_eq_tol(port->bytes, 4 * weight * 64 * (1.6e7 + 0.8e7) / 16, 4);
    ck_assert_msg(t.forward_transfer_s > 0 && t.backward_transfer_s > 0, "no transfer time");
    platform_free(p);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("host_embedding");
    TCase *t = tcase_create("flows");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, one_link_by_hand);
    tcase_add_test(t, switch_uplink_contention);
    tcase_add_test(t, remote_socket_over_upi);
    tcase_add_test(t, needs_cpu_sockets);
    tcase_add_test(t, sharded_across_nodes);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return tu_run_suite(suite()) ? EXIT_FAILURE : EXIT_SUCCESS;
}
