/* Scenario files (sim/replay/scenario.c) and their expect paths
 * (sim/report/expect.c), checked as run and check do when one loads. */
#include "sim/replay/scenario.h"
#include "sim/report/expect.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "scenario.json", data, size);
    scenario sc;
    tt_error err = {0};
    if (scenario_load(path, &sc, &err) == TT_OK) {
        expect_validate(&sc, &err);
        scenario_free(&sc);
    }
    return 0;
}
