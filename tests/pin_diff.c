/* pin_diff: the regression net of the shipped scenarios' predictions.
 *   pin_diff --strip RUN.json PIN.json   writes `ttasim run --json` output as a pin
 *   pin_diff PIN.json RUN.json SCENARIO  compares: every number within a relative
 *                                        1e-6, every other value equal
 * Keys that name files (scenario_file, source) are left out of pins: they
 * depend on where the tree is, not on the prediction. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define PIN_RTOL 1e-6

static int volatile_key(const char *k)
{
    return strcmp(k, "scenario_file") == 0 || strcmp(k, "source") == 0;
}

static void strip(json_t *v)
{
    if (json_is_object(v)) {
        const char *k;
        json_t *x;
        void *tmp;
        json_object_foreach_safe(v, tmp, k, x) {
            if (volatile_key(k))
                json_object_del(v, k);
            else
                strip(x);
        }
    } else if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++)
            strip(json_array_get(v, i));
    }
}

static int differ(const char *scenario, const char *path, const char *old, const char *new)
{
    printf("%s: %s: pinned %s, now %s\n", scenario, path, old, new);
    return 1;
}

/* Counts the differences under path, printing each. */
static int compare(const char *scenario, const char *path, json_t *pin, json_t *now)
{
    char a[64], b[64], sub[1024];
    if (json_is_number(pin) && json_is_number(now)) {
        double x = json_number_value(pin), y = json_number_value(now);
        if (x == y || fabs(x - y) <= PIN_RTOL * fmax(fabs(x), fabs(y)))
            return 0;
        snprintf(a, sizeof a, "%.12g", x);
        snprintf(b, sizeof b, "%.12g (relative change %.3g)", y, (y - x) / (x != 0 ? fabs(x) : 1));
        return differ(scenario, path, a, b);
    }
    if (json_typeof(pin) != json_typeof(now) && !(json_is_boolean(pin) && json_is_boolean(now)))
        return differ(scenario, path, "a value of another type", "this one");
    if (json_is_object(pin)) {
        int n = 0;
        const char *k;
        json_t *x;
        json_object_foreach(pin, k, x) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            json_t *y = json_object_get(now, k);
            n += y ? compare(scenario, sub, x, y) : differ(scenario, sub, "present", "missing");
        }
        json_object_foreach(now, k, x) {
            snprintf(sub, sizeof sub, "%s.%s", path, k);
            n += !volatile_key(k) && !json_object_get(pin, k) ? differ(scenario, sub, "absent", "present") : 0;
        }
        return n;
    }
    if (json_is_array(pin)) {
        if (json_array_size(pin) != json_array_size(now)) {
            snprintf(a, sizeof a, "%zu elements", json_array_size(pin));
            snprintf(b, sizeof b, "%zu", json_array_size(now));
            return differ(scenario, path, a, b);
        }
        int n = 0;
        for (size_t i = 0; i < json_array_size(pin); i++) {
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            n += compare(scenario, sub, json_array_get(pin, i), json_array_get(now, i));
        }
        return n;
    }
    if (json_equal(pin, now))
        return 0;
    char *x = json_dumps(pin, JSON_ENCODE_ANY), *y = json_dumps(now, JSON_ENCODE_ANY);
    differ(scenario, path, x ? x : "?", y ? y : "?");
    free(x);
    free(y);
    return 1;
}

static json_t *load(const char *path)
{
    json_error_t e;
    json_t *v = json_load_file(path, 0, &e);
    if (!v)
        fprintf(stderr, "pin_diff: %s:%d:%d: %s\n", path, e.line, e.column, e.text);
    return v;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--strip") == 0) {
        json_t *v = load(argv[2]);
        if (!v)
            return 2;
        strip(v);
        int rc = json_dump_file(v, argv[3], JSON_INDENT(2) | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
        json_decref(v);
        return rc ? 2 : 0;
    }
    if (argc != 4) {
        fprintf(stderr, "usage: pin_diff --strip RUN.json PIN.json | pin_diff PIN.json RUN.json SCENARIO\n");
        return 2;
    }
    json_t *pin = load(argv[1]), *now = load(argv[2]);
    int n = pin && now ? compare(argv[3], "$", pin, now) : -1;
    json_decref(pin);
    json_decref(now);
    return n < 0 ? 2 : n > 0;
}
