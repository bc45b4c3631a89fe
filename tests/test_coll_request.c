/* `ttasim run` times a step's collectives with the same requests as
 * `ttasim collective`: one builder (coll_request_build) gives both the
 * platform's defaults (hier rings per NIC, pipeline chunk, reduction cost). */
#include <check.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "tests/testutil.h"

/* The trace's two buckets are 40 MB and 10 MB allreduces. */
#define TRACE TTASIM_SRCDIR "/tests/data/tiny-trace.json"
#define BUCKETS "10M,40M"

typedef struct pair {
    const char *platform;
    int nodes;
    const char *algo;
} pair;

/* hier on DGX-1 (4 NICs for 8 GPUs: rings per NIC, not per GPU), dbtree on a
 * star (pipelined in chunks), ring across DGX-1 nodes (reduction cost). */
static const pair PAIRS[] = {{"dgx1-v100", 4, "hier"}, {"star", 8, "dbtree"}, {"dgx1-v100", 2, "ring"}};

static json_t *run_json(const char *args)
{
    static char out[1 << 16];
    ck_assert_msg(tu_run_ttasim(args, out, sizeof out) == 0, "ttasim %s: %s", args, out);
    json_error_t je;
    json_t *doc = json_loads(out, 0, &je);
    ck_assert_msg(doc != NULL, "ttasim %s: %s", args, out);
    return doc;
}

START_TEST(run_equals_collective)
{
    const pair *c = &PAIRS[_i];
    char text[1024], path[64], args[512];
    snprintf(text, sizeof text,
             "{\"version\": 1, \"name\": \"collreq\", \"platform\": {\"name\": \"%s\", \"nodes\": %d},\n"
             " \"network\": \"calibrated\",\n"
             " \"workload\": {\"trace\": \"" TRACE "\", \"micro_batch\": 8},\n"
             " \"collectives\": {\"allreduce\": \"%s\"}, \"convergence\": {\"steps\": 1}}\n",
             c->platform, c->nodes, c->algo);
    tu_write_temp(text, path, sizeof path);
    snprintf(args, sizeof args, "run --json %s", path);
    json_t *run = run_json(args);
    unlink(path);
    snprintf(args, sizeof args, "collective --json --platform %s --nodes %d --op allreduce --algo %s --bytes " BUCKETS,
             c->platform, c->nodes, c->algo);
    json_t *coll = run_json(args);
    json_t *results = json_object_get(coll, "results");
    ck_assert_int_eq((int)json_array_size(results), 2);
    double sum_s = 0;
    for (size_t i = 0; i < 2; i++)
        sum_s += json_real_value(json_object_get(json_array_get(results, i), "time_s"));
    double comm_s = json_real_value(json_object_get(json_object_get(run, "step"), "comm_s"));
    ck_assert_msg(sum_s > 0 && fabs(comm_s / sum_s - 1) < 1e-9,
                  "%s x %d, %s: run's collectives take %.9g s, collective's %.9g s", c->platform, c->nodes,
                  c->algo, comm_s, sum_s);
    json_t *ran = json_object_get(json_object_get(run, "collectives"), "allreduce");
    ck_assert_str_eq(json_string_value(ran), c->algo);
    json_decref(run);
    json_decref(coll);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coll_request");
    TCase *t = tcase_create("run_vs_collective");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, run_equals_collective, 0, (int)(sizeof PAIRS / sizeof PAIRS[0]));
    suite_add_tcase(s, t);
    return tu_run_suite(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
