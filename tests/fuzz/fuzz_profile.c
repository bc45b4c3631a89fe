/* Convergence profiles (trainer/profile.c), loaded and fitted. */
#include "tests/fuzz/fuzz_input.h"
#include "trainer/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "profile.json", data, size);
    conv_profile p;
    tt_error err = {0};
    if (profile_load(path, &p, &err) == TT_OK) {
        profile_fit_steps(&p.fit, 1024);
        profile_free(&p);
    }
    return 0;
}
