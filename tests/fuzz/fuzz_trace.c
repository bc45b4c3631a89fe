/* Workload traces (sim/replay/trace.c). */
#include "sim/replay/trace.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "trace.json", data, size);
    trace t;
    tt_error err = {0};
    if (trace_load(path, &t, &err) == TT_OK)
        trace_free(&t);
    return 0;
}
