/* provenance.h: what a run's results came from, for the records that keep
 * them (a shard document, a results database): this ttasim build, and every
 * file the run read with its size and checksum (common/infile.h). */
#ifndef TT_PROVENANCE_H
#define TT_PROVENANCE_H

#include <jansson.h>
#include <stdint.h>

#include "common/error.h"

#define PROVENANCE_HEX_BYTES 17 /* 16 hex digits and the NUL */

/* A checksum as 16 lower-case hex digits. */
void provenance_hex(uint64_t h, char out[PROVENANCE_HEX_BYTES]);

/* FNV-1a of this ttasim's executable, read once: two builds give two values. */
uint64_t provenance_build(void);

/* The files the run read in one phase (0: before its parallel tasks, 1:
 * during them; infile.h), by path: [{"path", "bytes", "fnv1a64"}]. NULL
 * with err set when one changed while the run read it, or out of memory. */
json_t *provenance_inputs(int phase, tt_error *err);

#endif
