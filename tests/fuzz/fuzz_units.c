/* Sizes and units (common/units.c): amounts, bytes, rates, durations, whole numbers and their lists. */
#include <math.h>
#include <stdlib.h>

#include "common/units.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const RATE_WORDS[] = {"Bps", "B/s", "FLOPS", NULL};
    char *text = fuzz_input_text(data, size), buf[32];
    const char *why = NULL;
    double x;
    /* every accepted amount is finite, non-negative and within UNITS_MAX */
    if (units_parse_bytes(text, &x, &why) == 0) {
        if (!(x >= 0 && x <= UNITS_MAX))
            abort();
        units_format_bytes(x, buf, sizeof buf);
    }
    if (units_parse_amount(text, RATE_WORDS, &x, &why) == 0 && !(x >= 0 && x <= UNITS_MAX))
        abort();
    if (units_parse_amount(text, NULL, &x, &why) == 0 && !(x >= 0 && x <= UNITS_MAX))
        abort();
    if (units_parse_seconds(text, &x, &why) == 0 && !(x >= 0 && isfinite(x)))
        abort();
    /* whole numbers: within their bounds, a list no longer than its cap */
    long n, v[4];
    tt_error err = {0};
    if (units_parse_int("fuzz", text, -5, 4096, &n, &err) == TT_OK && !(n >= -5 && n <= 4096))
        abort();
    int k = units_parse_int_list(text, "x,", 1, 4096, v, 4);
    if (k > 4)
        abort();
    for (int i = 0; i < k; i++)
        if (!(v[i] >= 1 && v[i] <= 4096))
            abort();
    free(text);
    return 0;
}
