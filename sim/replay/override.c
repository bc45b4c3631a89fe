#include "sim/replay/override.h"

#include <stdlib.h>
#include <string.h>

int override_parse(const char *arg, char **path, json_t **value, tt_error *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq || eq == arg)
        return tt_error_set(err, TT_EINPUT, "--set %s: expected PATH=VALUE (e.g. --set "
                            "platform.fabric.oversubscription=2)", arg);
    json_error_t je;
    *value = json_loads(eq + 1, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &je);
    if (!*value)
        *value = json_string(eq + 1);
    *path = strndup(arg, (size_t)(eq - arg));
    return *path && *value ? TT_OK : tt_error_set(err, TT_EINTERNAL, "out of memory");
}

/* One path segment "key" or "key[3]" (the index part may repeat). */
static int step_into(json_t **node, char *seg, int last, json_t *value, const char *what, tt_error *err)
{
    char *br = strchr(seg, '[');
    if (br)
        *br = '\0';
    if (*seg) {
        if (!json_is_object(*node))
            return tt_error_set(err, TT_EINPUT, "%s: \"%s\" is inside a value that is not an object; "
                                "check the path against scenarios/README.md", what, seg);
        json_t *next = json_object_get(*node, seg);
        if (last && !br)
            return json_object_set(*node, seg, value) ? tt_error_set(err, TT_EINTERNAL, "out of memory") : TT_OK;
        if (!next) {
            next = json_object();
            json_object_set_new(*node, seg, next);
        }
        *node = next;
    }
    while (br) {
        char *end;
        long i = strtol(br + 1, &end, 10);
        if (*end != ']' || i < 0)
            return tt_error_set(err, TT_EINPUT, "%s: expected [INDEX] after \"%s\"", what, seg);
        if (!json_is_array(*node) || (size_t)i >= json_array_size(*node))
            return tt_error_set(err, TT_EINPUT, "%s: \"%s\" has no element [%ld] in the scenario", what, seg, i);
        br = end[1] == '[' ? end + 1 : NULL;
        if (end[1] != '\0' && !br)
            return tt_error_set(err, TT_EINPUT, "%s: unexpected \"%s\" after [%ld]", what, end + 1, i);
        if (last && !br)
            return json_array_set(*node, (size_t)i, value) ? tt_error_set(err, TT_EINTERNAL, "out of memory")
                                                           : TT_OK;
        *node = json_array_get(*node, (size_t)i);
    }
    return TT_OK;
}

int override_set(json_t *doc, const char *path, json_t *value, const char *what, tt_error *err)
{
    char *buf = strdup(path);
    if (!buf)
        return tt_error_set(err, TT_EINTERNAL, "out of memory");
    json_t *node = doc;
    int rc = TT_OK;
    char *seg = buf;
    while (rc == TT_OK && seg) {
        char *dot = strchr(seg, '.');
        if (dot)
            *dot = '\0';
        if (*seg == '\0')
            rc = tt_error_set(err, TT_EINPUT, "%s: empty key in the path \"%s\"", what, path);
        else
            rc = step_into(&node, seg, dot == NULL, value, what, err);
        seg = dot ? dot + 1 : NULL;
    }
    free(buf);
    return rc;
}
