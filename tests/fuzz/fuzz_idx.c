/* IDX files (trainer/fmnist.c), gzipped or plain, as images and as labels. */
#include <stdlib.h>

#include "tests/fuzz/fuzz_input.h"
#include "trainer/fmnist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_input_file(NULL, "data-idx-ubyte.gz", data, size);
    static const unsigned MAGIC[] = {0x803, 0x801};
    for (int i = 0; i < 2; i++) {
        int dims[3];
        unsigned char *bytes = NULL;
        tt_error err = {0};
        if (idx_read(path, MAGIC[i], dims, &bytes, &err) == TT_OK)
            free(bytes);
    }
    return 0;
}
