/*
 * tests/tune/tune_replay.c — runs one call of each OP at each SIZE, as hint-tune measures it
 * (bytes of one rank's block; of the whole message for bcast, reduce, allreduce), and prints
 * what the selection ran: "OP SIZE ALGORITHM status" on rank 0.
 *
 *   hintrun -n P [-x HINT_TUNING_FILE=F] tune_replay OP SIZE [OP SIZE]...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

static int call(const char *op, size_t b, char *s, char *r, size_t *counts, size_t *displs, int P)
{
    for (int i = 0; i < P; i++) {
        counts[i] = b;
        displs[i] = b * (size_t)i;
    }
    hint_group w = HINT_WORLD;
    if (!strcmp(op, "barrier")) return hint_barrier(w);
    if (!strcmp(op, "bcast")) return hint_bcast(s, b, HINT_BYTE, 0, w);
    if (!strcmp(op, "reduce")) return hint_reduce(s, r, b / 8, HINT_DOUBLE, HINT_SUM, 0, w);
    if (!strcmp(op, "allreduce")) return hint_allreduce(s, r, b / 8, HINT_DOUBLE, HINT_SUM, w);
    if (!strcmp(op, "reduce_scatter_block"))
        return hint_reduce_scatter_block(s, r, b / 8, HINT_DOUBLE, HINT_SUM, w);
    if (!strcmp(op, "gather")) return hint_gather(s, b, HINT_BYTE, r, b, HINT_BYTE, 0, w);
    if (!strcmp(op, "scatter")) return hint_scatter(s, b, HINT_BYTE, r, b, HINT_BYTE, 0, w);
    if (!strcmp(op, "allgather")) return hint_allgather(s, b, HINT_BYTE, r, b, HINT_BYTE, w);
    if (!strcmp(op, "alltoall")) return hint_alltoall(s, b, HINT_BYTE, r, b, HINT_BYTE, w);
    if (!strcmp(op, "allgatherv")) return hint_allgatherv(s, b, HINT_BYTE, r, counts, displs, HINT_BYTE, w);
    if (!strcmp(op, "alltoallv"))
        return hint_alltoallv(s, counts, displs, HINT_BYTE, r, counts, displs, HINT_BYTE, w);
    fprintf(stderr, "tune_replay: unknown operation %s\n", op);
    exit(2);
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc % 2 == 0) {
        fprintf(stderr, "usage: tune_replay OP SIZE [OP SIZE]...\n");
        return 2;
    }
    if (hint_init(&argc, &argv) != HINT_SUCCESS)
        return 1;
    int rank, P;
    size_t max = 8;
    hint_group_rank(HINT_WORLD, &rank);
    hint_group_size(HINT_WORLD, &P);
    for (int i = 2; i < argc; i += 2)
        if ((size_t)atol(argv[i]) > max)
            max = (size_t)atol(argv[i]);
    char *s = calloc(max, (size_t)P), *r = calloc(max, (size_t)P);
    size_t *counts = calloc((size_t)P, sizeof *counts), *displs = calloc((size_t)P, sizeof *displs);
    for (int i = 1; i < argc; i += 2) {
        size_t b = (size_t)atol(argv[i + 1]);
        const char *ran = NULL;
        int st = call(argv[i], b, s, r, counts, displs, P);
        hint_coll_last(argv[i], &ran);
        if (rank == 0)
            printf("%s %zu %s %d\n", argv[i], b, ran ? ran : "-", st);
    }
    free(s);
    free(r);
    free(counts);
    free(displs);
    hint_finalize();
    return 0;
}
