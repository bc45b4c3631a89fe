/* infile.h: input files are data. Every file an input names is opened here
 * and checked for what it must be: a regular file (not a FIFO, a device or a
 * directory) within a size limit, read whole. Each file read is remembered
 * for the whole run, parallel workers included (device, inode, real path,
 * size and a checksum of its bytes): an output that would replace one is
 * refused (outfile.h), and a shard names what its run read (sim/cli/shard.h). */
#ifndef TT_INFILE_H
#define TT_INFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

/* The largest JSON input (scenario, platform, trace, profile, devices,
 * shard): 500 times the largest shipped trace; Jansson's tree of it takes
 * about ten times as much memory. */
#define INFILE_JSON_MAX_BYTES (64u << 20)
/* The largest input of any kind (a user's SimGrid XML). */
#define INFILE_MAX_BYTES (1u << 30)

/* Reads the regular file at path whole (at most max_bytes) into a malloc'd,
 * NUL-terminated *text of *len bytes, and remembers it. Errors (TT_EINPUT)
 * name the file and what it is instead ("a character device", "a FIFO"). */
int infile_read(const char *path, size_t max_bytes, char **text, size_t *len, tt_error *err);

/* The same, for readers that do their own reading (a gzip stream): opens
 * path, checks that it is a regular file of at most max_bytes and returns
 * the descriptor (-1 on error); the file is remembered by its identity and
 * size, without a checksum. */
int infile_open(const char *path, size_t max_bytes, tt_error *err);

/* FNV-1a, 64 bits: the checksum of remembered files and of shards. Start
 * with h = INFILE_FNV_START; a change of any one byte changes the result. */
#define INFILE_FNV_START 1469598103934665603ULL
uint64_t infile_fnv(uint64_t h, const void *bytes, size_t n);

/* A file this run read. phase: 0 before the run's parallel tasks started
 * (infile_next_phase), then 1. */
typedef struct infile_entry {
    dev_t dev;
    ino_t ino;
    long long bytes;
    uint64_t fnv;     /* of the last bytes read; 0 for infile_open's files */
    int phase;
    int changed;      /* read again with other bytes during the run */
    const char *path; /* real path (truncated past 511 bytes) */
} infile_entry;

/* The files read so far, in the order they were first read; *n their count. */
size_t infile_count(void);
int infile_get(size_t i, infile_entry *out);

/* Whether the file with this identity was read; *path its real path. */
int infile_was_read(dev_t dev, ino_t ino, const char **path);

/* Makes the record of files shared by processes forked from now on (before
 * parallel workers start), and starts phase 1 once. */
int infile_share(tt_error *err);
void infile_next_phase(void);

#endif
