/* fuzz_input.h: what the libFuzzer targets share (tests/fuzz/README.md). */
#ifndef TT_FUZZ_INPUT_H
#define TT_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

/* The parsers read files: writes the input to this process's scratch file
 * (under dir, created on first use, named name) and returns its path. */
const char *fuzz_input_file(const char *dir_or_null, const char *name, const uint8_t *data,
                            size_t size);

/* The input as a NUL-terminated string (malloc'ed; the caller frees). */
char *fuzz_input_text(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
