/* The device library (platforms/devices.json, found through TTASIM_DATA_DIR). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platforms/device.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int once;
    const char *path = fuzz_input_file(NULL, "platforms/devices.json", data, size);
    if (!once++) {
        char root[512];
        snprintf(root, sizeof root, "%.*s", (int)(strlen(path) - strlen("/platforms/devices.json")), path);
        setenv("TTASIM_DATA_DIR", root, 1);
    }
    device_table t = {0};
    tt_error err = {0};
    device_table_load_library(&t, &err);
    device_table_free(&t);
    return 0;
}
