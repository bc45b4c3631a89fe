#include "sim/cli/shard_record.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platforms/platform.h"

typedef enum { F_INT, F_LONG, F_SIZE, F_DOUBLE, F_STR, F_KIND, F_COST } ftype;

typedef struct field {
    const char *name; /* dotted: "step.memory.total_bytes" */
    size_t offset;
    ftype type;
    size_t bytes; /* F_STR: the buffer, NUL included */
    long lo, hi;  /* F_INT, F_LONG, F_SIZE */
} field;

_Static_assert(sizeof(sharding_kind) == sizeof(int), "plans are stored as int");
/* A field added to a point must reach its shards too: add it below (and a
 * new SHARD_SCHEMA_VERSION), then the sizes here. */
_Static_assert(sizeof(run_point) == 4280 && sizeof(step_result) == 184 && sizeof(resilience_result) == 232 &&
                   sizeof(sharding_cost) == 168 &&
                   sizeof(cost_bill) == 336 && sizeof(host_emb_time) == 48,
               "run_point changed: sim/cli/shard_record.c's FIELDS must name every field");

#define PO(m) offsetof(point_outcome, m)
#define D(name, m) {name, PO(m), F_DOUBLE, 0, 0, 0}
#define I(name, m, lo, hi) {name, PO(m), F_INT, 0, lo, hi}
#define S(name, m) {name, PO(m), F_STR, sizeof(((point_outcome *)0)->m), 0, 0}
#define COSTS(name, m)                                                                                             \
    D(name ".usd", m.usd), D(name ".energy_j", m.energy_j), D(name ".capex_usd", m.capex_usd),                   \
        D(name ".energy_usd", m.energy_usd), D(name ".owned_usd", m.owned_usd)

/* The point: every field a report reads. */
static const field FIELDS[] = {
    I("rc", rc, TT_OK, TT_EINTERNAL), I("reused", reused, 0, 1), I("stop.code", err.code, TT_OK, TT_EINTERNAL),
    S("stop.message", err.msg),
    S("label", pt.label), S("error", pt.error), S("platform", pt.platform),
    I("nodes", pt.nodes, 0, PLATFORM_MAX_NODES), I("ranks", pt.ranks, 0, INT_MAX), I("cpu_ranks", pt.cpu_ranks, 0, 1),
    D("upi_bytes", pt.upi_bytes), {"global_batch", PO(pt.global_batch), F_LONG, 0, 0, 1L << 32},
    I("micro_batch", pt.micro_batch, 0, RUN_MAX_SAMPLES_PER_RANK),
    I("accumulation", pt.accumulation, 0, RUN_MAX_SAMPLES_PER_RANK),
    S("allreduce", pt.allreduce), S("alltoall", pt.alltoall), D("peak_flops", pt.peak_flops),
    D("step.time_s", pt.step.time_s), D("step.compute_s", pt.step.compute_s), D("step.comm_s", pt.step.comm_s),
    D("step.exposed_comm_s", pt.step.exposed_comm_s), D("step.tp_comm_s", pt.step.tp_comm_s),
    D("step.cp_comm_s", pt.step.cp_comm_s), D("step.ep_comm_s", pt.step.ep_comm_s),
    D("step.bubble_s", pt.step.bubble_s), D("step.forward_fill_s", pt.step.forward_fill_s),
    D("step.forward_beat_s", pt.step.forward_beat_s), D("step.optimizer_s", pt.step.optimizer_s),
    I("parallel.tensor", pt.parallel[LAYOUT_TENSOR], 0, INT_MAX),
    I("parallel.context", pt.parallel[LAYOUT_CONTEXT], 0, INT_MAX),
    I("parallel.expert", pt.parallel[LAYOUT_EXPERT], 0, INT_MAX), I("parallel.data", pt.parallel[LAYOUT_DATA], 0, INT_MAX),
    I("parallel.pipeline", pt.parallel[LAYOUT_PIPELINE], 0, INT_MAX), I("parallel.chunks", pt.chunks, 0, INT_MAX),
    I("parallel.sequence_parallel", pt.sequence_parallel, 0, 1), D("tokens_per_sample", pt.tokens_per_sample),
    D("step.host_embedding_s", pt.step.host_embedding_s), D("step.input_s", pt.step.input_s),
    D("step.input_wait_s", pt.step.input_wait_s), D("step.idle_s", pt.step.idle_s),
    D("step.model_flops", pt.step.model_flops), D("step.compute_bytes", pt.step.compute_bytes),
    D("step.mfu", pt.step.mfu), D("step.memory.params_bytes", pt.step.memory.params_bytes),
    D("step.memory.gradients_bytes", pt.step.memory.gradients_bytes),
    D("step.memory.optimizer_bytes", pt.step.memory.optimizer_bytes),
    D("step.memory.activations_bytes", pt.step.memory.activations_bytes),
    D("step.memory.total_bytes", pt.step.memory.total_bytes),
    D("host.forward_s", pt.host.forward_s), D("host.backward_s", pt.host.backward_s),
    D("host.forward_transfer_s", pt.host.forward_transfer_s), D("host.backward_transfer_s", pt.host.backward_transfer_s),
    D("host.lookup_s", pt.host.lookup_s), D("host.update_s", pt.host.update_s),
    {"tables", PO(pt.n_tables), F_SIZE, 0, 0, 1L << 24}, {"plan", PO(pt.plan), F_KIND, 0, 0, SHARD_COUNT},
    {"embedding", PO(pt.tables), F_COST, 0, 0, 0},
    D("samples_per_s", pt.samples_per_s), D("steps_to_target", pt.steps_to_target), D("steps_p10", pt.steps_p10),
    D("steps_p90", pt.steps_p90), D("samples_to_target", pt.samples_to_target), D("samples_p10", pt.samples_p10),
    D("samples_p90", pt.samples_p90), I("extrapolated", pt.extrapolated, 0, 1), D("failed_batch", pt.failed_batch),
    D("epochs", pt.epochs), D("evaluation_s", pt.eval_s), D("time_to_accuracy_s", pt.time_to_accuracy_s),
    D("time_to_accuracy_p10_s", pt.time_to_accuracy_p10_s), D("time_to_accuracy_p90_s", pt.time_to_accuracy_p90_s),
    COSTS("per_step", pt.per_step), COSTS("total", pt.total), COSTS("total_p10", pt.total_p10),
    COSTS("total_p90", pt.total_p90),
    D("bill.accelerators_usd", pt.bill.accelerators_usd), D("bill.servers_usd", pt.bill.servers_usd),
    D("bill.nics_usd", pt.bill.nics_usd), D("bill.switches_usd", pt.bill.switches_usd),
    D("bill.cables_usd", pt.bill.cables_usd), D("bill.total_usd", pt.bill.total_usd),
    {"bill.fabric_switch_ports", PO(pt.bill.fabric_switch_ports), F_LONG, 0, 0, LONG_MAX},
    {"bill.fabric_switches", PO(pt.bill.fabric_switches), F_LONG, 0, 0, LONG_MAX},
    {"bill.fabric_cables", PO(pt.bill.fabric_cables), F_LONG, 0, 0, LONG_MAX},
    D("bill.other_w", pt.bill.other_w), S("bill.unpriced", pt.bill.missing),
    D("tco_usd", pt.tco_usd), D("scaling_efficiency", pt.scaling_efficiency),
    I("res.on", pt.res.on, 0, 1), D("res.gpu", pt.res.per_day[RES_GPU]), D("res.hbm", pt.res.per_day[RES_HBM]),
    D("res.nic", pt.res.per_day[RES_NIC]), D("res.link", pt.res.per_day[RES_LINK]),
    D("res.host", pt.res.per_day[RES_HOST]), D("res.software", pt.res.per_day[RES_SOFTWARE]),
    D("res.planned", pt.res.per_day[RES_PLANNED]), D("res.interruptions_per_day", pt.res.interruptions_per_day),
    D("res.mtbf_s", pt.res.mtbf_s), D("res.checkpoint_bytes", pt.res.checkpoint_bytes),
    D("res.checkpoint_write_s", pt.res.checkpoint_write_s), D("res.checkpoint_read_s", pt.res.checkpoint_read_s),
    D("res.checkpoint_interval_s", pt.res.checkpoint_interval_s), D("res.write_Bps", pt.res.write_Bps),
    D("res.read_Bps", pt.res.read_Bps), D("res.restart_s", pt.res.restart_s), D("res.goodput", pt.res.goodput),
    D("res.goodput_p10", pt.res.goodput_p10), D("res.goodput_p90", pt.res.goodput_p90),
    D("res.interruptions", pt.res.interruptions), D("res.time_s", pt.res.time_s),
    D("res.time_p10_s", pt.res.time_p10_s), D("res.time_p90_s", pt.res.time_p90_s),
    D("res.lost_usd", pt.res.lost_usd), D("res.lost_energy_j", pt.res.lost_energy_j),
    D("res.lost_owned_usd", pt.res.lost_owned_usd), D("res.straggler_s", pt.res.straggler_s),
    {"res.straggler_group", PO(pt.res.straggler_group), F_LONG, 0, 0, LONG_MAX},
};

#define SC(name, m) {name, offsetof(sharding_cost, m), F_DOUBLE, 0, 0, 0}
/* A sharding plan's cost (run_point.tables, and each group's). */
static const field COST_FIELDS[] = {
    {"kind", offsetof(sharding_cost, kind), F_KIND, 0, 0, SHARD_COUNT},
    SC("lookup_bytes", lookup_bytes), SC("lookup_flops", lookup_flops), SC("update_bytes", update_bytes),
    SC("update_flops", update_flops), SC("lookups", lookups), SC("unique_rows", unique_rows),
    SC("alltoall_bytes", alltoall_bytes), SC("reduce_scatter_bytes", reduce_scatter_bytes),
    SC("allgather_bytes", allgather_bytes), SC("allreduce_bytes", allreduce_bytes), SC("hot_rows", hot_rows),
    SC("hot_lookup_share", hot_lookup_share), SC("index_bytes", index_bytes), SC("index_kernels", index_kernels),
    SC("index_s", index_s), SC("id_bytes", id_bytes), SC("id_s", id_s), SC("params_bytes", params_bytes),
    SC("optimizer_bytes", optimizer_bytes), SC("gradient_bytes", gradient_bytes),
};

#define N_FIELDS (sizeof FIELDS / sizeof *FIELDS)
#define N_COST (sizeof COST_FIELDS / sizeof *COST_FIELDS)
#define GROUP_KEYS 4 /* max_rows, plan, tables, cost */

/* A double: a number, or "inf", "-inf", "nan", "-nan" (JSON has none). */
static json_t *put_double(double x)
{
    if (isfinite(x))
        return json_real(x);
    return json_string(isnan(x) ? (signbit(x) ? "-nan" : "nan") : x > 0 ? "inf" : "-inf");
}

/* A string as JSON text, or its bytes as hex when they are not UTF-8 (a
 * message quoting a user's file). */
static json_t *put_string(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    size_t n = strlen(s);
    char *hex = malloc(2 * n + 1);
    for (size_t i = 0; hex && i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)s[i]);
    v = hex ? json_pack("{s:s}", "hex", hex) : NULL;
    free(hex);
    return v;
}

/* Sets obj's member at a dotted path, making the objects on the way. */
static int set_path(json_t *obj, const char *path, json_t *v)
{
    if (!v)
        return -1;
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        json_t *next = json_object_get(obj, key);
        if (!next) {
            next = json_object();
            if (json_object_set_new(obj, key, next))
                return json_decref(v), -1;
        }
        obj = next;
        path = dot + 1;
    }
    return json_object_set_new(obj, path, v);
}

static json_t *get_path(const json_t *obj, const char *path)
{
    const char *dot;
    while (obj && (dot = strchr(path, '.'))) {
        char key[64];
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        obj = json_object_get(obj, key);
        path = dot + 1;
    }
    return obj ? json_object_get(obj, path) : NULL;
}

static int put_fields(json_t *obj, const void *base, const field *fs, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        const char *at = (const char *)base + fs[i].offset;
        json_t *v;
        switch (fs[i].type) {
        case F_INT: case F_KIND: v = json_integer(*(const int *)at); break;
        case F_LONG: v = json_integer(*(const long *)at); break;
        case F_SIZE: v = json_integer((json_int_t) * (const size_t *)at); break;
        case F_DOUBLE: v = put_double(*(const double *)at); break;
        case F_STR: v = put_string(at); break;
        default: v = json_object(); bad |= !v || put_fields(v, at, COST_FIELDS, N_COST); break;
        }
        bad |= set_path(obj, fs[i].name, v) != 0;
    }
    return bad;
}

json_t *shard_record_json(const point_outcome *o, size_t index)
{
    json_t *rec = json_pack("{s:I}", "point", (json_int_t)index), *groups = json_array();
    int bad = !rec || !groups || put_fields(rec, o, FIELDS, N_FIELDS);
    const run_point *p = &o->pt;
    for (int g = 0; !bad && g < p->mix.n_groups && g < SHARD_MAX_GROUPS; g++) {
        json_t *gc = json_object(), *e = json_object();
        bad |= !gc || !e || put_fields(gc, &p->groups[g], COST_FIELDS, N_COST) ||
               json_object_set_new(e, "max_rows", put_double(p->mix.max_rows[g])) ||
               json_object_set_new(e, "plan", json_integer(p->mix.plan[g])) ||
               json_object_set_new(e, "tables", json_integer(p->group_tables[g])) ||
               json_object_set_new(e, "cost", gc) || json_array_append_new(groups, e);
    }
    if (bad || json_object_set_new(rec, "groups", groups)) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

/* ---- reading ---- */

typedef struct reader {
    const char *file, *where;
    tt_error *err;
} reader;

static int bad_field(const reader *r, const char *path, const char *expected, const json_t *v)
{
    char *text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    if (text && strlen(text) > 60)
        strcpy(text + 57, "...");
    int rc = tt_error_set(r->err, TT_EINPUT, "%s: %s.%s: expected %s, found %s; the shard was changed after ttasim "
                          "wrote it: run that shard again", r->file, r->where, path, expected,
                          text ? text : "nothing");
    free(text);
    return rc;
}

static int get_double(const reader *r, const char *path, const json_t *v, double *out)
{
    const char *s = json_string_value(v);
    if (json_is_number(v))
        *out = json_number_value(v);
    else if (s && (!strcmp(s, "inf") || !strcmp(s, "-inf")))
        *out = s[0] == '-' ? -INFINITY : INFINITY;
    else if (s && (!strcmp(s, "nan") || !strcmp(s, "-nan")))
        *out = s[0] == '-' ? -NAN : NAN;
    else
        return bad_field(r, path, "a number (or \"inf\", \"-inf\", \"nan\")", v);
    return TT_OK;
}

static int get_string(const reader *r, const char *path, const json_t *v, char *out, size_t bytes)
{
    const char *s = json_string_value(v);
    json_t *hex = json_is_object(v) && json_object_size(v) == 1 ? json_object_get(v, "hex") : NULL;
    size_t n = s ? json_string_length(v) : json_is_string(hex) ? json_string_length(hex) / 2 : 0;
    if ((!s && !json_is_string(hex)) || n >= bytes || (s && strlen(s) != n) ||
        (hex && json_string_length(hex) % 2))
        return bad_field(r, path, "a string shorter than its field", v);
    if (s) {
        memcpy(out, s, n + 1);
        return TT_OK;
    }
    const char *h = json_string_value(hex);
    for (size_t i = 0; i < n; i++) {
        unsigned byte;
        if (sscanf(h + 2 * i, "%2x", &byte) != 1 || byte == 0)
            return bad_field(r, path, "hex bytes", v);
        out[i] = (char)byte;
    }
    out[n] = '\0';
    return TT_OK;
}

static int get_fields(const reader *r, const char *prefix, const json_t *obj, void *base, const field *fs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char path[160];
        snprintf(path, sizeof path, "%s%s", prefix, fs[i].name);
        json_t *v = get_path(obj, fs[i].name);
        char *at = (char *)base + fs[i].offset;
        int rc = TT_OK;
        if (!v)
            return bad_field(r, path, "the field (missing)", NULL);
        if (fs[i].type == F_DOUBLE) {
            rc = get_double(r, path, v, (double *)at);
        } else if (fs[i].type == F_STR) {
            rc = get_string(r, path, v, at, fs[i].bytes);
        } else if (fs[i].type == F_COST) {
            char sub[160];
            snprintf(sub, sizeof sub, "%s.", path);
            rc = json_is_object(v) ? get_fields(r, sub, v, at, COST_FIELDS, N_COST)
                                   : bad_field(r, path, "an object", v);
        } else {
            json_int_t x = json_integer_value(v);
            if (!json_is_integer(v) || x < fs[i].lo || x > fs[i].hi) {
                char want[96];
                snprintf(want, sizeof want, "an integer in [%ld, %ld]", fs[i].lo, fs[i].hi);
                return bad_field(r, path, want, v);
            }
            if (fs[i].type == F_LONG)
                *(long *)at = (long)x;
            else if (fs[i].type == F_SIZE)
                *(size_t *)at = (size_t)x;
            else
                *(int *)at = (int)x;
        }
        if (rc)
            return rc;
    }
    return TT_OK;
}

/* Leaves (numbers, strings, the hex objects of strings) under v. */
static size_t leaves(const json_t *v)
{
    if (json_is_object(v) && !(json_object_size(v) == 1 && json_object_get(v, "hex"))) {
        size_t n = 0;
        const char *k;
        json_t *m;
        json_object_foreach((json_t *)v, k, m) n += leaves(m);
        return n;
    }
    if (json_is_array(v)) {
        size_t n = 0;
        for (size_t i = 0; i < json_array_size(v); i++)
            n += leaves(json_array_get(v, i));
        return n;
    }
    return 1;
}

static size_t table_leaves(const field *fs, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        k += fs[i].type == F_COST ? N_COST : 1;
    return k;
}

static int get_group(const reader *r, const json_t *e, size_t g, run_point *p)
{
    char path[64];
    snprintf(path, sizeof path, "groups[%zu]", g);
    json_t *plan = json_object_get(e, "plan"), *tables = json_object_get(e, "tables"), *gc = json_object_get(e, "cost");
    if (!json_is_object(e) || json_object_size(e) != GROUP_KEYS || !json_is_object(gc))
        return bad_field(r, path, "an object of max_rows, plan, tables and cost", e);
    if (get_double(r, path, json_object_get(e, "max_rows"), &p->mix.max_rows[g]))
        return r->err->code;
    if (!json_is_integer(plan) || json_integer_value(plan) < 0 || json_integer_value(plan) > SHARD_COUNT)
        return bad_field(r, path, "a plan index in \"plan\"", plan);
    if (!json_is_integer(tables) || json_integer_value(tables) < 0 || json_integer_value(tables) > INT_MAX)
        return bad_field(r, path, "a table count in \"tables\"", tables);
    p->mix.plan[g] = (sharding_kind)json_integer_value(plan);
    p->group_tables[g] = (int)json_integer_value(tables);
    snprintf(path, sizeof path, "groups[%zu].cost.", g);
    return get_fields(r, path, gc, &p->groups[g], COST_FIELDS, N_COST);
}

int shard_record_read(const json_t *rec, const char *file, const char *where, point_outcome *o, tt_error *err)
{
    reader r = {file, where, err};
    memset(o, 0, sizeof *o);
    if (!json_is_object(rec))
        return bad_field(&r, "", "an object", rec);
    int rc = get_fields(&r, "", rec, o, FIELDS, N_FIELDS);
    /* a point that failed stops the merge with its status and message: an
     * input or internal error that says why, never "an expectation failed" */
    if (rc == TT_OK && (o->rc == TT_EFAIL || (o->rc != TT_OK && !o->err.msg[0])))
        rc = bad_field(&r, "rc", "0, or 2 or 3 with the reason in stop.message", json_object_get(rec, "rc"));
    json_t *groups = json_object_get(rec, "groups");
    size_t ng = json_array_size(groups);
    if (rc == TT_OK && (!json_is_array(groups) || ng > SHARD_MAX_GROUPS))
        rc = bad_field(&r, "groups", "a list of at most 8 table groups", groups);
    for (size_t g = 0; rc == TT_OK && g < ng; g++)
        rc = get_group(&r, json_array_get(groups, g), g, &o->pt);
    o->pt.mix.n_groups = (int)ng;
    /* a field this ttasim does not know: another schema, or an addition */
    size_t want = 1 + table_leaves(FIELDS, N_FIELDS) + ng * (GROUP_KEYS - 1 + N_COST);
    if (rc == TT_OK && leaves(rec) != want)
        rc = tt_error_set(err, TT_EINPUT, "%s: %s: %zu fields, this ttasim's records have %zu: a field it does "
                          "not know (another schema); run the shards again with this ttasim", file, where,
                          leaves(rec), want);
    o->present = 1;
    return rc;
}
