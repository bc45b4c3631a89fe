/* jsonx.h: strict reading of JSON input files (scenarios, platforms, profiles).
 * Every error names the file, the JSON path ($.platform.nodes) or line:column,
 * what was expected and what was found; unknown keys get a "did you mean". */
#ifndef TT_JSONX_H
#define TT_JSONX_H

#include <jansson.h>

#include "common/error.h"

#define JX_PATH_BYTES 256

/* A cursor on one JSON object inside a file. */
typedef struct jx_obj {
    const char *file;
    json_t *obj;
    char path[JX_PATH_BYTES];
    tt_error *err;
} jx_obj;

/* Loads a file; a syntax error reports file:line:column and Jansson's reason,
 * an empty or unreadable file (a directory) says so; a UTF-8 BOM is skipped. */
int jx_load_file(const char *path, json_t **out, tt_error *err);

/* Makes a cursor on the root, which must be an object. */
int jx_root(jx_obj *o, const char *file, json_t *root, tt_error *err);

/* Rejects keys not in allowed (NULL-terminated), suggesting the closest. */
int jx_check_keys(const jx_obj *o, const char *const *allowed);

int jx_has(const jx_obj *o, const char *key);

/* A member object; absent and not required gives child->obj == NULL. */
int jx_child(const jx_obj *o, const char *key, int required, jx_obj *child);

/* Scalars. Absent and not required leaves *out unchanged (set the default first). */
int jx_number(const jx_obj *o, const char *key, int required, double lo, double hi, double *out);
int jx_int(const jx_obj *o, const char *key, int required, long lo, long hi, long *out);
int jx_bool(const jx_obj *o, const char *key, int required, int *out);
int jx_string(const jx_obj *o, const char *key, int required, const char **out);
/* One of choices (NULL-terminated); *out is the index. */
int jx_enum(const jx_obj *o, const char *key, int required, const char *const *choices, int *out);
/* A number, or a string with K/M/G or Ki/Mi/Gi suffix (and optional unit word "B"). */
int jx_bytes(const jx_obj *o, const char *key, int required, double lo, double hi, double *out);
/* Like jx_bytes, for rates ("12.5G", "100Gbps" is not accepted: bytes per second only). */
int jx_rate(const jx_obj *o, const char *key, int required, double lo, double hi, double *out_Bps);
/* A number of seconds, or a string with s/ms/us/ns. */
int jx_seconds(const jx_obj *o, const char *key, int required, double lo, double hi, double *out_s);

/* Arrays: *n = length (0 when absent and not required). */
int jx_array(const jx_obj *o, const char *key, int required, size_t *n);
/* Element i of array key, which must be an object. */
int jx_elem(const jx_obj *o, const char *key, size_t i, jx_obj *child);
/* Element i of array key as a number, or a size string ("64K"). */
int jx_elem_bytes(const jx_obj *o, const char *key, size_t i, double lo, double hi, double *out);

/* Merges src over dst: members of two objects merge key by key, any other
 * value of src replaces dst's (a partial definition over a built-in one). */
void jx_merge(json_t *dst, json_t *src);

/* A number for output, or null when it is not finite (JSON has no NaN or inf). */
json_t *jx_real_or_null(double x);

/* The closest of candidates to word, or NULL when none is close. */
const char *jx_closest(const char *word, const char *const *candidates);

#endif
