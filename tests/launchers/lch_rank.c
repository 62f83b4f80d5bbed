/*
 * tests/launchers/lch_rank.c — a rank program for the process-manager tests (check_launchers.sh):
 * started by srun, mpirun.openmpi or mpiexec.hydra, not by hintrun.
 *   lch_rank world          one world: size and rank from hint, checked by an allreduce of ranks;
 *                           rank 0 prints "world P=<size> sum=<sum>" and the job id
 *   lch_rank abort R        rank R calls hint_abort(7) once all are in; the others wait forever in
 *                           a receive that no one sends, so only the launcher can end them
 *   lch_rank kill R         the same, but rank R dies of SIGKILL
 * Exit status 0 when the world is whole; 2 when a check fails.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != HINT_SUCCESS) {                                                                 \
            fprintf(stderr, "lch_rank: %s failed: %d\n", #call, rc_);                              \
            exit(2);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--help") == 0) {
        printf("usage: lch_rank world | abort RANK | kill RANK  (under srun, mpirun, mpiexec)\n");
        return 0;
    }
    const char *mode = argc > 1 ? argv[1] : "world";
    int victim = argc > 2 ? atoi(argv[2]) : 1, rank, size;
    CHECK(hint_init(&argc, &argv));
    CHECK(hint_group_rank(HINT_WORLD, &rank));
    CHECK(hint_group_size(HINT_WORLD, &size));
    int sum = 0;
    CHECK(hint_allreduce(&rank, &sum, 1, HINT_INT, HINT_SUM, HINT_WORLD));
    if (rank == 0) {
        printf("world P=%d sum=%d\njobid=%s\n", size, sum, getenv("HINT_JOBID") ? getenv("HINT_JOBID") : "none");
        fflush(stdout);
    }
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "lch_rank: rank %d: sum of ranks %d, not %d\n", rank, sum, size * (size - 1) / 2);
        return 2;
    }
    if (strcmp(mode, "abort") == 0 || strcmp(mode, "kill") == 0) {
        if (rank == victim) {
            if (strcmp(mode, "abort") == 0)
                hint_abort(7);
            raise(SIGKILL);
        }
        int x;
        CHECK(hint_recv(&x, 1, HINT_INT, HINT_ANY_SOURCE, 99, HINT_WORLD, NULL));
        return 2; /* never reached: nobody sends */
    }
    CHECK(hint_finalize());
    return 0;
}
