/* The Markov language source: its entropy rate against a hand-worked chain and
 * a long sampled stream, its optimal loss with the first positions; `ttasim
 * train --dataset markov`'s option errors; and one point of the committed
 * language-model profiles re-run (the trainer is deterministic). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trainer/markov.h"
#include "tests/testutil.h"

/* Two states, P(0->1) = a = 0.1, P(1->0) = b = 0.4: pi = (b, a) / (a + b) =
 * (0.8, 0.2), H = 0.8 h(0.1) + 0.2 h(0.4) = 0.394668712115 nats (h the binary
 * entropy). As an order-2 source whose rows depend on the last token only,
 * the same chain: the first label's context is one token, whose conditional
 * entropy is again H, so L* = H at every length. */
START_TEST(two_state_chain_hand_worked)
{
    const double p1[] = {0.9, 0.1, 0.4, 0.6};
    const double p2[] = {0.9, 0.1, 0.4, 0.6, 0.9, 0.1, 0.4, 0.6}; /* contexts 00 01 10 11 */
    markov m;
    tt_error err = {0};
    ck_assert_int_eq(markov_init_probs(&m, 2, 1, p1, 1, &err), TT_OK);
    ck_assert_double_eq_tol(m.stationary[0], 0.8, 1e-12);
    ck_assert_double_eq_tol(m.entropy_rate, 0.394668712115, 1e-11);
    ck_assert_double_eq_tol(m.head_entropy, 0, 1e-15);
    ck_assert_double_eq_tol(markov_optimal_loss(&m, 5), 0.394668712115, 1e-11);
    markov_free(&m);
    ck_assert_int_eq(markov_init_probs(&m, 2, 2, p2, 1, &err), TT_OK);
    ck_assert_double_eq_tol(m.stationary[0], 0.8 * 0.9, 1e-12); /* P(00) = pi0 P(0|0) */
    ck_assert_double_eq_tol(m.entropy_rate, 0.394668712115, 1e-11);
    ck_assert_double_eq_tol(m.head_entropy, 0.394668712115, 1e-11);
    ck_assert_double_eq_tol(markov_optimal_loss(&m, 7), 0.394668712115, 1e-11);
    markov_free(&m);
}
END_TEST

/* 4,000 sequences of 65 tokens of an order-2 source over 8 tokens: from
 * position 2 on, the mean of -ln P(next | context) (the Bayes loss) and the
 * plug-in conditional entropy of the counted (context, next) pairs match H
 * (sd of the mean about 0.004; the plug-in's bias -(C (V-1)) / 2N = -0.0001). */
START_TEST(stream_entropy_matches_rate)
{
    enum { V = 8, K = 2, B = 4000, T = 64 };
    markov m;
    tt_error err = {0};
    ck_assert_int_eq(markov_init(&m, V, K, 3, 0.05, 11, &err), TT_OK);
    ck_assert(m.entropy_rate > 0.5 && m.entropy_rate < log(V));
    int *tok = malloc(sizeof(int) * B * T), *lab = malloc(sizeof(int) * B * T);
    static long count[V * V][V];
    memset(count, 0, sizeof count);
    markov_fill(&m, 5, 0, B, T, tok, lab);
    double nats = 0;
    long n = 0;
    for (int b = 0; b < B; b++)
        for (int t = K - 1; t < T; t++) { /* label t is token t + 1, its context tokens t-1, t */
            int c = tok[b * T + t - 1] * V + tok[b * T + t], v = lab[b * T + t];
            nats -= log(m.prob[c * V + v]);
            count[c][v]++;
            n++;
        }
    double plug_in = 0;
    for (int c = 0; c < V * V; c++) {
        long nc = 0;
        for (int v = 0; v < V; v++)
            nc += count[c][v];
        for (int v = 0; v < V; v++)
            if (count[c][v])
                plug_in -= (double)count[c][v] / n * log((double)count[c][v] / nc);
    }
    ck_assert_double_eq_tol(nats / n, m.entropy_rate, 0.015);
    ck_assert_double_eq_tol(plug_in, m.entropy_rate, 0.015);
    /* labels are the next tokens; a stream is reproducible and another differs */
    ck_assert_int_eq(lab[0], tok[1]);
    int *tok2 = malloc(sizeof(int) * 2 * T), *lab2 = malloc(sizeof(int) * 2 * T);
    markov_fill(&m, 5, 1, 2, T, tok2, lab2);
    ck_assert(memcmp(tok2, tok + T, sizeof(int) * 2 * T) == 0);
    markov_fill(&m, 6, 1, 2, T, tok2, lab2);
    ck_assert(memcmp(tok2, tok + T, sizeof(int) * 2 * T) != 0);
    free(tok);
    free(lab);
    free(tok2);
    free(lab2);
    markov_free(&m);
}
END_TEST

START_TEST(source_errors)
{
    markov m;
    tt_error err = {0};
    ck_assert_int_eq(markov_init(&m, 1, 2, 1, 0.05, 1, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "vocabulary of 2 or more"));
    ck_assert_int_eq(markov_init(&m, 64, 4, 3, 0.05, 1, &err), TT_EINPUT); /* 2^24 contexts */
    ck_assert_ptr_nonnull(strstr(err.msg, "at most"));
    ck_assert_int_eq(markov_init(&m, 8, 2, 9, 0.05, 1, &err), TT_EINPUT);
    ck_assert_int_eq(markov_init(&m, 8, 2, 3, 0, 1, &err), TT_EINPUT);
    ck_assert_ptr_nonnull(strstr(err.msg, "floor in (0, 1)"));
}
END_TEST

#define LM "train --model llama --layers 1 --hidden 32 --heads 2 --seq-len 8 --vocab 8 "

START_TEST(cli_option_errors)
{
    static const struct {
        const char *args, *says;
    } cases[] = {
        {LM "--dataset markov", "add --target-loss X"},
        {LM "--dataset markov --target-loss 0.1,-1", "--target-loss: expected 1 to 4 numbers"},
        {LM "--dataset markov --target-loss 0.1,", "--target-loss: expected"},
        {LM "--dataset markov --target-loss 1,2,3,4,5", "--target-loss: expected 1 to 4"},
        {"train --dataset teacher --target-loss 0.1", "use --target for a test accuracy"},
        {"train --dataset teacher --markov-order 3", "add it or drop them"},
        {LM "--dataset markov --markov-floor 0", "--markov-floor: expected a number"},
        {LM "--dataset markov --target-loss 0.1,0.05 --sweep-batch 32 --out a.json",
         "--out: expected 2 profile files"},
        {"train --model mlp --dataset markov --target-loss 0.1", "trains a decoder"},
        {LM "--dataset markov --target-loss 0.1 --markov-order 9", "--markov-order"},
        {"train --model llama --hidden x --dataset markov --target-loss 0.1", "--hidden"},
    };
    char out[8192];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int rc = tu_run_ttasim(cases[i].args, out, sizeof out);
        ck_assert_msg(rc == 2, "%s: exit %d: %s", cases[i].args, rc, out);
        ck_assert_msg(strstr(out, cases[i].says), "%s: '%s' not in: %s", cases[i].args, cases[i].says, out);
    }
}
END_TEST

/* The committed AdamW profile's cheapest point, re-run from its own command
 * with seed 1: the steps to both target losses are the profile's run. */
#define PROFILES TTASIM_SRCDIR "/scenarios/profiles/"
#define RERUN_BATCH 256

static long seed1_steps(const char *path, long batch, char *command, size_t n)
{
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    ck_assert_msg(doc, "%s: %s", path, je.text);
    snprintf(command, n, "%s", json_string_value(json_array_get(json_object_get(doc, "sources"), 0)));
    long steps = -1;
    size_t i, k;
    json_t *pt, *run;
    json_array_foreach(json_object_get(doc, "points"), i, pt)
        if (json_integer_value(json_object_get(pt, "batch")) == batch)
            json_array_foreach(json_object_get(pt, "runs"), k, run)
                if (json_integer_value(json_object_get(run, "seed")) == 1)
                    steps = (long)json_integer_value(json_object_get(run, "steps"));
    json_decref(doc);
    ck_assert_msg(steps > 0, "%s: no seed-1 run at batch %ld", path, batch);
    return steps;
}

/* The sweep's command as one run: --sweep-batch, --seeds and --out dropped. */
static void one_run_args(const char *command, char *args, size_t n)
{
    char buf[2048], *save = NULL;
    snprintf(buf, sizeof buf, "%s", command);
    size_t len = 0;
    args[0] = '\0';
    for (char *w = strtok_r(buf, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        if (!strcmp(w, "ttasim"))
            continue;
        if (!strcmp(w, "--sweep-batch") || !strcmp(w, "--seeds") || !strcmp(w, "--out")) {
            strtok_r(NULL, " ", &save);
            continue;
        }
        len += (size_t)snprintf(args + len, n - len, "%s ", w);
    }
    snprintf(args + len, n - len, "--batch %d --seed 1 --json", RERUN_BATCH);
}

START_TEST(rerun_committed_point)
{
    char command[2048], args[2048], out[1 << 16];
    const char *loose = PROFILES "markov-llama-adamw-loose.json", *tight = PROFILES "markov-llama-adamw.json";
    long want_loose = seed1_steps(loose, RERUN_BATCH, command, sizeof command);
    long want_tight = seed1_steps(tight, RERUN_BATCH, command, sizeof command);
    one_run_args(command, args, sizeof args);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    json_t *t = json_object_get(doc, "target_losses");
    ck_assert_int_eq(json_array_size(t), 2);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(t, 0), "steps")), want_loose);
    ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(t, 1), "steps")), want_tight);
    json_decref(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("markov");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, two_state_chain_hand_worked);
    tcase_add_test(tc, stream_entropy_matches_rate);
    tcase_add_test(tc, source_errors);
    tcase_add_test(tc, cli_option_errors);
    tcase_add_test(tc, rerun_committed_point);
    suite_add_tcase(s, tc);
    return tu_run_suite(s) ? 1 : 0;
}
