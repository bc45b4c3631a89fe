/* bench_scale.h: `ttasim bench sim --scale`, the scale issue's cases with wall time and peak memory. */
#ifndef TT_BENCH_SCALE_H
#define TT_BENCH_SCALE_H

/* Prints a table (or JSON) of every case (only: those whose name contains
 * it; NULL: all); returns an exit code (1: a goal missed). */
int bench_scale_run(int as_json, const char *only);

#endif
