/* Deliberate bugs that once survived the whole suite (issue 14), each pinned
 * by a value it changes. The batch-norm running variance (biased instead of
 * unbiased) is pinned by tests/test_golden.c. */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tests/testutil.h"
#include "trainer/model.h"
#include "trainer/trace.h"

/* Mutant: DDP's first bucket (closed at 1 MiB, as torch DDP) dropped. The mlp
 * 784-1024-1024-10 yields its gradients last layer first: fc3 (10 + 10,240
 * floats), fc2 (1,024 + 1,048,576) closes the first bucket past 1 MiB; fc1
 * (1,024 + 802,816) is the second, under the 25 MiB cap. */
START_TEST(ddp_buckets_cover_every_gradient)
{
    model_opts mo;
    model_opts_default(&mo);
    trace_opts to;
    trace_opts_default(&to);
    to.micro_batch = 2;
    json_t *doc = NULL;
    tt_error err = {0};
    ck_assert_msg(trace_build("mlp", &mo, &to, &doc, &err) == TT_OK, "%s", err.msg);
    json_t *b = json_object_get(doc, "buckets");
    ck_assert_int_eq(json_array_size(b), 2);
    double first = 4.0 * (10 + 10240 + 1024 + 1048576), second = 4.0 * (1024 + 802816);
    ck_assert_double_eq(json_number_value(json_object_get(json_array_get(b, 0), "bytes")), first);
    ck_assert_double_eq(json_number_value(json_object_get(json_array_get(b, 1), "bytes")), second);
    ck_assert_double_eq(json_number_value(json_object_get(doc, "param_bytes")), first + second);
    json_decref(doc);
}
END_TEST

/* A zoo model with its default options (planned, not allocated). */
static model *plan(const char *name)
{
    model_opts mo;
    model_opts_default(&mo);
    model *m = NULL;
    tt_error err = {0};
    ck_assert_msg(model_create(&m, name, &mo, &err) == TT_OK, "%s", err.msg);
    return m;
}

/* Mutant: GELU's backward FLOP count. Per element: forward 8 (erf and the
 * product), backward 12 (Phi, the density, product and sum), trainer/model.c. */
START_TEST(gelu_flops_per_element)
{
    model *m = plan("bert-tiny");
    int seen = 0;
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        if (!strstr(L->name, "gelu"))
            continue;
        seen++;
        double elems = L->fwd_elems / 2; /* reads the input, writes the output */
        ck_assert_double_eq_tol(L->fwd_flops, 8 * elems, 1e-9 * L->fwd_flops);
        ck_assert_double_eq_tol(L->bwd_flops, 12 * elems, 1e-9 * L->bwd_flops);
    }
    ck_assert_int_gt(seen, 0);
    model_free(m);
}
END_TEST

/* Mutant: the decoder's elementwise FLOP counts (trainer/plan.c). Per element:
 * rmsnorm 4 forward and 10 backward, swiglu 4 and 11 (of its output), rope 3
 * each way on the rotated query and key heads only (the values pass). */
START_TEST(decoder_flops_per_element)
{
    model *m = plan("llama");
    int seen = 0;
    for (int i = 0; i < model_nlayers(m); i++) {
        const model_layer *L = model_layer_at(m, i);
        double T = 32, f = -1, b = -1;
        if (strstr(L->name, "layernorm"))
            f = 4 * T * 64, b = 10 * T * 64;
        else if (strstr(L->name, "mlp.act"))
            f = 4 * T * 176, b = 11 * T * 176;
        else if (strstr(L->name, "rotary"))
            f = b = 3 * T * (4 + 2) * 16; /* 4 query and 2 key heads of 16 */
        if (f < 0)
            continue;
        seen++;
        ck_assert_double_eq(L->fwd_flops, f);
        ck_assert_double_eq(L->bwd_flops, b);
    }
    ck_assert_int_eq(seen, 2 * 4);
    model_free(m);
}
END_TEST

#define TRACE TTASIM_SRCDIR "/tests/data/tiny-trace.json"

/* Runs a star-of-8 scenario on the tiny trace (12.5 M parameters); returns the document. */
static json_t *run_scenario(const char *optimizer, const char *extra)
{
    char text[2048], path[64], args[256];
    static char out[65536];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"m\", \"platform\": {\"name\": \"star\", \"nodes\": 8},\n"
             " \"network\": \"ideal\",\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"global_batch\": 64},\n"
             " \"optimizer\": \"%s\", \"collectives\": {\"allreduce\": \"ring\"},\n"
             " \"convergence\": {\"steps\": 1050}%s}\n",
             optimizer, extra);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    json_t *doc = tu_run_ttasim_json(args, 0, out, sizeof out);
    unlink(path);
    return doc;
}

static double optimizer_state_bytes(const char *optimizer)
{
    json_t *doc = run_scenario(optimizer, "");
    json_t *mem = json_object_get(json_object_get(doc, "step"), "memory");
    double v = json_number_value(json_object_get(mem, "optimizer_bytes"));
    json_decref(doc);
    return v;
}

/* Mutant: LARS keeps 2 fp32 words of state per parameter instead of its one
 * momentum buffer (You et al. 2017, Algorithm 1); sgd none, AdamW and LAMB two. */
START_TEST(optimizer_state_words)
{
    const double params = 12500000;
    ck_assert_double_eq(optimizer_state_bytes("lars"), 4 * params);
    ck_assert_double_eq(optimizer_state_bytes("momentum"), 4 * params);
    ck_assert_double_eq(optimizer_state_bytes("sgd"), 0);
    ck_assert_double_eq(optimizer_state_bytes("lamb"), 8 * params);
}
END_TEST

/* Mutant: evaluations counted with ceil. 1,050 steps evaluated every 100 steps
 * make 10 completed evaluations (the 11th would come at step 1,100), 2 s each. */
START_TEST(evaluation_count_is_floor)
{
    json_t *doc = run_scenario("momentum", ",\n \"evaluation\": {\"every_steps\": 100, \"time_s\": 2}");
    ck_assert_double_eq(json_number_value(json_object_get(doc, "evaluation_s")), 20);
    double step = json_number_value(json_object_get(json_object_get(doc, "step"), "time_s"));
    ck_assert_double_eq_tol(json_number_value(json_object_get(doc, "time_to_accuracy_s")),
                            1050 * step + 20, 1e-9 * (1050 * step + 20));
    json_decref(doc);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mutants");
    TCase *t = tcase_create("mutants");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, ddp_buckets_cover_every_gradient);
    tcase_add_test(t, gelu_flops_per_element);
    tcase_add_test(t, decoder_flops_per_element);
    tcase_add_test(t, optimizer_state_words);
    tcase_add_test(t, evaluation_count_is_floor);
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
