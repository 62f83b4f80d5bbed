/*
 * examples/transpose.c — the communication step of a distributed FFT: transpose an N x N matrix
 * distributed by rows over P ranks with one hint_alltoall, then check it with an allreduce.
 *
 *   hintrun -n 4 build/examples/transpose [B]     (B = rows per rank, default 64; N = P * B)
 *
 * Rank r holds rows r*B .. r*B+B-1 of A, where A[i][j] = i*N + j. Each rank cuts its rows into
 * P blocks of B x B, one per destination, the alltoall moves them, and each received block is
 * transposed locally; afterwards rank r holds rows r*B .. of A^T, i.e. A^T[i][j] = j*N + i.
 * Then the same with derived datatypes and no hand-written packing at all: the send type picks a
 * B x B block out of the rows, the receive type scatters it as columns, and the alltoall writes
 * A^T's rows in place (the shared-heap algorithms copy piece by piece between the two layouts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

/* The transpose by datatypes: rows (B x N) to t (B x N) = rows rank*B.. of A^T. Returns the
   wrong elements (or 1 when the call fails); *t_us is the second call's time. */
static long transpose_typed(const double *rows, int rank, int P, long B, double *t_us, const char **alg)
{
    long N = (long)P * B;
    double *t = calloc((size_t)(B * N), sizeof *t);
    hint_type blk, blk_r, col, col1, cols, cols_r;
    /* one B x B block of my rows: B rows of B doubles, N apart; the next block starts B on */
    hint_type_vector((size_t)B, (size_t)B, N, HINT_DOUBLE, &blk);
    hint_type_resized(blk, 0, B * (ptrdiff_t)sizeof(double), &blk_r);
    hint_type_commit(&blk_r);
    /* received as B columns of B doubles (N apart), each column one double right of the last */
    hint_type_vector((size_t)B, 1, N, HINT_DOUBLE, &col);
    hint_type_resized(col, 0, sizeof(double), &col1);
    hint_type_contiguous((size_t)B, col1, &cols);
    hint_type_resized(cols, 0, B * (ptrdiff_t)sizeof(double), &cols_r);
    hint_type_commit(&cols_r);
    int st = hint_alltoall(rows, 1, blk_r, t, 1, cols_r, HINT_WORLD);
    double t0 = hint_wtime();
    if (st == HINT_SUCCESS)
        st = hint_alltoall(rows, 1, blk_r, t, 1, cols_r, HINT_WORLD);
    *t_us = (hint_wtime() - t0) * 1e6;
    hint_coll_last("alltoall", alg);
    long wrong = st != HINT_SUCCESS;
    for (long i = 0; i < B; i++)
        for (long j = 0; j < N; j++)
            wrong += t[i * N + j] != (double)(j * N + rank * B + i); /* A^T[rank*B+i][j] = A[j][rank*B+i] */
    hint_type ts[] = {blk, blk_r, col, col1, cols, cols_r};
    for (int i = 0; i < 6; i++)
        hint_type_free(&ts[i]);
    free(t);
    return wrong;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: hintrun -n P transpose [B]\n"
               "Transposes a (P*B) x (P*B) matrix of doubles distributed by rows (B rows per rank,\n"
               "default 64) with hint_alltoall, once packing by hand and once with derived datatypes,\n"
               "and checks every element; exit 0 when all are right.\n");
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
    double *t = malloc((size_t)(B * N) * sizeof *t);
    const char *alg = "?";
    double took = 0;
    /* twice: the first call also builds the group's copy schedule; the second is timed */
    for (int round = 0; round < 2 && st == HINT_SUCCESS; round++) {
        double t0 = hint_wtime();
        /* pack: block p = columns p*B .. p*B+B-1 of my rows, row-major B x B */
        for (int p = 0; p < P; p++)
            for (long i = 0; i < B; i++)
                memcpy(send + (size_t)p * blk + (size_t)(i * B), rows + i * N + p * B, (size_t)B * sizeof(double));
        st = hint_alltoall(send, blk, HINT_DOUBLE, recv, blk, HINT_DOUBLE, HINT_WORLD);
        /* local transpose: block from p holds A[p*B + i][rank*B + j] = A^T[rank*B + j][p*B + i] */
        for (int p = 0; p < P; p++)
            for (long i = 0; i < B; i++)
                for (long j = 0; j < B; j++)
                    t[j * N + p * B + i] = recv[(size_t)p * blk + (size_t)(i * B + j)];
        took = hint_wtime() - t0;
    }
    hint_coll_last("alltoall", &alg);
    long wrong = st != HINT_SUCCESS;
    for (long i = 0; i < B; i++)
        for (long j = 0; j < N; j++)
            wrong += t[i * N + j] != (double)(j * N + rank * B + i); /* A^T[rank*B+i][j] = A[j][rank*B+i] */
    free(t);

    long total_wrong = 0, typed_wrong = 0, wrong2;
    double tmax = 0, t2, t2max = 0;
    const char *alg2 = "?";
    hint_allreduce(&wrong, &total_wrong, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    hint_reduce(&took, &tmax, 1, HINT_DOUBLE, HINT_MAX, 0, HINT_WORLD);
    wrong2 = transpose_typed(rows, rank, P, B, &t2, &alg2);
    hint_allreduce(&wrong2, &typed_wrong, 1, HINT_LONG, HINT_SUM, HINT_WORLD);
    hint_reduce(&t2, &t2max, 1, HINT_DOUBLE, HINT_MAX, 0, HINT_WORLD);
    if (rank == 0) {
        printf("hint %s: transpose of a %ld x %ld matrix of doubles over %d ranks\n", HINT_VERSION_STRING, N, N, P);
        printf("  pack, alltoall of %zu bytes per pair, local transpose: %.1f us (second call, slowest rank), "
               "algorithm %s\n", blk * sizeof(double), tmax * 1e6, alg);
        printf("  elements checked: %ld, wrong: %ld\n", N * N, total_wrong);
        printf("  one alltoall with datatypes instead (no packing, no local transpose): %.1f us, algorithm %s\n",
               t2max, alg2);
        printf("  elements checked: %ld, wrong: %ld\n", N * N, typed_wrong);
        printf("%s\n", total_wrong == 0 && typed_wrong == 0 ? "OK" : "FAILED");
    }
    free(rows);
    free(send);
    free(recv);
    hint_finalize();
    return total_wrong != 0 || typed_wrong != 0;
}
