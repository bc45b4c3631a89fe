/* Workload traces (sim/replay/workload.c). */
#include "sim/replay/workload.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "trace.json", data, size);
    workload w;
    tt_error err = {0};
    if (workload_load(path, &w, &err) == TT_OK)
        workload_free(&w);
    return 0;
}
