/* chakra.c: Chakra execution traces written from and replayed into a task
 * graph (chakra.h), encoded by protobuf-c from the vendored et_def.proto. */
#include "sim/replay/chakra.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/infile.h"
#include "common/outfile.h"
#include "sim/replay/et_def.pb-c.h"

typedef enum { CK_COMP, CK_COLL, CK_SEND, CK_RECV } ck_type;

typedef struct ck_node {
    uint64_t id;
    ck_type type;
    int stream, kind;     /* tg_stream, tg_kind; -1: by type */
    double dur_s, wire_s; /* dur_s < 0: not recorded, priced */
    int comm_type;        /* Chakra's CollectiveCommType; -1: none */
    double comm_bytes, num_ops, tensor_bytes;
    unsigned dims;      /* the communicator's layout dimensions (pg_name) */
    long src, dst, tag; /* send/receive: ranks and pairing tag (-1: none) */
    uint64_t *deps;
    size_t n_deps;
} ck_node;

typedef struct ck_file {
    ck_node *node;
    size_t n;
    char name[64];
} ck_file;

struct chakra_trace {
    int files, contexts, world;
    int *file_of_rank; /* world entries */
    ck_file *file;
};

static const char *const STREAMS[] = {"compute", "comm", "host", "send", "side", NULL};
static const char *const KINDS[] = {"kernel", "optimizer", "collective", "host", "shared", NULL};
#define VERSION "0.0.4"

void chakra_free(chakra_trace *t)
{
    if (!t)
        return;
    for (int f = 0; t->file && f < t->files; f++) {
        for (size_t i = 0; i < t->file[f].n; i++)
            free(t->file[f].node[i].deps);
        free(t->file[f].node);
    }
    free(t->file);
    free(t->file_of_rank);
    free(t);
}

static chakra_trace *trace_new(int files, int world)
{
    chakra_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->file = calloc((size_t)files, sizeof *t->file)) ||
        !(t->file_of_rank = calloc((size_t)world, sizeof *t->file_of_rank))) {
        chakra_free(t);
        return NULL;
    }
    t->files = files;
    t->world = world;
    t->contexts = 1;
    return t;
}

static ck_node *node_push(ck_file *f, size_t *cap)
{
    if (f->n == *cap) {
        size_t c = *cap ? 2 * *cap : 64;
        ck_node *n = realloc(f->node, sizeof *n * c);
        if (!n)
            return NULL;
        f->node = n;
        *cap = c;
    }
    ck_node *n = &f->node[f->n++];
    *n = (ck_node){.stream = -1, .kind = -1, .dur_s = -1, .comm_type = -1, .src = -1, .dst = -1, .tag = -1};
    return n;
}

static int dep_push(ck_node *n, uint64_t id)
{
    uint64_t *d = realloc(n->deps, sizeof *d * (n->n_deps + 1));
    if (!d)
        return -1;
    n->deps = d;
    d[n->n_deps++] = id;
    return 0;
}

/* ---- from a task graph ---- */

static const int COMM_TYPE_OF[STEP_OPS] = {
    [STEP_ALLREDUCE] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE,
    [STEP_ALLTOALL] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL,
    [STEP_REDUCE_SCATTER] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER,
    [STEP_ALLGATHER] = CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER};

/* The first world rank that runs graph rank f (what a send or receive names). */
static long rank_of_file(const chakra_trace *t, int f)
{
    for (int r = 0; r < t->world; r++)
        if (t->file_of_rank[r] == f)
            return r;
    return f;
}

/* A task's node: the receives of its dependencies on other ranks first (one
 * per sending task), then the task after them and its own rank's tasks. */
static int add_task(chakra_trace *t, const taskgraph *g, const step_coll *c, size_t nc, long i, size_t *caps,
                    const long *dst)
{
    tg_task_info ti;
    tg_task_of(g, i, &ti);
    ck_file *f = &t->file[ti.rank];
    size_t *cap = &caps[ti.rank];
    long n_tasks = tg_tasks(g);
    for (int k = 0; k < ti.n_after; k++) {
        long a = tg_task_after(g, i, k);
        tg_task_info ai;
        tg_task_of(g, a, &ai);
        uint64_t rid = (uint64_t)(n_tasks + a);
        int seen = 0;
        for (size_t j = 0; ai.rank != ti.rank && j < f->n && !seen; j++)
            seen = f->node[j].id == rid;
        if (ai.rank == ti.rank || seen)
            continue;
        ck_node *r = node_push(f, cap);
        if (!r)
            return -1;
        *r = (ck_node){.id = rid, .type = CK_RECV, .stream = ti.stream, .kind = TG_COLLECTIVE, .dur_s = 0,
                       .comm_type = -1, .src = rank_of_file(t, ai.rank), .dst = rank_of_file(t, ti.rank), .tag = a};
    }
    ck_node *n = node_push(f, cap);
    if (!n)
        return -1;
    n->id = (uint64_t)i;
    n->type = ti.stream == TG_COMM ? CK_COLL : ti.stream == TG_SEND ? CK_SEND : CK_COMP;
    n->stream = ti.stream;
    n->kind = ti.kind;
    n->dur_s = ti.dur_s;
    n->wire_s = ti.wire_s < ti.dur_s ? ti.wire_s : 0;
    if (n->type == CK_COLL && ti.tag >= 0 && (size_t)ti.tag < nc) {
        n->comm_type = COMM_TYPE_OF[c[ti.tag].op];
        n->comm_bytes = c[ti.tag].bytes;
        n->dims = c[ti.tag].dims;
    }
    if (n->type == CK_SEND) {
        n->src = rank_of_file(t, ti.rank);
        n->dst = dst[i] >= 0 ? rank_of_file(t, (int)dst[i]) : -1;
        n->tag = i;
    }
    for (int k = 0; k < ti.n_after; k++) {
        long a = tg_task_after(g, i, k);
        tg_task_info ai;
        tg_task_of(g, a, &ai);
        if (dep_push(n, ai.rank == ti.rank ? (uint64_t)a : (uint64_t)(n_tasks + a)))
            return -1;
    }
    return 0;
}

int chakra_from_graph(const taskgraph *g, const step_coll *c, size_t nc, int world, const int *file_of_rank,
                      chakra_trace **out, tt_error *err)
{
    long n = tg_tasks(g);
    chakra_trace *t = trace_new(tg_ranks(g), world);
    size_t *cap = t ? calloc((size_t)t->files, sizeof *cap) : NULL;
    long *dst = malloc(sizeof *dst * (size_t)(n + 1));
    int rc = !t || !cap || !dst;
    if (!rc) {
        t->contexts = tg_contexts(g);
        memcpy(t->file_of_rank, file_of_rank, sizeof *file_of_rank * (size_t)world);
        for (long i = 0; i < n; i++)
            dst[i] = -1;
        for (long i = 0; i < n; i++) { /* a send's receiver: the rank of a task that waits on it */
            tg_task_info ti;
            tg_task_of(g, i, &ti);
            for (int k = 0; k < ti.n_after; k++) {
                long a = tg_task_after(g, i, k);
                tg_task_info ai;
                tg_task_of(g, a, &ai);
                if (ai.rank != ti.rank)
                    dst[a] = ti.rank;
            }
        }
    }
    for (long i = 0; !rc && i < n; i++)
        rc = add_task(t, g, c, nc, i, cap, dst);
    free(cap);
    free(dst);
    if (rc) {
        chakra_free(t);
        return tt_error_set(err, TT_EINTERNAL, "out of memory exporting a step of %ld tasks", n);
    }
    *out = t;
    return TT_OK;
}

/* ---- writing ---- */

typedef ChakraProtoMsg__AttributeProto ck_attr;

static void attr_int(ck_attr *a, const char *name, int64_t v)
{
    *a = (ck_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL;
    a->int64_val = v;
}

static void attr_double(ck_attr *a, const char *name, double v)
{
    *a = (ck_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
    a->double_val = v;
}

static void attr_string(ck_attr *a, const char *name, const char *v)
{
    *a = (ck_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    a->string_val = (char *)v;
}

static void attr_bool(ck_attr *a, const char *name, int v)
{
    *a = (ck_attr)CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__INIT;
    a->name = (char *)name;
    a->value_case = CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL;
    a->bool_val = v != 0;
}

/* pg_name of a communicator: its layout dimensions joined by '+'. */
static void pg_name_of(unsigned dims, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int d = 0; d < LAYOUT_DIMS; d++)
        if (dims & LAYOUT_DIM(d))
            n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s", n ? "+" : "", layout_dim_name((layout_dim)d));
}

/* One message after the varint of its length, as Chakra's protolib encodeMessage. */
static int put_message(FILE *f, const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len ? len : 1), head[10];
    if (!buf)
        return -1;
    protobuf_c_message_pack(m, buf);
    size_t h = 0, v = len;
    do {
        head[h++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    int bad = fwrite(head, 1, h, f) != h || fwrite(buf, 1, len, f) != len;
    free(buf);
    return bad ? -1 : 0;
}

static int put_node(FILE *f, const ck_node *n)
{
    static const ChakraProtoMsg__NodeType TYPE[] = {
        CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE,
        CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE, CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE};
    static const char *const NAME[] = {"compute", "collective", "send", "receive"};
    ck_attr a[12], *ap[12];
    size_t na = 0;
    char pg[64], name[96];
    attr_bool(&a[na++], "is_cpu_op", n->stream == TG_HOST);
    attr_string(&a[na++], "ttasim_stream", STREAMS[n->stream]);
    attr_string(&a[na++], "ttasim_kind", KINDS[n->kind]);
    attr_double(&a[na++], "ttasim_duration_s", n->dur_s);
    if (n->wire_s > 0)
        attr_double(&a[na++], "ttasim_wire_s", n->wire_s);
    if (n->comm_type >= 0) {
        pg_name_of(n->dims, pg, sizeof pg);
        attr_int(&a[na++], "comm_type", n->comm_type);
        attr_int(&a[na++], "comm_size", (int64_t)llround(n->comm_bytes));
        attr_string(&a[na++], "pg_name", pg);
    }
    if (n->type == CK_SEND || n->type == CK_RECV) {
        attr_int(&a[na++], "comm_src", n->src);
        attr_int(&a[na++], "comm_dst", n->dst);
        attr_int(&a[na++], "comm_tag", n->tag);
    }
    for (size_t k = 0; k < na; k++)
        ap[k] = &a[k];
    snprintf(name, sizeof name, "%s %llu", NAME[n->type], (unsigned long long)n->id);
    ChakraProtoMsg__Node m = CHAKRA_PROTO_MSG__NODE__INIT;
    m.id = n->id;
    m.name = name;
    m.type = TYPE[n->type];
    m.n_data_deps = n->n_deps;
    m.data_deps = n->deps;
    m.duration_micros = (uint64_t)llround(n->dur_s * 1e6);
    m.n_attr = na;
    m.attr = ap;
    return put_message(f, &m.base);
}

static int write_file(const chakra_trace *t, int k, const char *dir, tt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/ttasim.%d.et", dir, k);
    FILE *f;
    outfile *of;
    int rc = outfile_open(path, "the Chakra trace", &of, &f, err);
    if (rc)
        return rc;
    ck_attr a[2], *ap[2] = {&a[0], &a[1]};
    attr_string(&a[0], "generator", "ttasim");
    attr_int(&a[1], "ttasim_comm_contexts", t->contexts);
    ChakraProtoMsg__GlobalMetadata gm = CHAKRA_PROTO_MSG__GLOBAL_METADATA__INIT;
    gm.version = VERSION;
    gm.n_attr = 2;
    gm.attr = ap;
    int bad = put_message(f, &gm.base);
    for (size_t i = 0; !bad && i < t->file[k].n; i++)
        bad = put_node(f, &t->file[k].node[i]);
    if (bad) {
        outfile_discard(of);
        return tt_error_set(err, TT_EINPUT, "%s: writing failed: %s", path, strerror(errno ? errno : ENOSPC));
    }
    return outfile_commit(of, err);
}

int chakra_write(const chakra_trace *t, const char *dir, tt_error *err)
{
    if (mkdir(dir, 0777) && errno != EEXIST)
        return tt_error_set(err, TT_EINPUT, "%s: cannot create the directory: %s", dir, strerror(errno));
    int rc = TT_OK;
    for (int k = 0; rc == TT_OK && k < t->files; k++)
        rc = write_file(t, k, dir, err);
    if (rc)
        return rc;
    char path[4096];
    snprintf(path, sizeof path, "%s/rank_map.json", dir);
    json_t *map = json_array();
    for (int r = 0; map && r < t->world; r++)
        json_array_append_new(map, json_integer(t->file_of_rank[r]));
    json_t *doc = json_pack("{s:s, s:i, s:s, s:o*}", "format", "chakra", "ranks", t->world, "file",
                            "ttasim.%d.et with %d the rank's entry of file_of_rank", "file_of_rank", map);
    FILE *f;
    outfile *of;
    if (!doc)
        return tt_error_set(err, TT_EINTERNAL, "out of memory writing %s", path);
    if ((rc = outfile_open(path, "the Chakra rank map", &of, &f, err)) == TT_OK) {
        int bad = json_dumpf(doc, f, JSON_COMPACT) != 0 || fputc('\n', f) == EOF;
        if (bad) {
            outfile_discard(of);
            rc = tt_error_set(err, TT_EINPUT, "%s: writing failed", path);
        } else {
            rc = outfile_commit(of, err);
        }
    }
    json_decref(doc);
    return rc;
}

/* ---- reading ---- */

/* An attribute's integer value, of whichever integer type it was written with. */
static int attr_get_int(const ck_attr *a, int64_t *v)
{
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: *v = a->int32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: *v = a->int64_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: *v = a->uint32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
        *v = a->uint64_val > INT64_MAX ? -1 : (int64_t)a->uint64_val;
        return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: *v = a->sint32_val; return 0;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: *v = a->sint64_val; return 0;
    default: return -1;
    }
}

static int find_name(const char *const *names, const char *s)
{
    for (int k = 0; names[k]; k++)
        if (!strcmp(names[k], s))
            return k;
    return -1;
}

/* pg_name as layout dimensions ("data", "tensor+data"); -1 when it is not. */
static long dims_of(const char *s)
{
    unsigned dims = 0;
    char buf[64];
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (char *save = NULL, *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
        int d = -1;
        for (int k = 0; k < LAYOUT_DIMS && d < 0; k++)
            d = !strcmp(tok, layout_dim_name((layout_dim)k)) ? k : -1;
        if (d < 0)
            return -1;
        dims |= LAYOUT_DIM(d);
    }
    return dims ? (long)dims : -1;
}

#define NODE_ERR(...) tt_error_set(err, TT_EINPUT, __VA_ARGS__)

static int node_attr(const char *file, ck_node *n, const ck_attr *a, int *has_pg, tt_error *err)
{
    static const char *const INTS[] = {"comm_type", "comm_size", "num_ops", "tensor_size", "comm_src", "comm_dst",
                                       "comm_tag", NULL};
    unsigned long long id = (unsigned long long)n->id;
    const char *name = a->name ? a->name : "";
    int k = find_name(INTS, name);
    int64_t v;
    if (k >= 0) {
        if (attr_get_int(a, &v) || v < 0)
            return NODE_ERR("%s: node %llu: attribute %s: expected a non-negative integer", file, id, name);
        if (k == 0 && v > CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER)
            return NODE_ERR("%s: node %llu: comm_type %lld: expected a CollectiveCommType, 0 to 9", file, id,
                            (long long)v);
        switch (k) {
        case 0: n->comm_type = (int)v; break;
        case 1: n->comm_bytes = (double)v; break;
        case 2: n->num_ops = (double)v; break;
        case 3: n->tensor_bytes = (double)v; break;
        case 4: n->src = v > CHAKRA_MAX_RANKS ? CHAKRA_MAX_RANKS : (long)v; break;
        case 5: n->dst = v > CHAKRA_MAX_RANKS ? CHAKRA_MAX_RANKS : (long)v; break;
        default: n->tag = v > INT64_MAX / 2 ? INT64_MAX / 2 : (long)v; break;
        }
        return TT_OK;
    }
    int is_str = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL;
    int is_dbl = a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL;
    if (!strcmp(name, "pg_name")) {
        long d = is_str ? dims_of(a->string_val) : -1;
        if (d < 0)
            return NODE_ERR("%s: node %llu: pg_name: expected the layout dimensions of its communicator, "
                            "e.g. \"dp\" or \"tp+dp\" (ttasim maps process groups on $.parallel)",
                            file, id);
        n->dims = (unsigned)d;
        *has_pg = 1;
    } else if (!strcmp(name, "is_cpu_op")) {
        if (a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL)
            return NODE_ERR("%s: node %llu: is_cpu_op: expected a bool", file, id);
        if (a->bool_val && n->stream < 0)
            n->stream = TG_HOST;
    } else if (!strcmp(name, "ttasim_stream") || !strcmp(name, "ttasim_kind")) {
        int stream = name[7] == 's';
        int v2 = is_str ? find_name(stream ? STREAMS : KINDS, a->string_val) : -1;
        if (v2 < 0)
            return NODE_ERR("%s: node %llu: %s: expected one of %s", file, id, name,
                            stream ? "compute, comm, host, send, side" : "kernel, optimizer, collective, host, shared");
        *(stream ? &n->stream : &n->kind) = v2;
    } else if (!strcmp(name, "ttasim_duration_s") || !strcmp(name, "ttasim_wire_s")) {
        if (!is_dbl || !(a->double_val >= 0 && a->double_val < 1e9))
            return NODE_ERR("%s: node %llu: %s: expected seconds, a double from 0 to 1e9", file, id, name);
        *(name[7] == 'd' ? &n->dur_s : &n->wire_s) = a->double_val;
    }
    return TT_OK; /* converters' other attributes (rf_id, op_schema...) say nothing the replay uses */
}

static int node_of(const char *file, const ChakraProtoMsg__Node *m, ck_node *n, tt_error *err)
{
    unsigned long long id = (unsigned long long)m->id;
    n->id = m->id;
    switch (m->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE: n->type = CK_COMP; break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE: n->type = CK_COLL; break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE: n->type = CK_SEND; break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE: n->type = CK_RECV; break;
    default:
        return NODE_ERR("%s: node %llu: type %d: expected COMP_NODE, COMM_COLL_NODE, COMM_SEND_NODE or "
                        "COMM_RECV_NODE (the types ttasim replays)", file, id, (int)m->type);
    }
    int has_pg = 0, rc;
    for (size_t k = 0; k < m->n_attr; k++)
        if ((rc = node_attr(file, n, m->attr[k], &has_pg, err)))
            return rc;
    if (n->dur_s < 0 && m->duration_micros > 0)
        n->dur_s = (double)m->duration_micros * 1e-6;
    if (n->type == CK_COLL && n->dur_s < 0) {
        if (n->comm_type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE &&
            n->comm_type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL &&
            n->comm_type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER &&
            n->comm_type != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER)
            return NODE_ERR("%s: node %llu: comm_type: a collective without duration_micros needs comm_type "
                            "ALL_REDUCE (0), ALL_GATHER (2), ALL_TO_ALL (6) or REDUCE_SCATTER (7) to be priced "
                            "on the platform", file, id);
        if (!has_pg)
            n->dims = LAYOUT_DIM(LAYOUT_DATA);
    }
    if (n->type == CK_SEND && n->dur_s < 0)
        return NODE_ERR("%s: node %llu: duration_micros: a send is replayed by its recorded duration; expected "
                        "one above 0", file, id);
    if ((n->type == CK_SEND || n->type == CK_RECV) && (n->src < 0 || n->dst < 0 || n->tag < 0))
        return NODE_ERR("%s: node %llu: expected comm_src, comm_dst and comm_tag on a send or a receive", file, id);
    if (n->type == CK_RECV)
        n->dur_s = 0; /* a receive ends with its send, whose duration is the transfer's */
    if (m->n_data_deps + m->n_ctrl_deps > (size_t)CHAKRA_MAX_NODES)
        return NODE_ERR("%s: node %llu: more than %ld dependencies", file, id, CHAKRA_MAX_NODES);
    n->n_deps = m->n_data_deps + m->n_ctrl_deps;
    if (n->n_deps && !(n->deps = malloc(sizeof *n->deps * n->n_deps)))
        return tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", file);
    if (m->n_data_deps)
        memcpy(n->deps, m->data_deps, sizeof *n->deps * m->n_data_deps);
    if (m->n_ctrl_deps)
        memcpy(n->deps + m->n_data_deps, m->ctrl_deps, sizeof *n->deps * m->n_ctrl_deps);
    return TT_OK;
}

/* The length before a message (protolib's varint, 32 bits): 1 at the end of the bytes, -1 when cut. */
static int get_length(const uint8_t *b, size_t len, size_t *pos, size_t *out)
{
    uint64_t v = 0;
    if (*pos >= len)
        return 1;
    for (int shift = 0; shift < 35; shift += 7) {
        if (*pos >= len)
            return -1;
        uint8_t c = b[(*pos)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = (size_t)(v & 0xffffffffu);
            return 0;
        }
    }
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return (*x > *y) - (*x < *y);
}

/* Ids unique, every dependency a node of the file. */
static int check_ids(const char *file, const ck_file *f, tt_error *err)
{
    uint64_t *ids = malloc(sizeof *ids * (f->n + 1));
    if (!ids)
        return tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", file);
    for (size_t i = 0; i < f->n; i++)
        ids[i] = f->node[i].id;
    qsort(ids, f->n, sizeof *ids, cmp_u64);
    int rc = TT_OK;
    for (size_t i = 1; rc == TT_OK && i < f->n; i++)
        if (ids[i] == ids[i - 1])
            rc = NODE_ERR("%s: node %llu: id used twice; expected unique node ids", file, (unsigned long long)ids[i]);
    for (size_t i = 0; rc == TT_OK && i < f->n; i++)
        for (size_t k = 0; rc == TT_OK && k < f->node[i].n_deps; k++)
            if (!bsearch(&f->node[i].deps[k], ids, f->n, sizeof *ids, cmp_u64))
                rc = NODE_ERR("%s: node %llu: depends on node %llu, which the file does not have", file,
                              (unsigned long long)f->node[i].id, (unsigned long long)f->node[i].deps[k]);
    free(ids);
    return rc;
}

static int parse_file(const char *name, const uint8_t *b, size_t len, ck_file *f, int *contexts, tt_error *err)
{
    size_t pos = 0, size, cap = 0;
    int rc = get_length(b, len, &pos, &size);
    if (rc || size > len - pos)
        return NODE_ERR("%s: byte 0: expected a Chakra GlobalMetadata message after its varint length%s", name,
                        rc > 0 ? " (the file is empty)" : "");
    ChakraProtoMsg__GlobalMetadata *gm = chakra_proto_msg__global_metadata__unpack(NULL, size, b + pos);
    if (!gm)
        return NODE_ERR("%s: byte 0: expected a Chakra GlobalMetadata message; this is not one", name);
    for (size_t k = 0; k < gm->n_attr; k++) {
        int64_t v;
        if (gm->attr[k]->name && !strcmp(gm->attr[k]->name, "ttasim_comm_contexts")) {
            if (attr_get_int(gm->attr[k], &v) || v < 1 || v > STEP_MAX_CONCURRENT_OPS) {
                chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
                return NODE_ERR("%s: GlobalMetadata: ttasim_comm_contexts: expected an integer from 1 to %d", name,
                                STEP_MAX_CONCURRENT_OPS);
            }
            *contexts = (int)v;
        }
    }
    chakra_proto_msg__global_metadata__free_unpacked(gm, NULL);
    pos += size;
    for (;;) {
        size_t at = pos;
        if ((rc = get_length(b, len, &pos, &size)) > 0 || (rc == 0 && size == 0))
            break; /* protolib's decodeMessage stops at a length of 0 too */
        if (rc < 0 || size > len - pos)
            return NODE_ERR("%s: byte %zu: a message cut short (its length says %zu bytes, %zu remain); expected "
                            "varint-delimited Node messages", name, at, rc < 0 ? 0 : size, len - pos);
        if ((long)f->n >= CHAKRA_MAX_NODES)
            return NODE_ERR("%s: more than %ld nodes", name, CHAKRA_MAX_NODES);
        ChakraProtoMsg__Node *m = chakra_proto_msg__node__unpack(NULL, size, b + pos);
        if (!m)
            return NODE_ERR("%s: byte %zu: expected a Chakra Node message; this is not one", name, at);
        ck_node *n = node_push(f, &cap);
        rc = n ? node_of(name, m, n, err) : tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", name);
        chakra_proto_msg__node__free_unpacked(m, NULL);
        if (rc)
            return rc;
        pos += size;
    }
    return check_ids(name, f, err);
}

int chakra_parse(const char *name, const uint8_t *bytes, size_t len, chakra_trace **out, tt_error *err)
{
    chakra_trace *t = trace_new(1, 1);
    if (!t)
        return tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", name);
    snprintf(t->file[0].name, sizeof t->file[0].name, "%s", "file 0");
    int rc = parse_file(name, bytes, len, &t->file[0], &t->contexts, err);
    if (rc) {
        chakra_free(t);
        return rc;
    }
    *out = t;
    return TT_OK;
}

/* The rank map's files and each rank's; or the PREFIX.K.et files of a trace without one. */
static int read_map(const char *dir, char *prefix, size_t psize, int *files, int **of_rank, int *world,
                    tt_error *err)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank_map.json", dir);
    struct stat st;
    if (stat(path, &st) == 0) {
        char *text;
        size_t len;
        int rc = infile_read(path, INFILE_JSON_MAX_BYTES, &text, &len, err);
        if (rc)
            return rc;
        json_error_t je;
        json_t *doc = json_loadb(text, len, 0, &je), *map = json_object_get(doc, "file_of_rank");
        free(text);
        size_t n = json_array_size(map);
        if (!doc || !n || n > CHAKRA_MAX_RANKS) {
            json_decref(doc);
            return NODE_ERR("%s: expected {\"file_of_rank\": [file of rank 0, ...]} with 1 to %d ranks%s%s", path,
                            CHAKRA_MAX_RANKS, doc ? "" : ": ", doc ? "" : je.text);
        }
        if (!(*of_rank = malloc(sizeof **of_rank * n))) {
            json_decref(doc);
            return tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", path);
        }
        *files = 0;
        for (size_t r = 0; r < n; r++) {
            json_t *v = json_array_get(map, r);
            json_int_t k = json_is_integer(v) ? json_integer_value(v) : -1;
            if (k < 0 || k >= CHAKRA_MAX_FILES) {
                json_decref(doc);
                return NODE_ERR("%s: $.file_of_rank[%zu]: expected a file number from 0 to %d", path, r,
                                CHAKRA_MAX_FILES - 1);
            }
            (*of_rank)[r] = (int)k;
            *files = k + 1 > *files ? (int)k + 1 : *files;
        }
        json_decref(doc);
        *world = (int)n;
        snprintf(prefix, psize, "ttasim");
        return TT_OK;
    }
    DIR *d = opendir(dir);
    if (!d)
        return NODE_ERR("%s: cannot read the Chakra trace directory: %s", dir, strerror(errno));
    int found = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 5 && l - 5 < psize && !strcmp(e->d_name + l - 5, ".0.et")) {
            found++;
            snprintf(prefix, psize, "%.*s", (int)(l - 5), e->d_name);
        }
    }
    closedir(d);
    if (found != 1)
        return NODE_ERR("%s: expected rank_map.json, or one trace PREFIX.0.et (then PREFIX.1.et, ...), found %d "
                        "files ending in .0.et", dir, found);
    for (*files = 0; *files < CHAKRA_MAX_FILES; ++*files) {
        snprintf(path, sizeof path, "%s/%s.%d.et", dir, prefix, *files);
        if (stat(path, &st))
            break;
    }
    if (!(*of_rank = malloc(sizeof **of_rank * (size_t)*files)))
        return tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", dir);
    for (int r = 0; r < *files; r++)
        (*of_rank)[r] = r;
    *world = *files;
    return TT_OK;
}

int chakra_read(const char *dir, chakra_trace **out, tt_error *err)
{
    char prefix[256], path[4096];
    int files = 0, world = 0, *of_rank = NULL;
    int rc = read_map(dir, prefix, sizeof prefix, &files, &of_rank, &world, err);
    chakra_trace *t = rc ? NULL : trace_new(files, world);
    if (!rc && !t)
        rc = tt_error_set(err, TT_EINTERNAL, "out of memory reading %s", dir);
    if (t)
        memcpy(t->file_of_rank, of_rank, sizeof *of_rank * (size_t)world);
    free(of_rank);
    for (int k = 0; !rc && k < files; k++) {
        char *bytes;
        size_t len;
        int contexts = 1;
        snprintf(path, sizeof path, "%s/%s.%d.et", dir, prefix, k);
        if ((rc = infile_read(path, CHAKRA_MAX_FILE_BYTES, &bytes, &len, err)))
            break;
        snprintf(t->file[k].name, sizeof t->file[k].name, "%s.%d.et", prefix, k);
        rc = parse_file(path, (const uint8_t *)bytes, len, &t->file[k], &contexts, err);
        free(bytes);
        t->contexts = k == 0 || contexts > t->contexts ? contexts : t->contexts;
    }
    if (rc) {
        chakra_free(t);
        return rc;
    }
    *out = t;
    return TT_OK;
}

int chakra_world(const chakra_trace *t)
{
    return t->world;
}

/* ---- replay ---- */

static step_coll_op op_of(int comm_type)
{
    switch (comm_type) {
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: return STEP_ALLTOALL;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER: return STEP_ALLGATHER;
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER: return STEP_REDUCE_SCATTER;
    default: return STEP_ALLREDUCE;
    }
}

size_t chakra_collectives(const chakra_trace *t, step_coll *out)
{
    size_t n = 0;
    for (int f = 0; f < t->files; f++)
        for (size_t i = 0; i < t->file[f].n; i++) {
            const ck_node *c = &t->file[f].node[i];
            if (c->type == CK_COLL && c->dur_s < 0) {
                if (out)
                    out[n] = (step_coll){.op = op_of(c->comm_type), .dims = c->dims, .bytes = c->comm_bytes};
                n++;
            }
        }
    return n;
}

typedef struct id_task {
    uint64_t id;
    long task;
} id_task;

static int cmp_id_task(const void *a, const void *b)
{
    return cmp_u64(&((const id_task *)a)->id, &((const id_task *)b)->id);
}

/* Each file's nodes as tasks on its rank; ids[f] sorted by node id. */
static int add_nodes(const chakra_trace *t, const device_model *d, const double *coll_s, taskgraph *g,
                     id_task **ids, long **task, tt_error *err)
{
    static const tg_stream STREAM_OF[] = {TG_COMPUTE, TG_COMM, TG_SEND, TG_COMPUTE};
    size_t priced = 0;
    for (int f = 0; f < t->files; f++) {
        const ck_file *cf = &t->file[f];
        if (!(ids[f] = malloc(sizeof *ids[f] * (cf->n + 1))) || !(task[f] = malloc(sizeof *task[f] * (cf->n + 1))))
            return tt_error_set(err, TT_EINTERNAL, "out of memory replaying a Chakra trace");
        for (size_t i = 0; i < cf->n; i++) {
            const ck_node *n = &cf->node[i];
            double dur = n->dur_s;
            if (dur < 0)
                dur = n->type == CK_COLL ? coll_s[priced++]
                                         : step_kernel_s(n->num_ops, n->tensor_bytes, d->peak_flops,
                                                         d->efficiency[OPCLASS_GEMM], d->mem_Bps);
            tg_stream s = n->stream >= 0 ? (tg_stream)n->stream : STREAM_OF[n->type];
            tg_kind k = n->kind >= 0                                ? (tg_kind)n->kind
                      : n->type != CK_COMP                          ? TG_COLLECTIVE
                      : s == TG_HOST                                ? TG_HOST_WORK
                                                                    : TG_KERNEL;
            if ((task[f][i] = tg_add(g, f, s, k, dur, n->wire_s, -1)) < 0)
                return tt_error_set(err, TT_EINTERNAL, "out of memory replaying a Chakra trace");
            ids[f][i] = (id_task){n->id, task[f][i]};
        }
        qsort(ids[f], cf->n, sizeof *ids[f], cmp_id_task);
    }
    return TT_OK;
}

/* Dependencies, and each receive after its send (by comm_src's file and comm_tag). */
static int add_deps(const chakra_trace *t, taskgraph *g, id_task **ids, long **task, tt_error *err)
{
    for (int f = 0; f < t->files; f++)
        for (size_t i = 0; i < t->file[f].n; i++) {
            const ck_node *n = &t->file[f].node[i];
            for (size_t k = 0; k < n->n_deps; k++) {
                id_task key = {n->deps[k], 0}, *hit = bsearch(&key, ids[f], t->file[f].n, sizeof key, cmp_id_task);
                if (tg_after(g, task[f][i], hit->task))
                    return tt_error_set(err, TT_EINTERNAL, "out of memory replaying a Chakra trace");
            }
            if (n->type != CK_RECV)
                continue;
            int src = n->src < t->world ? t->file_of_rank[n->src] : -1;
            long send = -1;
            for (size_t j = 0; src >= 0 && send < 0 && j < t->file[src].n; j++) {
                const ck_node *s = &t->file[src].node[j];
                if (s->type == CK_SEND && s->tag == n->tag && s->dst < t->world && t->file_of_rank[s->dst] == f)
                    send = task[src][j];
            }
            if (send < 0)
                return NODE_ERR("%s: node %llu: a receive from rank %ld with comm_tag %ld, but %s has no send to "
                                "this rank with that tag", t->file[f].name, (unsigned long long)n->id, n->src,
                                n->tag, src >= 0 ? t->file[src].name : "no file of the rank map");
            if (tg_after(g, task[f][i], send))
                return tt_error_set(err, TT_EINTERNAL, "out of memory replaying a Chakra trace");
        }
    return TT_OK;
}

int chakra_replay(const chakra_trace *t, const device_model *d, const double *coll_s, step_result *out,
                  tt_error *err)
{
    taskgraph *g = tg_create(t->files, t->contexts);
    id_task **ids = calloc((size_t)t->files, sizeof *ids);
    long **task = calloc((size_t)t->files, sizeof *task);
    int rc = !g || !ids || !task ? tt_error_set(err, TT_EINTERNAL, "out of memory replaying a Chakra trace")
                                 : add_nodes(t, d, coll_s, g, ids, task, err);
    if (rc == TT_OK)
        rc = add_deps(t, g, ids, task, err);
    if (rc == TT_OK && (rc = tg_schedule(g, err)) != TT_OK)
        rc = tt_error_prefix(err, "Chakra trace: ");
    if (rc == TT_OK) {
        int last = 0;
        double end = 0;
        for (int f = 0; f < t->files; f++)
            if (tg_rank_end_s(g, f) > end) {
                end = tg_rank_end_s(g, f);
                last = f;
            }
        tg_breakdown br;
        tg_rank_breakdown(g, last, &br);
        out->time_s = end;
        out->compute_s = br.kernel_s;
        out->optimizer_s = br.optimizer_s;
        out->comm_s = br.collective_s;
        out->exposed_comm_s = br.exposed_comm_s;
        out->host_embedding_s = br.host_wait_s;
        out->idle_s = fmax(0.0, end - br.kernel_s - br.optimizer_s);
    }
    for (int f = 0; ids && task && f < t->files; f++) {
        free(ids[f]);
        free(task[f]);
    }
    free(ids);
    free(task);
    tg_free(g);
    return rc;
}
