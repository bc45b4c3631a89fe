#include "common/jsonx.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "common/infile.h"
#include "common/units.h"

int jx_load_file(const char *path, json_t **out, tt_error *err)
{
    *out = NULL;
    char *text;
    size_t have;
    /* Whole file in memory: lets an empty file and a byte-order mark get
     * their own message instead of Jansson's "near end of file". */
    int rc = infile_read(path, INFILE_JSON_MAX_BYTES, &text, &have, err);
    if (rc)
        return rc;
    if (have == 0) {
        free(text);
        return tt_error_set(err, TT_EINPUT, "%s: the file is empty; expected a JSON document", path);
    }
    /* RFC 8259 section 8.1: a parser may ignore a UTF-8 byte-order mark */
    size_t skip = have >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0;
    json_error_t je;
    *out = json_loadb(text + skip, have - skip, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!*out && json_error_code(&je) == json_error_out_of_memory)
        return tt_error_set(err, TT_EINPUT, "%s: out of memory parsing its %zu bytes; free some memory or give a "
                            "smaller file", path, have);
    if (!*out)
        return tt_error_set(err, TT_EINPUT,
                            "%s:%d:%d: invalid JSON: %s; fix the syntax at that position",
                            path, je.line, je.column, je.text);
    return TT_OK;
}

int jx_root(jx_obj *o, const char *file, json_t *root, tt_error *err)
{
    o->file = file;
    o->obj = root;
    o->err = err;
    snprintf(o->path, sizeof o->path, "$");
    if (!json_is_object(root))
        return tt_error_set(err, TT_EINPUT, "%s: $: expected a JSON object at the top level", file);
    return TT_OK;
}

/* Edit distance behind jx_closest's suggestions. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    int d[64][64];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            int m = sub < del ? sub : del;
            d[i][j] = m < ins ? m : ins;
        }
    return d[la][lb];
}

const char *jx_closest(const char *word, const char *const *candidates)
{
    const char *best = NULL;
    int best_d = 1 << 30;
    for (int i = 0; candidates[i]; i++) {
        int dd = edit_distance(word, candidates[i]);
        if (dd < best_d) {
            best_d = dd;
            best = candidates[i];
        }
    }
    /* Close means at most a third of the word changed (and at least 2 edits allowed). */
    int limit = (int)strlen(word) / 3;
    if (limit < 2)
        limit = 2;
    return best_d <= limit ? best : NULL;
}

/* For an unknown word: the valid ones as a list (each between `quote`s) and,
 * when one is close, a " (did you mean ...?)" hint (else ""). */
static void describe_choices(const char *word, const char *const *choices, const char *quote, char *list,
                             size_t list_bytes, char *hint, size_t hint_bytes)
{
    list[0] = '\0';
    for (int i = 0; choices[i]; i++) {
        size_t len = strlen(list);
        snprintf(list + len, list_bytes - len, "%s%s%s%s", i ? ", " : "", quote, choices[i], quote);
    }
    const char *near = jx_closest(word, choices);
    hint[0] = '\0';
    if (near)
        snprintf(hint, hint_bytes, " (did you mean \"%s\"?)", near);
}

int jx_check_keys(const jx_obj *o, const char *const *allowed)
{
    const char *key;
    json_t *v;
    json_object_foreach(o->obj, key, v) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++)
            if (strcmp(key, allowed[i]) == 0)
                ok = 1;
        if (ok)
            continue;
        char list[768], hint[160];
        describe_choices(key, allowed, "", list, sizeof list, hint, sizeof hint);
        return tt_error_set(o->err, TT_EINPUT, "%s: %s: unknown key \"%s\"%s; valid keys here: %s",
                            o->file, o->path, key, hint, list);
    }
    return TT_OK;
}

int jx_has(const jx_obj *o, const char *key)
{
    return o->obj && json_object_get(o->obj, key) != NULL;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE: return "true";
    case JSON_FALSE: return "false";
    default: return "null";
    }
}

/* Finds key; reports a missing required key. Returns 1 found, 0 absent, <0 error. */
static int get(const jx_obj *o, const char *key, int required, json_t **v)
{
    *v = o->obj ? json_object_get(o->obj, key) : NULL;
    if (*v)
        return 1;
    if (required) {
        tt_error_set(o->err, TT_EINPUT, "%s: %s: missing required key \"%s\"", o->file, o->path, key);
        return -1;
    }
    return 0;
}

static void found_text(const json_t *v, char *buf, size_t n)
{
    char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    if (s && strlen(s) > 60)
        strcpy(s + 57, "...");
    snprintf(buf, n, "%s", s ? s : "?");
    free(s);
}

static int type_error(const jx_obj *o, const char *key, const json_t *v, const char *expected)
{
    char found[80];
    found_text(v, found, sizeof found);
    return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: expected %s, found %s %s",
                        o->file, o->path, key, expected, type_name(v), found);
}

static int range_error(const jx_obj *o, const char *key, double lo, double hi, double x)
{
    return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: expected a value in [%g, %g], found %g",
                        o->file, o->path, key, lo, hi, x);
}

/* A nonzero number below the smallest normal double (or a duration below a
 * femtosecond) means nothing here, and SimGrid's parser refuses it. */
static int too_small(const jx_obj *o, const char *key, double x, double floor)
{
    return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: expected 0 or a value of at least %g, found %g",
                        o->file, o->path, key, floor, x);
}

int jx_child(const jx_obj *o, const char *key, int required, jx_obj *child)
{
    json_t *v;
    child->file = o->file;
    child->err = o->err;
    child->obj = NULL;
    snprintf(child->path, sizeof child->path, "%s.%s", o->path, key);
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_object(v))
        return type_error(o, key, v, "an object");
    child->obj = v;
    return TT_OK;
}

int jx_number(const jx_obj *o, const char *key, int required, double lo, double hi, double *out)
{
    json_t *v;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_number(v))
        return type_error(o, key, v, "a number");
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return range_error(o, key, lo, hi, x);
    if (x != 0 && fabs(x) < DBL_MIN)
        return too_small(o, key, x, DBL_MIN);
    *out = x;
    return TT_OK;
}

int jx_int(const jx_obj *o, const char *key, int required, long lo, long hi, long *out)
{
    json_t *v;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_integer(v))
        return type_error(o, key, v, "an integer");
    long x = (long)json_integer_value(v);
    if (x < lo || x > hi)
        return range_error(o, key, (double)lo, (double)hi, (double)x);
    *out = x;
    return TT_OK;
}

int jx_bool(const jx_obj *o, const char *key, int required, int *out)
{
    json_t *v;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_boolean(v))
        return type_error(o, key, v, "true or false");
    *out = json_is_true(v);
    return TT_OK;
}

int jx_string(const jx_obj *o, const char *key, int required, const char **out)
{
    json_t *v;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_string(v))
        return type_error(o, key, v, "a string");
    *out = json_string_value(v);
    return TT_OK;
}

int jx_enum(const jx_obj *o, const char *key, int required, const char *const *choices, int *out)
{
    const char *s = NULL;
    int rc = jx_string(o, key, required, &s);
    if (rc || !s)
        return rc;
    for (int i = 0; choices[i]; i++)
        if (strcmp(s, choices[i]) == 0) {
            *out = i;
            return TT_OK;
        }
    char list[512], hint[160];
    describe_choices(s, choices, "\"", list, sizeof list, hint, sizeof hint);
    return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: expected one of %s, found \"%s\"%s",
                        o->file, o->path, key, list, s, hint);
}

typedef int (*parse_fn)(const char *, double *, const char **);

static int parse_rate(const char *t, double *x, const char **why)
{
    static const char *const words[] = {"Bps", "B/s", NULL};
    return units_parse_amount(t, words, x, why);
}

static int quantity(const jx_obj *o, const char *key, int required, double lo, double hi,
                    double *out, parse_fn parse, const char *what)
{
    json_t *v;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    double x;
    if (json_is_number(v)) {
        x = json_number_value(v);
    } else if (json_is_string(v)) {
        const char *why = NULL;
        if (parse(json_string_value(v), &x, &why) != 0)
            return tt_error_set(o->err, TT_EINPUT, "%s: %s.%s: expected %s, found \"%s\": %s",
                                o->file, o->path, key, what, json_string_value(v), why);
    } else {
        return type_error(o, key, v, what);
    }
    if (!(x >= lo && x <= hi))
        return range_error(o, key, lo, hi, x);
    double floor = parse == units_parse_seconds ? UNITS_MIN_S : DBL_MIN;
    if (x != 0 && fabs(x) < floor)
        return too_small(o, key, x, floor);
    *out = x;
    return TT_OK;
}

int jx_bytes(const jx_obj *o, const char *key, int required, double lo, double hi, double *out)
{
    return quantity(o, key, required, lo, hi, out, units_parse_bytes,
                    "a size in bytes (a number or a string such as \"100M\" or \"64Ki\")");
}

int jx_rate(const jx_obj *o, const char *key, int required, double lo, double hi, double *out_Bps)
{
    return quantity(o, key, required, lo, hi, out_Bps, parse_rate,
                    "bytes per second (a number or a string such as \"12.5G\")");
}

int jx_seconds(const jx_obj *o, const char *key, int required, double lo, double hi, double *out_s)
{
    return quantity(o, key, required, lo, hi, out_s, units_parse_seconds,
                    "seconds (a number or a string such as \"5us\")");
}

int jx_array(const jx_obj *o, const char *key, int required, size_t *n)
{
    json_t *v;
    *n = 0;
    int r = get(o, key, required, &v);
    if (r <= 0)
        return r < 0 ? TT_EINPUT : TT_OK;
    if (!json_is_array(v))
        return type_error(o, key, v, "an array");
    *n = json_array_size(v);
    return TT_OK;
}

int jx_elem(const jx_obj *o, const char *key, size_t i, jx_obj *child)
{
    json_t *a = json_object_get(o->obj, key);
    json_t *v = json_array_get(a, i);
    child->file = o->file;
    child->err = o->err;
    child->obj = NULL;
    snprintf(child->path, sizeof child->path, "%s.%s[%zu]", o->path, key, i);
    if (!json_is_object(v)) {
        char k[96];
        snprintf(k, sizeof k, "%s[%zu]", key, i);
        return v ? type_error(o, k, v, "an object")
                 : tt_error_set(o->err, TT_EINPUT, "%s: %s: missing element", o->file, child->path);
    }
    child->obj = v;
    return TT_OK;
}

int jx_elem_bytes(const jx_obj *o, const char *key, size_t i, double lo, double hi, double *out)
{
    /* Reuse the member reader on a one-key view of the element. */
    json_t *a = json_object_get(o->obj, key);
    json_t *v = json_array_get(a, i);
    char k[96];
    snprintf(k, sizeof k, "%s[%zu]", key, i);
    json_t *tmp = json_object();
    json_object_set(tmp, k, v);
    jx_obj view = *o;
    view.obj = tmp;
    int rc = jx_bytes(&view, k, 1, lo, hi, out);
    json_decref(tmp);
    return rc;
}

json_t *jx_real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

void jx_merge(json_t *dst, json_t *src)
{
    const char *key;
    json_t *v;
    json_object_foreach(src, key, v) {
        json_t *old = json_object_get(dst, key);
        if (json_is_object(old) && json_is_object(v))
            jx_merge(old, v);
        else
            json_object_set_new(dst, key, json_deep_copy(v));
    }
}
