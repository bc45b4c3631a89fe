/* bench_sim.h: the `sim` target of `ttasim bench` (speed of the collective executor). */
#ifndef TT_BENCH_SIM_H
#define TT_BENCH_SIM_H

#include <stdio.h>

/* argv[0] is "sim"; prints a table or JSON; returns an exit code (1: a goal missed). */
int bench_sim_main(int argc, char **argv);
void bench_sim_help(FILE *out);

#endif
