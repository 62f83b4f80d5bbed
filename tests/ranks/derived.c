/*
 * tests/ranks/derived.c — derived datatypes in point to point and collectives, run under hintrun:
 * strided vectors, structs and resized types on either side, small (eager) and large
 * (rendezvous) messages, a type freed while its isend is pending, and a detectable signature
 * mismatch (HINT_ERR_TYPE).
 */
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

static double val(int from, int to, size_t i) { return from * 1000.0 + to * 10.0 + (double)i * 0.5; }

/* every other double: count elements of a vector(n, 1, 2) type */
static void p2p_strided(size_t n)
{
    hint_type every_other;
    RC_OK(hint_type_vector(n, 1, 2, HINT_DOUBLE, &every_other));
    RC_OK(hint_type_commit(&every_other));
    double *s = malloc(2 * n * sizeof *s), *r = calloc(n, sizeof *r);
    int next = (rc_rank + 1) % P, prev = (rc_rank + P - 1) % P;
    for (size_t i = 0; i < 2 * n; i++)
        s[i] = i % 2 ? -1 : val(rc_rank, next, i / 2);
    hint_request rq[2];
    RC_OK(hint_irecv(r, n, HINT_DOUBLE, prev, 1, HINT_WORLD, &rq[0]));
    RC_OK(hint_isend(s, 1, every_other, next, 1, HINT_WORLD, &rq[1]));
    RC_OK(hint_type_free(&every_other)); /* still pending: the send must not notice */
    hint_status st[2];
    RC_OK(hint_waitall(2, rq, st));
    RC_CHECK(st[0].bytes == n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        RC_CHECK(r[i] == val(prev, rc_rank, i));
    /* and the other way: contiguous in, strided out */
    RC_OK(hint_type_vector(n, 1, 2, HINT_DOUBLE, &every_other));
    RC_OK(hint_type_commit(&every_other));
    double *r2 = calloc(2 * n, sizeof *r2);
    RC_OK(hint_sendrecv(r, n, HINT_DOUBLE, next, 2, r2, 1, every_other, prev, 2, HINT_WORLD, NULL));
    int pp = (prev + P - 1) % P;
    for (size_t i = 0; i < n; i++)
        RC_CHECK(r2[2 * i] == val(pp, prev, i) && r2[2 * i + 1] == 0);
    RC_OK(hint_type_free(&every_other));
    free(s);
    free(r);
    free(r2);
}

static void p2p_mismatch(void)
{
    int next = (rc_rank + 1) % P, prev = (rc_rank + P - 1) % P;
    int x[2] = {1, 2};
    double y = 0;
    hint_request rq;
    hint_status st;
    RC_OK(hint_isend(x, 2, HINT_INT, next, 3, HINT_WORLD, &rq));
    RC_EXPECT(hint_recv(&y, 1, HINT_DOUBLE, prev, 3, HINT_WORLD, &st), HINT_ERR_TYPE);
    RC_CHECK(st.error == HINT_ERR_TYPE && st.bytes == sizeof y);
    RC_OK(hint_wait(&rq, NULL));
    /* bytes match anything */
    RC_OK(hint_isend(x, 2, HINT_INT, next, 4, HINT_WORLD, &rq));
    RC_OK(hint_recv(&y, 8, HINT_BYTE, prev, 4, HINT_WORLD, &st));
    RC_OK(hint_wait(&rq, NULL));
}

/* FFT-style transpose: rank r owns rows r*B.., an N x N matrix (N = P*B) row-major; send
   block p as B rows of B columns with a vector type, receive it transposed with a column type. */
static void alltoall_transpose(int B)
{
    int N = P * B;
    double *a = malloc((size_t)B * N * sizeof *a), *t = calloc((size_t)B * N, sizeof *t);
    for (int i = 0; i < B; i++)
        for (int j = 0; j < N; j++)
            a[i * N + j] = (double)((rc_rank * B + i) * N + j);
    hint_type blk, blk_r, col, col1, cols;
    /* one B x B block of my rows: B rows of B doubles, stride N; consecutive blocks B doubles apart */
    RC_OK(hint_type_vector((size_t)B, (size_t)B, N, HINT_DOUBLE, &blk));
    RC_OK(hint_type_resized(blk, 0, B * (ptrdiff_t)sizeof(double), &blk_r));
    RC_OK(hint_type_commit(&blk_r));
    /* receive side: the B x B block transposed = B columns; one column is B doubles stride N */
    RC_OK(hint_type_vector((size_t)B, 1, N, HINT_DOUBLE, &col));
    RC_OK(hint_type_resized(col, 0, sizeof(double), &col1));
    RC_OK(hint_type_contiguous((size_t)B, col1, &cols));
    hint_type cols_r;
    RC_OK(hint_type_resized(cols, 0, B * (ptrdiff_t)sizeof(double), &cols_r));
    RC_OK(hint_type_commit(&cols_r));
    RC_OK(hint_alltoall(a, 1, blk_r, t, 1, cols_r, HINT_WORLD));
    /* t holds rows rank*B.. of A^T: t[i][j] = A[j][rank*B + i] */
    for (int i = 0; i < B; i++)
        for (int j = 0; j < N; j++)
            if (t[i * N + j] != (double)(j * N + rc_rank * B + i))
                RC_FAIL("transpose element (%d,%d) is %g, expected %g", i, j, t[i * N + j], (double)(j * N + rc_rank * B + i));
    hint_type ts[] = {blk, blk_r, col, col1, cols, cols_r};
    for (int i = 0; i < 6; i++)
        RC_OK(hint_type_free(&ts[i]));
    free(a);
    free(t);
}

/* allreduce, bcast, allgather, gatherv and alltoallv on a strided type */
static void other_collectives(size_t n)
{
    hint_type ev;
    RC_OK(hint_type_vector(n, 1, 2, HINT_INT, &ev));
    RC_OK(hint_type_commit(&ev));
    int *s = calloc(2 * n * (size_t)P + 2, sizeof *s), *r = calloc(2 * n * (size_t)P + 2, sizeof *r);
    for (size_t i = 0; i < n; i++)
        s[2 * i] = rc_rank + (int)i;
    RC_OK(hint_allreduce(s, r, 1, ev, HINT_SUM, HINT_WORLD));
    for (size_t i = 0; i < n; i++)
        RC_CHECK(r[2 * i] == P * (P - 1) / 2 + P * (int)i && r[2 * i + 1] == 0);
    memset(r, 0, 2 * n * sizeof *r);
    if (rc_rank == 0)
        memcpy(r, s, 2 * n * sizeof *r);
    RC_OK(hint_bcast(r, 1, ev, 0, HINT_WORLD));
    for (size_t i = 0; i < n; i++)
        RC_CHECK(r[2 * i] == (int)i);
    /* allgather: contiguous n ints in, every other int out (one ev per rank, extent 2n-1 ints) */
    hint_type ev_r;
    RC_OK(hint_type_resized(ev, 0, 2 * (ptrdiff_t)n * (ptrdiff_t)sizeof(int), &ev_r));
    RC_OK(hint_type_commit(&ev_r));
    int *c = malloc(n * sizeof *c);
    for (size_t i = 0; i < n; i++)
        c[i] = rc_rank * 100 + (int)i;
    memset(r, 0, 2 * n * (size_t)P * sizeof *r);
    RC_OK(hint_allgather(c, n, HINT_INT, r, 1, ev_r, HINT_WORLD));
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            RC_CHECK(r[(size_t)p * 2 * n + 2 * i] == p * 100 + (int)i);
    /* gatherv to the last rank, blocks of one ev_r each at displacements in reverse order */
    size_t *cnt = malloc((size_t)P * sizeof *cnt), *dsp = malloc((size_t)P * sizeof *dsp);
    for (int p = 0; p < P; p++) {
        cnt[p] = 1;
        dsp[p] = (size_t)(P - 1 - p);
    }
    memset(r, 0, 2 * n * (size_t)P * sizeof *r);
    RC_OK(hint_gatherv(c, n, HINT_INT, r, cnt, dsp, ev_r, P - 1, HINT_WORLD));
    if (rc_rank == P - 1)
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < n; i++)
                RC_CHECK(r[(size_t)(P - 1 - p) * 2 * n + 2 * i] == p * 100 + (int)i);
    /* alltoallv: one ev_r to everyone from a strided send, received contiguous */
    int *sa = calloc(2 * n * (size_t)P, sizeof *sa), *ra = calloc(n * (size_t)P, sizeof *ra);
    size_t *rc = malloc((size_t)P * sizeof *rc), *rd = malloc((size_t)P * sizeof *rd);
    for (int p = 0; p < P; p++) {
        cnt[p] = 1;
        dsp[p] = (size_t)p;
        rc[p] = n;
        rd[p] = (size_t)p * n;
        for (size_t i = 0; i < n; i++)
            sa[(size_t)p * 2 * n + 2 * i] = rc_rank * 1000 + p * 10 + (int)i;
    }
    RC_OK(hint_alltoallv(sa, cnt, dsp, ev_r, ra, rc, rd, HINT_INT, HINT_WORLD));
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            RC_CHECK(ra[(size_t)p * n + i] == p * 1000 + rc_rank * 10 + (int)i);
    /* a detectable mismatch: int blocks sent, double blocks expected */
    double d[64];
    RC_EXPECT(hint_allgather(c, 2, HINT_INT, d, 1, HINT_DOUBLE, HINT_WORLD), HINT_ERR_TYPE);
    RC_OK(hint_type_free(&ev));
    RC_OK(hint_type_free(&ev_r));
    free(s);
    free(r);
    free(c);
    free(cnt);
    free(dsp);
    free(sa);
    free(ra);
    free(rc);
    free(rd);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    p2p_strided(7);
    p2p_strided(100000); /* rendezvous */
    p2p_mismatch();
    alltoall_transpose(1);
    alltoall_transpose(5);
    alltoall_transpose(64);
    other_collectives(3);
    other_collectives(5000);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok derived\n");
    return 0;
}
