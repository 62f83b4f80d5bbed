/*
 * examples/transpose.c — the communication step of a distributed FFT: transpose an N x N matrix
 * distributed by rows over P ranks with one hint_alltoall, then check it with an allreduce.
 *
 *   hintrun -n 4 build/examples/transpose [B]     (B = rows per rank, default 64; N = P * B)
 *
 * Rank r holds rows r*B .. r*B+B-1 of A, where A[i][j] = i*N + j. Each rank cuts its rows into
 * P blocks of B x B, one per destination, the alltoall moves them, and each received block is
 * transposed locally; afterwards rank r holds rows r*B .. of A^T, i.e. A^T[i][j] = j*N + i.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: hintrun -n P transpose [B]\n"
               "Transposes a (P*B) x (P*B) matrix of doubles distributed by rows (B rows per rank,\n"
               "default 64) with hint_alltoall and checks every element; exit 0 when all are right.\n");
        return 0;
    }
    int st = hint_init(&argc, &argv);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "transpose: hint_init: %s\n", hint_strerror(st));
        return 1;
    }
    int rank, P;
    hint_group_rank(HINT_WORLD, &rank);
    hint_group_size(HINT_WORLD, &P);
    long B = argc > 1 ? atol(argv[1]) : 64;
    if (B < 1 || B > 4096) {
        if (rank == 0)
            fprintf(stderr, "transpose: B must be 1..4096\n");
        hint_finalize();
        return 2;
    }
    long N = (long)P * B;
    size_t blk = (size_t)(B * B);
    double *rows = malloc((size_t)(B * N) * sizeof *rows);
    double *send = malloc((size_t)(B * N) * sizeof *send);
    double *recv = malloc((size_t)(B * N) * sizeof *recv);

    for (long i = 0; i < B; i++)
        for (long j = 0; j < N; j++)
            rows[i * N + j] = (double)((rank * B + i) * N + j);
    /* block p = columns p*B .. p*B+B-1 of my rows, row-major B x B */
    for (int p = 0; p < P; p++)
        for (long i = 0; i < B; i++)
            memcpy(send + (size_t)p * blk + (size_t)(i * B), rows + i * N + p * B, (size_t)B * sizeof(double));

    /* the first call also builds the group's copy schedule: time the second */
    st = hint_alltoall(send, blk, HINT_DOUBLE, recv, blk, HINT_DOUBLE, HINT_WORLD);
    memset(recv, 0, (size_t)(B * N) * sizeof *recv);
    double t0 = hint_wtime();
    if (st == HINT_SUCCESS)
        st = hint_alltoall(send, blk, HINT_DOUBLE, recv, blk, HINT_DOUBLE, HINT_WORLD);
    double t = hint_wtime() - t0;
    const char *alg = "?";
    hint_coll_last("alltoall", &alg);

    /* block from p holds A[p*B + i][rank*B + j]; A^T row rank*B + j, column p*B + i */
    long wrong = st != HINT_SUCCESS;
    for (int p = 0; p < P; p++)
        for (long i = 0; i < B; i++)
            for (long j = 0; j < B; j++) {
                double got = recv[(size_t)p * blk + (size_t)(i * B + j)];
                double want = (double)((p * B + i) * N + rank * B + j); /* = A^T[rank*B+j][p*B+i] */
                wrong += got != want;
            }
    long total_wrong = 0;
    double tmax = 0;
    hint_allreduce(&wrong, &total_wrong, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    hint_reduce(&t, &tmax, 1, HINT_DOUBLE, HINT_MAX, 0, HINT_WORLD);
    if (rank == 0) {
        printf("hint %s: transpose of a %ld x %ld matrix of doubles over %d ranks\n", HINT_VERSION_STRING, N, N, P);
        printf("  alltoall of %zu bytes per pair: %.1f us (second call, slowest rank), algorithm %s\n",
               blk * sizeof(double),
               tmax * 1e6, alg);
        printf("  elements checked: %ld, wrong: %ld\n", N * N, total_wrong);
        printf("%s\n", total_wrong == 0 ? "OK" : "FAILED");
    }
    free(rows);
    free(send);
    free(recv);
    hint_finalize();
    return total_wrong != 0;
}
