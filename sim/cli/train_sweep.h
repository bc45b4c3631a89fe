/* train_sweep.h: `ttasim train`'s options, and its sweep over batch sizes
 * that writes a convergence profile (cli-internal). */
#ifndef TT_TRAIN_SWEEP_H
#define TT_TRAIN_SWEEP_H

#include "trainer/dataparallel.h"

#define MAX_SWEEP 64

typedef struct train_cli {
    dp_options dp;
    int dataset;             /* a dp_data_kind: 0 fashion-mnist, 1 teacher, 2 markov */
    int markov_order, markov_successors;
    double markov_floor;
    int markov_set;          /* a --markov-* option was given */
    const char *dataset_name;
    const char *data_dir;
    double lr;               /* < 0: per-optimizer default */
    int scaling;             /* < 0: per-optimizer default */
    long sweep[MAX_SWEEP];
    int nsweep;
    long seeds[MAX_SWEEP];
    int nseeds;
    const char *out;         /* as given: with loss targets, one file per target, ',' between */
    char outs[DP_MAX_TARGETS][512]; /* a sweep's profile files, one per target */
    int nouts;
    int json;
    char cmdline[1024];
} train_cli;

/* Trains every batch of t->sweep with every seed not yet in the profile at
 * t->out (read first, saved after each run so a sweep resumes), then
 * prints the profile and its fit. Loss targets: one profile per target, all
 * from the same runs. TT_EFAIL when no batch reached the
 * target; errors are reported on stderr. */
int train_sweep_run(const train_cli *t, const dp_data *data, int show_progress);

#endif
