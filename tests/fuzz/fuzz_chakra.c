/* Chakra execution traces (sim/replay/chakra.c): one rank's file parsed, then
 * replayed with every collective priced at 1 ms (the replay's dependency and
 * send/receive checks run on what the parser accepted). */
#include <stdlib.h>
#include <string.h>

#include "sim/replay/chakra.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    chakra_trace *t;
    tt_error err = {0};
    if (chakra_parse("fuzz.0.et", data, size, &t, &err) != TT_OK)
        return 0;
    size_t n = chakra_collectives(t, NULL);
    double *coll_s = calloc(n + 1, sizeof *coll_s);
    device_model d;
    memset(&d, 0, sizeof d);
    d.peak_flops = 1e14;
    d.mem_Bps = 1e12;
    for (int k = 0; k < OPCLASS_COUNT; k++)
        d.efficiency[k] = 0.5;
    for (size_t i = 0; coll_s && i < n; i++)
        coll_s[i] = 1e-3;
    step_result r;
    memset(&r, 0, sizeof r);
    if (coll_s)
        chakra_replay(t, &d, coll_s, &r, &err);
    free(coll_s);
    chakra_free(t);
    return 0;
}
