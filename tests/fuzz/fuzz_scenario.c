/* Scenario files (sim/replay/scenario.c). */
#include "sim/replay/scenario.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "scenario.json", data, size);
    scenario sc;
    tt_error err = {0};
    if (scenario_load(path, &sc, &err) == TT_OK)
        scenario_free(&sc);
    return 0;
}
