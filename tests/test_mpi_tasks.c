/* Under 'mpirun -n 3': parallel_run shares its tasks over the ranks (task i
 * on rank i mod 3, each with its own worker processes) and every rank ends
 * with every result; a nested call inside a task stays on its rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/parallel.h"

typedef struct rec {
    long square, rank, inner;
} rec;

static void inner_task(void *ctx, size_t i, void *result)
{
    (void)ctx;
    *(long *)result = (long)i + 1;
}

static void task(void *ctx, size_t i, void *result)
{
    rec *r = result;
    long inner[4];
    tt_error err = {0};
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    r->square = (long)(i * i);
    r->rank = rank;
    if (parallel_run(4, 1, sizeof *inner, inner_task, NULL, ctx, inner, &err) == TT_OK)
        r->inner = inner[0] + inner[1] + inner[2] + inner[3];
}

int main(int argc, char **argv)
{
    tt_error err = {0};
    if (parallel_mpi_start(&argc, &argv, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    int size = 1, bad = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 17 };
    rec r[N];
    for (int jobs = 1; jobs <= 2; jobs++) {
        if (parallel_run(N, jobs, sizeof *r, task, NULL, NULL, r, &err) != TT_OK) {
            fprintf(stderr, "parallel_run: %s\n", err.msg);
            bad = 1;
        }
        for (long i = 0; !bad && i < N; i++)
            if (r[i].square != i * i || r[i].rank != i % size || r[i].inner != 10) {
                fprintf(stderr, "-j %d task %ld: square %ld rank %ld inner %ld (wanted %ld, %ld, 10)\n", jobs, i,
                        r[i].square, r[i].rank, r[i].inner, i * i, i % size);
                bad = 1;
            }
    }
    if (size != 3) {
        fprintf(stderr, "expected 3 MPI ranks, got %d\n", size);
        bad = 1;
    }
    parallel_mpi_finish();
    return bad;
}
