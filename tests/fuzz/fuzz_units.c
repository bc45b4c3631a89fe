/* Sizes and units (common/units.c): amounts, bytes, rates, durations. */
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
    free(text);
    return 0;
}
