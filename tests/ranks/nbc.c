/*
 * tests/ranks/nbc.c — the nonblocking collectives, run under hintrun at any P.
 *
 * Every i-collective is checked against its blocking call on the same inputs (run first, into a
 * second receive area; the blocking calls are checked against references by coll_check), and the
 * reductions, bcast, gather and alltoall also against values computed here, at 0 B, an odd size
 * and 64 KiB, with roots 0 and P - 1, in place where MPI allows it and with derived types; the
 * reductions also with a user op that does not commute (rank order checked). Then
 * what makes them nonblocking: several in flight on one group completed in reverse order; in
 * flight across a user receive for any source and tag, user point-to-point and blocking
 * collectives on the same group; in flight on the world, a dup and a split at once; completed by
 * a loop of hint_test with local work between (and never a wait); hint_wait and hint_test on a
 * request that has completed; hint_waitany and hint_testall; a derived type freed before the
 * wait; argument errors.
 *
 * Usage: nbc. Rank 0 prints "ok nbc".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P, R;
static hint_group W;
static char where[200] = "setup";

#define T_RANK R
#define T_SIZE P
#define T_WHERE where
#include "tests/common/stepcheck.h"

static const size_t sizes[] = {0, 13, 65536}; /* bytes per block */

static unsigned char byte_of(int rank, size_t i, int salt) { return (unsigned char)(rank * 37 + i * 11 + salt * 5 + 1); }
static int int_of(int rank, size_t i) { return rank * 1000 + (int)(i % 977) - 300; }

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    T_CHECK(p != NULL);
    return p;
}

static void fill_bytes(unsigned char *b, size_t n, int rank, int salt)
{
    for (size_t i = 0; i < n; i++)
        b[i] = byte_of(rank, i, salt);
}

static void same(const void *got, const void *want, size_t n, const char *what)
{
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        if (g[i] != w[i])
            T_FAIL("%s: byte %zu is %u, expected %u", what, i, g[i], w[i]);
}

static void wait_ok(hint_request *r)
{
    T_OK(hint_wait(r, HINT_STATUS_IGNORE));
    T_CHECK(*r == HINT_REQUEST_NULL);
}

/* ---- every operation against its blocking call and a local reference ---- */

static void t_bcast(size_t n, int root)
{
    AT("ibcast %zu B root %d", n, root);
    unsigned char *b = xmalloc(n), *want = xmalloc(n);
    fill_bytes(want, n, root, 1);
    if (R == root)
        memcpy(b, want, n);
    else
        memset(b, 0xee, n);
    hint_request r;
    T_OK(hint_ibcast(b, n, HINT_BYTE, root, W, &r));
    wait_ok(&r);
    same(b, want, n, "ibcast");
    free(b);
    free(want);
}

static void t_reduce(size_t n, int root, bool in_place)
{
    AT("ireduce %zu ints root %d%s", n, root, in_place ? " in place" : "");
    int *s = xmalloc(n * sizeof(int)), *r = xmalloc(n * sizeof(int)), *ref = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        s[i] = int_of(R, i);
    memcpy(r, s, n * sizeof(int));
    const void *sp = in_place && R == root ? HINT_IN_PLACE : s;
    hint_request q;
    T_OK(hint_ireduce(sp, r, n, HINT_INT, HINT_SUM, root, W, &q));
    T_OK(hint_reduce(s, ref, n, HINT_INT, HINT_SUM, root, W));
    wait_ok(&q);
    if (R == root) {
        for (size_t i = 0; i < n; i++) {
            long want = 0;
            for (int p = 0; p < P; p++)
                want += int_of(p, i);
            if (r[i] != want)
                T_FAIL("element %zu is %d, expected %ld", i, r[i], want);
        }
        same(r, ref, n * sizeof(int), "ireduce vs reduce");
    }
    free(s);
    free(r);
    free(ref);
}

static void t_allreduce(size_t n, bool in_place, hint_op op)
{
    AT("iallreduce %zu ints%s", n, in_place ? " in place" : "");
    int *s = xmalloc(n * sizeof(int)), *r = xmalloc(n * sizeof(int)), *ref = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        s[i] = int_of(R, i);
    memcpy(r, s, n * sizeof(int));
    hint_request q;
    T_OK(hint_iallreduce(in_place ? HINT_IN_PLACE : s, r, n, HINT_INT, op, W, &q));
    wait_ok(&q);
    T_OK(hint_allreduce(s, ref, n, HINT_INT, op, W));
    same(r, ref, n * sizeof(int), "iallreduce vs allreduce");
    for (size_t i = 0; op == HINT_SUM && i < n; i++) {
        long want = 0;
        for (int p = 0; p < P; p++)
            want += int_of(p, i);
        if (r[i] != want)
            T_FAIL("element %zu is %d, expected %ld", i, r[i], want);
    }
    free(s);
    free(r);
    free(ref);
}

static void t_reduce_scatter_block(size_t n, bool in_place)
{
    AT("ireduce_scatter_block %zu ints%s", n, in_place ? " in place" : "");
    size_t all = n * (size_t)P;
    int *s = xmalloc(all * sizeof(int)), *r = xmalloc(all * sizeof(int)), *ref = xmalloc(all * sizeof(int));
    for (size_t i = 0; i < all; i++)
        s[i] = int_of(R, i);
    memcpy(r, s, all * sizeof(int));
    hint_request q;
    T_OK(hint_ireduce_scatter_block(in_place ? HINT_IN_PLACE : s, r, n, HINT_INT, HINT_SUM, W, &q));
    wait_ok(&q);
    T_OK(hint_reduce_scatter_block(s, ref, n, HINT_INT, HINT_SUM, W));
    same(r, ref, n * sizeof(int), "ireduce_scatter_block vs reduce_scatter_block");
    for (size_t i = 0; i < n; i++) {
        long want = 0;
        for (int p = 0; p < P; p++)
            want += int_of(p, (size_t)R * n + i);
        if (r[i] != want)
            T_FAIL("element %zu is %d, expected %ld", i, r[i], want);
    }
    free(s);
    free(r);
    free(ref);
}

static void t_gather_scatter(size_t n, int root, bool in_place)
{
    AT("igather/iscatter %zu B root %d%s", n, root, in_place ? " in place" : "");
    size_t all = n * (size_t)P;
    unsigned char *s = xmalloc(n), *r = xmalloc(all), *ref = xmalloc(all);
    fill_bytes(s, n, R, 2);
    memset(r, 0, all);
    memset(ref, 0, all);
    if (in_place && R == root)
        memcpy(r + (size_t)root * n, s, n);
    hint_request q;
    T_OK(hint_igather(in_place && R == root ? HINT_IN_PLACE : s, n, HINT_BYTE, r, n, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    T_OK(hint_gather(s, n, HINT_BYTE, ref, n, HINT_BYTE, root, W));
    if (R == root) {
        same(r, ref, all, "igather vs gather");
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < n; i++)
                if (r[(size_t)p * n + i] != byte_of(p, i, 2))
                    T_FAIL("igather: block %d byte %zu", p, i);
    }
    /* scatter back what was gathered: each rank gets its own block again */
    unsigned char *back = xmalloc(n), *refback = xmalloc(n);
    memset(back, 0, n);
    T_OK(hint_iscatter(r, n, HINT_BYTE, in_place && R == root ? HINT_IN_PLACE : back, n, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    T_OK(hint_scatter(ref, n, HINT_BYTE, refback, n, HINT_BYTE, root, W));
    if (!(in_place && R == root)) {
        same(back, s, n, "iscatter");
        same(back, refback, n, "iscatter vs scatter");
    }
    free(s);
    free(r);
    free(ref);
    free(back);
    free(refback);
}

/* v layouts: rank p's block has counts[p] bytes, blocks laid out in reverse rank order. */
static size_t v_layout(size_t n, size_t counts[], size_t displs[])
{
    size_t at = 0;
    for (int p = P - 1; p >= 0; p--) {
        counts[p] = n ? (size_t)(p % 3) * n / 2 + (size_t)p : 0;
        displs[p] = at;
        at += counts[p] + 3;
    }
    return at;
}

static void t_gatherv_scatterv(size_t n, int root)
{
    AT("igatherv/iscatterv %zu B root %d", n, root);
    size_t *c = xmalloc((size_t)P * sizeof *c), *d = xmalloc((size_t)P * sizeof *d);
    size_t all = v_layout(n, c, d), mine = c[R];
    unsigned char *s = xmalloc(mine), *r = xmalloc(all), *ref = xmalloc(all);
    fill_bytes(s, mine, R, 3);
    memset(r, 0x5a, all);
    memset(ref, 0x5a, all);
    hint_request q;
    T_OK(hint_igatherv(s, mine, HINT_BYTE, r, c, d, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    T_OK(hint_gatherv(s, mine, HINT_BYTE, ref, c, d, HINT_BYTE, root, W));
    if (R == root)
        same(r, ref, all, "igatherv vs gatherv");
    unsigned char *back = xmalloc(mine);
    memset(back, 0, mine);
    T_OK(hint_iscatterv(r, c, d, HINT_BYTE, back, mine, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    same(back, s, mine, "iscatterv");
    free(s);
    free(r);
    free(ref);
    free(back);
    free(c);
    free(d);
}

static void t_allgather(size_t n, bool in_place)
{
    AT("iallgather(v) %zu B%s", n, in_place ? " in place" : "");
    size_t all = n * (size_t)P;
    unsigned char *s = xmalloc(n), *r = xmalloc(all), *ref = xmalloc(all);
    fill_bytes(s, n, R, 4);
    memset(r, 0, all);
    memcpy(r + (size_t)R * n, s, n);
    hint_request q;
    T_OK(hint_iallgather(in_place ? HINT_IN_PLACE : s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q));
    wait_ok(&q);
    T_OK(hint_allgather(s, n, HINT_BYTE, ref, n, HINT_BYTE, W));
    same(r, ref, all, "iallgather vs allgather");
    size_t *c = xmalloc((size_t)P * sizeof *c), *d = xmalloc((size_t)P * sizeof *d);
    size_t vall = v_layout(n, c, d);
    unsigned char *vs = xmalloc(c[R]), *vr = xmalloc(vall), *vref = xmalloc(vall);
    fill_bytes(vs, c[R], R, 5);
    memset(vr, 1, vall);
    memset(vref, 1, vall);
    memcpy(vr + d[R], vs, c[R]);
    T_OK(hint_iallgatherv(in_place ? HINT_IN_PLACE : vs, c[R], HINT_BYTE, vr, c, d, HINT_BYTE, W, &q));
    wait_ok(&q);
    T_OK(hint_allgatherv(vs, c[R], HINT_BYTE, vref, c, d, HINT_BYTE, W));
    same(vr, vref, vall, "iallgatherv vs allgatherv");
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < c[p]; i++)
            if (vr[d[p] + i] != byte_of(p, i, 5))
                T_FAIL("iallgatherv: block %d byte %zu", p, i);
    free(s);
    free(r);
    free(ref);
    free(vs);
    free(vr);
    free(vref);
    free(c);
    free(d);
}

static void t_alltoall(size_t n, bool in_place)
{
    AT("ialltoall(v) %zu B%s", n, in_place ? " in place" : "");
    size_t all = n * (size_t)P;
    unsigned char *s = xmalloc(all), *r = xmalloc(all), *ref = xmalloc(all);
    for (int p = 0; p < P; p++)
        fill_bytes(s + (size_t)p * n, n, R, 10 + p);
    memcpy(r, s, all);
    hint_request q;
    T_OK(hint_ialltoall(in_place ? HINT_IN_PLACE : s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q));
    wait_ok(&q);
    T_OK(hint_alltoall(s, n, HINT_BYTE, ref, n, HINT_BYTE, W));
    same(r, ref, all, "ialltoall vs alltoall");
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            if (r[(size_t)p * n + i] != byte_of(p, i, 10 + R))
                T_FAIL("ialltoall: block from %d byte %zu", p, i);
    /* v: rank p sends (p + q) % 3 * n / 2 + 1 bytes to q (n > 0), packed in rank order */
    size_t *sc = xmalloc((size_t)P * sizeof(size_t) * 4), *sd = sc + P, *rc = sd + P, *rd = rc + P;
    size_t st = 0, rt = 0;
    for (int p = 0; p < P; p++) {
        sc[p] = n ? (size_t)((R + p) % 3) * n / 2 + 1 : 0;
        rc[p] = n ? (size_t)((p + R) % 3) * n / 2 + 1 : 0;
        sd[p] = st;
        rd[p] = rt;
        st += sc[p];
        rt += rc[p];
    }
    unsigned char *vs = xmalloc(st), *vr = xmalloc(rt), *vref = xmalloc(rt);
    for (int p = 0; p < P; p++)
        fill_bytes(vs + sd[p], sc[p], R, 20 + p);
    memset(vref, 2, rt);
    if (in_place) {
        /* in place: one layout for both sides, which is symmetric here (sc == rc) */
        memcpy(vr, vs, st);
        T_OK(hint_ialltoallv(HINT_IN_PLACE, NULL, NULL, HINT_BYTE, vr, rc, rd, HINT_BYTE, W, &q));
    } else {
        memset(vr, 2, rt);
        T_OK(hint_ialltoallv(vs, sc, sd, HINT_BYTE, vr, rc, rd, HINT_BYTE, W, &q));
    }
    wait_ok(&q);
    T_OK(hint_alltoallv(vs, sc, sd, HINT_BYTE, vref, rc, rd, HINT_BYTE, W));
    same(vr, vref, rt, "ialltoallv vs alltoallv");
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < rc[p]; i++)
            if (vr[rd[p] + i] != byte_of(p, i, 20 + R))
                T_FAIL("ialltoallv: block from %d byte %zu", p, i);
    free(s);
    free(r);
    free(ref);
    free(sc);
    free(vs);
    free(vr);
    free(vref);
}

static void t_barrier(void)
{
    AT("ibarrier");
    /* the last rank enters late; nobody may leave before it entered (one monotonic clock) */
    double entered = 0;
    if (R == P - 1) {
        double t0 = hint_wtime();
        while (hint_wtime() - t0 < 0.02)
            ;
        entered = hint_wtime();
    }
    hint_request q;
    T_OK(hint_ibarrier(W, &q));
    wait_ok(&q);
    double left = hint_wtime();
    T_OK(hint_bcast(&entered, 1, HINT_DOUBLE, P - 1, W));
    if (left < entered)
        T_FAIL("left the barrier at %.6f, before rank %d entered at %.6f", left, P - 1, entered);
}

static void t_neighbors(size_t n)
{
    AT("ineighbor_* on a periodic ring, %zu ints", n);
    int dims[1] = {P}, periods[1] = {1};
    hint_group ring;
    T_OK(hint_cart_create(W, 1, dims, periods, 0, &ring));
    int *s = xmalloc(2 * n * sizeof(int)), *r = xmalloc(2 * n * sizeof(int)), *ref = xmalloc(2 * n * sizeof(int));
    for (size_t i = 0; i < 2 * n; i++)
        s[i] = int_of(R, i);
    hint_request q;
    for (int op = 0; op < 4; op++) {
        size_t cnt[2] = {n, n > 0 ? n - 1 : 0}, dsp[2] = {n, 0};
        memset(r, 0x11, 2 * n * sizeof(int));
        memset(ref, 0x11, 2 * n * sizeof(int));
        switch (op) {
        case 0:
            T_OK(hint_ineighbor_allgather(s, n, HINT_INT, r, n, HINT_INT, ring, &q));
            T_OK(hint_neighbor_allgather(s, n, HINT_INT, ref, n, HINT_INT, ring));
            break;
        case 1:
            T_OK(hint_ineighbor_alltoall(s, n, HINT_INT, r, n, HINT_INT, ring, &q));
            T_OK(hint_neighbor_alltoall(s, n, HINT_INT, ref, n, HINT_INT, ring));
            break;
        case 2:
            T_OK(hint_ineighbor_allgatherv(s, n, HINT_INT, r, (size_t[]){n, n}, dsp, HINT_INT, ring, &q));
            T_OK(hint_neighbor_allgatherv(s, n, HINT_INT, ref, (size_t[]){n, n}, dsp, HINT_INT, ring));
            break;
        default: {
            /* what goes to +1 lands in its -1 slot: counts must agree crosswise */
            size_t scnt[2] = {cnt[1], cnt[0]}, sdsp[2] = {0, n};
            T_OK(hint_ineighbor_alltoallv(s, scnt, sdsp, HINT_INT, r, cnt, dsp, HINT_INT, ring, &q));
            T_OK(hint_neighbor_alltoallv(s, scnt, sdsp, HINT_INT, ref, cnt, dsp, HINT_INT, ring));
        }
        }
        wait_ok(&q);
        same(r, ref, 2 * n * sizeof(int), op == 0 ? "ineighbor_allgather" : op == 1 ? "ineighbor_alltoall"
                                          : op == 2 ? "ineighbor_allgatherv" : "ineighbor_alltoallv");
    }
    if (n) { /* allgather: slot 0 holds the left neighbour's block */
        T_OK(hint_ineighbor_allgather(s, n, HINT_INT, r, n, HINT_INT, ring, &q));
        wait_ok(&q);
        T_CHECK(r[0] == int_of((R - 1 + P) % P, 0) && r[n] == int_of((R + 1) % P, 0));
    }
    T_OK(hint_group_free(&ring));
    free(s);
    free(r);
    free(ref);
}

/* Derived types: every other int of a vector on one side, and a type freed before the wait. */
static void t_derived(void)
{
    AT("derived types");
    const size_t n = 301;
    hint_type vec;
    T_OK(hint_type_vector(n, 1, 2, HINT_INT, &vec));
    T_OK(hint_type_commit(&vec));
    int *s = xmalloc(2 * n * (size_t)P * sizeof(int)), *r = xmalloc(2 * n * (size_t)P * sizeof(int));
    int *d = xmalloc(n * (size_t)P * sizeof(int)), *ref = xmalloc(n * (size_t)P * sizeof(int));
    for (size_t i = 0; i < 2 * n * (size_t)P; i++)
        s[i] = int_of(R, i);
    /* alltoall: strided send blocks (vector extent covers 2n - 1 ints; resized to 2n) into dense */
    hint_type blk;
    T_OK(hint_type_resized(vec, 0, (ptrdiff_t)(2 * n * sizeof(int)), &blk));
    T_OK(hint_type_commit(&blk));
    hint_request q;
    T_OK(hint_ialltoall(s, 1, blk, d, n, HINT_INT, W, &q));
    T_OK(hint_type_free(&blk)); /* the request holds it */
    wait_ok(&q);
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            if (d[(size_t)p * n + i] != int_of(p, (size_t)R * 2 * n + 2 * i))
                T_FAIL("ialltoall vector: block from %d element %zu is %d", p, i, d[(size_t)p * n + i]);
    /* allreduce on a vector: the strided ints summed, holes left alone */
    for (size_t i = 0; i < 2 * n; i++)
        r[i] = -7;
    T_OK(hint_iallreduce(s, r, 1, vec, HINT_SUM, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < 2 * n - 1; i++) {
        long want = -7;
        if (i % 2 == 0) {
            want = 0;
            for (int p = 0; p < P; p++)
                want += int_of(p, i);
        }
        if (r[i] != want)
            T_FAIL("iallreduce vector: int %zu is %d, expected %ld", i, r[i], want);
    }
    /* bcast and gather in the vector type on the receive side */
    for (size_t i = 0; i < 2 * n; i++)
        r[i] = R == 0 ? int_of(0, i) : -1;
    T_OK(hint_ibcast(r, 1, vec, 0, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < 2 * n - 1; i++)
        if (r[i] != (i % 2 == 0 || R == 0 ? int_of(0, i) : -1))
            T_FAIL("ibcast vector: int %zu is %d", i, r[i]);
    /* gather into vector blocks (one extent, 2n - 1 ints, apart), against the blocking call */
    size_t area = (2 * n - 1) * (size_t)P + 1;
    int *g = xmalloc(area * sizeof(int)), *gref = xmalloc(area * sizeof(int));
    for (size_t i = 0; i < area; i++)
        g[i] = gref[i] = -3;
    T_OK(hint_igather(d, n, HINT_INT, g, 1, vec, P - 1, W, &q));
    wait_ok(&q);
    T_OK(hint_gather(d, n, HINT_INT, gref, 1, vec, P - 1, W));
    if (R == P - 1)
        same(g, gref, area * sizeof(int), "igather into a vector vs gather");
    free(g);
    free(gref);
    /* alltoallv and allgatherv into doubles 16 bytes apart (holes keep their sentinel) */
    hint_type sparse;
    T_OK(hint_type_resized(HINT_DOUBLE, 0, 16, &sparse));
    T_OK(hint_type_commit(&sparse));
    size_t *c = xmalloc(4 * (size_t)P * sizeof(size_t)), *sd = c + P, *rc = sd + P, *rd = rc + P, st = 0, rt = 0;
    for (int p = 0; p < P; p++) {
        c[p] = (size_t)((R + p) % 4) * 3 + 1;
        rc[p] = c[p]; /* symmetric: R sends (R + p) % 4 * 3 + 1 to p and gets as much back */
        sd[p] = st;
        rd[p] = rt + 1; /* one element of gap before each block */
        st += c[p];
        rt += rc[p] + 1;
    }
    const size_t varea = 14 * (size_t)P; /* elements of 16 bytes: room for either layout below */
    double *vs = xmalloc(st * sizeof(double)), *vr = xmalloc(2 * varea * sizeof(double)),
           *vref = xmalloc(2 * varea * sizeof(double));
    for (size_t i = 0; i < st; i++)
        vs[i] = R * 100000.0 + (double)i;
    for (size_t i = 0; i < 2 * varea; i++)
        vr[i] = vref[i] = -5.0;
    T_OK(hint_ialltoallv(vs, c, sd, HINT_DOUBLE, vr, rc, rd, sparse, W, &q));
    wait_ok(&q);
    T_OK(hint_alltoallv(vs, c, sd, HINT_DOUBLE, vref, rc, rd, sparse, W));
    same(vr, vref, 2 * varea * sizeof(double), "ialltoallv into a sparse type vs alltoallv");
    for (size_t i = 0; i < 2 * varea; i++)
        vr[i] = vref[i] = -5.0;
    size_t at = 0;
    for (int p = P - 1; p >= 0; p--) { /* blocks of allgatherv in reverse rank order, a gap before each */
        rc[p] = (size_t)(p % 4) * 3 + 1;
        rd[p] = at + 1;
        at += rc[p] + 1;
    }
    T_CHECK(at <= varea && rt <= varea);
    T_OK(hint_iallgatherv(vs, rc[R], HINT_DOUBLE, vr, rc, rd, sparse, W, &q));
    wait_ok(&q);
    T_OK(hint_allgatherv(vs, rc[R], HINT_DOUBLE, vref, rc, rd, sparse, W));
    same(vr, vref, 2 * varea * sizeof(double), "iallgatherv into a sparse type vs allgatherv");
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < rc[p]; i++)
            if (vr[2 * (rd[p] + i)] != p * 100000.0 + (double)i)
                T_FAIL("iallgatherv sparse: block %d element %zu is %g", p, i, vr[2 * (rd[p] + i)]);
    T_OK(hint_type_free(&sparse));
    free(c);
    free(vs);
    free(vr);
    free(vref);
    T_OK(hint_type_free(&vec));
    free(s);
    free(r);
    free(d);
    free(ref);
}

/* A user op that does not commute: affine maps x -> m x + c (two uint32, wrapping), "in then
   inout" composed, so only rank order gives the reference. */
static void compose(const void *in_, void *inout_, size_t count, hint_type t)
{
    (void)t;
    const uint32_t *a = in_;
    uint32_t *b = inout_;
    for (size_t i = 0; i < count; i++) {
        uint32_t m = a[2 * i] * b[2 * i], c = b[2 * i] * a[2 * i + 1] + b[2 * i + 1];
        b[2 * i] = m;
        b[2 * i + 1] = c;
    }
}

static void affine_of(int p, size_t i, uint32_t out[2])
{
    out[0] = (uint32_t)(2 * p + 3 + (int)(i % 5));
    out[1] = (uint32_t)(7 * p + (int)i);
}

/* ranks lo .. hi - 1 composed in order, element i */
static void affine_ref(int lo, int hi, size_t i, uint32_t out[2])
{
    affine_of(lo, i, out);
    for (int p = lo + 1; p < hi; p++) {
        uint32_t next[2];
        affine_of(p, i, next);
        compose(out, next, 1, HINT_TYPE_NULL);
        out[0] = next[0];
        out[1] = next[1];
    }
}

static void t_noncommutative(size_t n)
{
    AT("user op that does not commute, %zu elements", n);
    hint_type aff;
    hint_op op;
    T_OK(hint_type_contiguous(2, HINT_UINT32, &aff));
    T_OK(hint_type_commit(&aff));
    T_OK(hint_op_create(compose, 0, &op));
    size_t all = n * (size_t)P;
    uint32_t *s = xmalloc(2 * all * sizeof(uint32_t)), *r = xmalloc(2 * all * sizeof(uint32_t)), want[2];
    for (size_t i = 0; i < all; i++)
        affine_of(R, i, s + 2 * i);
    hint_request q;
    T_OK(hint_iallreduce(s, r, n, aff, op, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        affine_ref(0, P, i, want);
        if (r[2 * i] != want[0] || r[2 * i + 1] != want[1])
            T_FAIL("iallreduce element %zu: (%u, %u), expected (%u, %u)", i, r[2 * i], r[2 * i + 1], want[0], want[1]);
    }
    for (int root = 0; root < P; root += P > 1 ? P - 1 : 1) {
        memset(r, 0, 2 * n * sizeof(uint32_t));
        T_OK(hint_ireduce(s, r, n, aff, op, root, W, &q));
        wait_ok(&q);
        for (size_t i = 0; R == root && i < n; i++) {
            affine_ref(0, P, i, want);
            if (r[2 * i] != want[0] || r[2 * i + 1] != want[1])
                T_FAIL("ireduce root %d element %zu", root, i);
        }
    }
    T_OK(hint_ireduce_scatter_block(s, r, n, aff, op, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        affine_ref(0, P, (size_t)R * n + i, want);
        if (r[2 * i] != want[0] || r[2 * i + 1] != want[1])
            T_FAIL("ireduce_scatter_block element %zu", i);
    }
    T_OK(hint_op_free(&op));
    T_OK(hint_type_free(&aff));
    free(s);
    free(r);
}

/* ---- what makes them nonblocking ---- */

/* Five in flight on one group, completed last first. */
static void t_reverse(void)
{
    AT("five in flight, waited in reverse");
    const size_t n = 4096;
    int *a = xmalloc(n * sizeof(int)), *b = xmalloc(n * sizeof(int));
    unsigned char *bc = xmalloc(n), *as = xmalloc(n * (size_t)P), *ar = xmalloc(n * (size_t)P);
    unsigned char *g = xmalloc(16 * (size_t)P), gs[16];
    fill_bytes(gs, 16, R, 8);
    for (size_t i = 0; i < n; i++)
        a[i] = int_of(R, i);
    fill_bytes(bc, n, 0, 7);
    if (R != 0)
        memset(bc, 0, n);
    for (int p = 0; p < P; p++)
        fill_bytes(as + (size_t)p * n, n, R, 30 + p);
    hint_request q[5];
    T_OK(hint_ibcast(bc, n, HINT_BYTE, 0, W, &q[0]));
    T_OK(hint_iallreduce(a, b, n, HINT_INT, HINT_SUM, W, &q[1]));
    T_OK(hint_ialltoall(as, n, HINT_BYTE, ar, n, HINT_BYTE, W, &q[2]));
    T_OK(hint_ibarrier(W, &q[3]));
    T_OK(hint_igather(gs, 16, HINT_BYTE, g, 16, HINT_BYTE, P - 1, W, &q[4]));
    for (int i = 4; i >= 0; i--)
        wait_ok(&q[i]);
    unsigned char *want = xmalloc(n);
    fill_bytes(want, n, 0, 7);
    same(bc, want, n, "ibcast (first started, last waited)");
    for (size_t i = 0; i < n; i++) {
        long w = 0;
        for (int p = 0; p < P; p++)
            w += int_of(p, i);
        if (b[i] != w)
            T_FAIL("iallreduce element %zu", i);
    }
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            if (ar[(size_t)p * n + i] != byte_of(p, i, 30 + R))
                T_FAIL("ialltoall block from %d byte %zu", p, i);
    for (int p = 0; R == P - 1 && p < P; p++)
        for (size_t i = 0; i < 16; i++)
            if (g[(size_t)p * 16 + i] != byte_of(p, i, 8))
                T_FAIL("igather block %d byte %zu", p, i);
    free(a);
    free(b);
    free(bc);
    free(as);
    free(ar);
    free(g);
    free(want);
}

/* A user receive for any source and tag posted before, blocking collectives and user point to
   point while one is in flight: none of them matches the collective's messages or the other way
   round. */
static void t_interleaved(void)
{
    AT("interleaved with p2p and blocking collectives");
    const size_t n = 20000;
    int *a = xmalloc(n * sizeof(int)), *b = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        a[i] = int_of(R, i);
    int any = -1, ring = -1, sum = 0, done = 0;
    hint_request user, q, q2;
    T_OK(hint_irecv(&any, 1, HINT_INT, HINT_ANY_SOURCE, HINT_ANY_TAG, W, &user));
    T_OK(hint_iallreduce(a, b, n, HINT_INT, HINT_SUM, W, &q));
    T_OK(hint_allreduce(&R, &sum, 1, HINT_INT, HINT_SUM, W));
    T_CHECK(sum == P * (P - 1) / 2);
    T_OK(hint_ibarrier(W, &q2));
    T_OK(hint_barrier(W));
    wait_ok(&q2);
    hint_status st;
    T_OK(hint_test(&user, &done, &st));
    if (done) /* nothing the collectives sent may reach it */
        T_FAIL("the user's receive got %d from %d tag %d (%zu B)", any, st.source, st.tag, st.bytes);
    T_OK(hint_barrier(W)); /* every rank has tested before anyone sends */
    int mine = 1000 + R;
    T_OK(hint_send(&mine, 1, HINT_INT, (R + 1) % P, 9, W));
    T_OK(hint_wait(&user, &st));
    T_CHECK(st.source == (R - 1 + P) % P && st.tag == 9 && any == 1000 + st.source);
    T_OK(hint_sendrecv(&R, 1, HINT_INT, (R + 1) % P, 5, &ring, 1, HINT_INT, (R - 1 + P) % P, 5, W,
                       HINT_STATUS_IGNORE));
    T_CHECK(ring == (R - 1 + P) % P);
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        long w = 0;
        for (int p = 0; p < P; p++)
            w += int_of(p, i);
        if (b[i] != w)
            T_FAIL("iallreduce element %zu", i);
    }
    free(a);
    free(b);
}

/* In flight on the world, a dup and a split at once; waitall. */
static void t_groups(void)
{
    AT("world, dup and split at once");
    hint_group dup, half;
    T_OK(hint_group_dup(W, &dup));
    T_OK(hint_group_split(W, R % 2, R, &half));
    int hr, hp;
    T_OK(hint_group_rank(half, &hr));
    T_OK(hint_group_size(half, &hp));
    const size_t n = 1000;
    int *a = xmalloc(n * sizeof(int)), *b = xmalloc(n * sizeof(int)), *c = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        a[i] = int_of(R, i);
    int wsum = -1, hsum = -1, one = 1;
    hint_request q[4];
    T_OK(hint_iallreduce(a, b, n, HINT_INT, HINT_SUM, dup, &q[0]));
    T_OK(hint_iallreduce(&one, &hsum, 1, HINT_INT, HINT_SUM, half, &q[1]));
    T_OK(hint_iallreduce(&one, &wsum, 1, HINT_INT, HINT_SUM, W, &q[2]));
    T_OK(hint_iallreduce(a, c, n, HINT_INT, HINT_MAX, dup, &q[3]));
    T_OK(hint_waitall(4, q, HINT_STATUSES_IGNORE));
    for (int i = 0; i < 4; i++)
        T_CHECK(q[i] == HINT_REQUEST_NULL);
    T_CHECK(hsum == hp && wsum == P);
    for (size_t i = 0; i < n; i++) {
        long w = 0;
        for (int p = 0; p < P; p++)
            w += int_of(p, i);
        if (b[i] != w || c[i] != int_of(P - 1, i))
            T_FAIL("element %zu: sum %d, max %d", i, b[i], c[i]);
    }
    T_OK(hint_group_free(&dup));
    T_OK(hint_group_free(&half));
    free(a);
    free(b);
    free(c);
}

/* Completed by hint_test alone, with local work between the tests. */
static void t_test_loop(void)
{
    AT("test loop");
    const size_t n = 16384;
    int *a = xmalloc(n * sizeof(int)), *b = xmalloc(n * sizeof(int));
    unsigned char *s = xmalloc(n * (size_t)P), *r = xmalloc(n * (size_t)P);
    for (size_t i = 0; i < n; i++)
        a[i] = int_of(R, i);
    for (int p = 0; p < P; p++)
        fill_bytes(s + (size_t)p * n, n, R, 40 + p);
    hint_request q[2];
    T_OK(hint_iallreduce(a, b, n, HINT_INT, HINT_SUM, W, &q[0]));
    T_OK(hint_ialltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q[1]));
    volatile double work = 0;
    long tests = 0;
    for (int left = 2; left > 0;) {
        for (int k = 0; k < 2000; k++)
            work += k * 0.5;
        left = 0;
        for (int i = 0; i < 2; i++) {
            int done = 0;
            T_OK(hint_test(&q[i], &done, HINT_STATUS_IGNORE));
            left += !done;
        }
        tests++;
        T_CHECK(tests < 100000000L);
    }
    for (size_t i = 0; i < n; i++) {
        long w = 0;
        for (int p = 0; p < P; p++)
            w += int_of(p, i);
        if (b[i] != w)
            T_FAIL("iallreduce element %zu", i);
    }
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            if (r[(size_t)p * n + i] != byte_of(p, i, 40 + R))
                T_FAIL("ialltoall block from %d byte %zu", p, i);
    /* null requests now: wait and test succeed at once */
    int done = 0;
    T_OK(hint_test(&q[0], &done, HINT_STATUS_IGNORE));
    T_CHECK(done == 1);
    T_OK(hint_wait(&q[1], HINT_STATUS_IGNORE));
    free(a);
    free(b);
    free(s);
    free(r);
}

/* hint_wait on a request that completed while another was waited for. */
static void t_wait_completed(void)
{
    AT("wait on a completed request");
    int x = R, y = -1, z = -1;
    hint_request q[2];
    T_OK(hint_iallreduce(&x, &y, 1, HINT_INT, HINT_MAX, W, &q[0]));
    T_OK(hint_iallreduce(&x, &z, 1, HINT_INT, HINT_MIN, W, &q[1]));
    wait_ok(&q[1]);
    T_OK(hint_barrier(W));
    T_OK(hint_barrier(W)); /* progress passes: by now the first has (almost surely) completed */
    hint_status st;
    T_OK(hint_wait(&q[0], &st));
    T_CHECK(q[0] == HINT_REQUEST_NULL && st.error == HINT_SUCCESS);
    T_CHECK(y == P - 1 && z == 0);
}

/* The other completion calls on collective requests: waitany, then testall in a loop. */
static void t_completion_calls(void)
{
    AT("waitany and testall");
    int x = R + 1, sum = 0, max = 0;
    unsigned char b[64];
    fill_bytes(b, sizeof b, 0, 9);
    if (R != 0)
        memset(b, 0, sizeof b);
    hint_request q[3];
    T_OK(hint_iallreduce(&x, &sum, 1, HINT_INT, HINT_SUM, W, &q[0]));
    T_OK(hint_ibcast(b, sizeof b, HINT_BYTE, 0, W, &q[1]));
    T_OK(hint_iallreduce(&x, &max, 1, HINT_INT, HINT_MAX, W, &q[2]));
    size_t index = 99;
    T_OK(hint_waitany(3, q, &index, HINT_STATUS_IGNORE));
    T_CHECK(index < 3 && q[index] == HINT_REQUEST_NULL);
    for (int done = 0; !done;)
        T_OK(hint_testall(3, q, &done, HINT_STATUSES_IGNORE));
    for (int i = 0; i < 3; i++)
        T_CHECK(q[i] == HINT_REQUEST_NULL);
    T_CHECK(sum == P * (P + 1) / 2 && max == P);
    unsigned char want[64];
    fill_bytes(want, sizeof want, 0, 9);
    same(b, want, sizeof b, "ibcast completed by testall");
    /* cancel is for receives only */
    T_OK(hint_ibarrier(W, &q[0]));
    T_EXPECT(hint_cancel(&q[0]), HINT_ERR_UNSUPPORTED);
    wait_ok(&q[0]);
}

static void t_errors(void)
{
    AT("argument errors");
    int x = 0;
    hint_request q = (hint_request)&x;
    T_EXPECT(hint_ibarrier(W, NULL), HINT_ERR_ARG);
    T_EXPECT(hint_ibcast(&x, 1, HINT_INT, P, W, &q), HINT_ERR_ROOT);
    T_CHECK(q == HINT_REQUEST_NULL);
    T_EXPECT(hint_iallreduce(&x, &x, 1, HINT_BYTE, HINT_SUM, W, &q), HINT_ERR_OP);
    T_EXPECT(hint_ialltoall(NULL, 1, HINT_INT, &x, 1, HINT_INT, W, &q), HINT_ERR_BUFFER);
    T_EXPECT(hint_ibarrier(HINT_GROUP_NULL, &q), HINT_ERR_GROUP);
    T_EXPECT(hint_ineighbor_allgather(&x, 1, HINT_INT, &x, 1, HINT_INT, W, &q), HINT_ERR_TOPOLOGY);
    /* a check that failed leaves the next call in step on every rank */
    T_OK(hint_ibarrier(W, &q));
    wait_ok(&q);
}

int main(int argc, char **argv)
{
    T_OK(hint_init(&argc, &argv));
    W = hint_world();
    T_OK(hint_group_rank(W, &R));
    T_OK(hint_group_size(W, &P));
    rc_rank = R;
    t_errors();
    t_barrier();
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k], ints = n / sizeof(int) + (n == 13);
        int roots[2] = {0, P - 1};
        for (int i = 0; i < 2; i++) {
            t_bcast(n, roots[i]);
            t_reduce(ints, roots[i], false);
            t_reduce(ints, roots[i], true);
            t_gather_scatter(n, roots[i], false);
            t_gather_scatter(n, roots[i], true);
            t_gatherv_scatterv(n, roots[i]);
        }
        t_allreduce(ints, false, HINT_SUM);
        t_allreduce(ints, true, HINT_SUM);
        t_allreduce(ints, false, HINT_MAX);
        t_reduce_scatter_block(ints, false);
        t_reduce_scatter_block(ints, true);
        t_allgather(n, false);
        t_allgather(n, true);
        t_alltoall(n, false);
        t_alltoall(n, true);
        t_neighbors(ints);
        t_noncommutative(ints);
    }
    t_derived();
    t_reverse();
    t_interleaved();
    t_groups();
    t_test_loop();
    t_wait_completed();
    t_completion_calls();
    T_OK(hint_finalize());
    if (R == 0)
        printf("ok nbc\n");
    return 0;
}
