/* Platform files (platforms/platform_json.c): the node, its links and routes,
 * the fabric's shape; the XML export is left to the engine's tests. */
#include "platforms/platform.h"
#include "tests/fuzz/fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "platform.json", data, size);
    tt_error err = {0};
    platform *p = platform_load(path, NULL, &err);
    if (p)
        platform_free(p);
    return 0;
}
