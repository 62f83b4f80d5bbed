/*
 * tests/ranks/nbc_heap.c — the nonblocking collectives' single-copy schedules over the shared
 * heap (collectives/nbc_heap.c), run under hintrun on one node at any P.
 *
 * Every operation that has one (bcast, reduce, allreduce, reduce_scatter_block, gather(v),
 * scatter(v), allgather(v), alltoall(v)) against values computed here, at 0 B, 1 B, odd sizes
 * and 64 KiB, roots 0 and P - 1, with buffers on the heap (malloc) and off it (static arrays:
 * the schedule packs those into heap scratch), hint_coll_last("i<op>") naming what ran. Then:
 * 20 ialltoalls in flight on one group (more than a descriptor ring holds) with iallreduces and
 * ibcasts on a dup, interleaved with a point-to-point ring, completed in reverse order and by
 * a hint_testall loop; a rank that posts and computes before it waits; mismatched sizes, which
 * end the call with HINT_ERR_MISMATCH on the ranks that see them; a group freed while its
 * calls are in flight.
 *
 * Usage: nbc_heap [--expect NAME] [--only-heap] [--check]
 *   --expect NAME  what hint_coll_last must name for a non-trivial call (default heap; !NAME:
 *                  anything else)
 *   --only-heap    only the single-copy calls, no point to point and no mismatch (for the
 *                  HINT_P2P_STATS check that they send no message)
 *   --check        under HINT_COLL_CHECK=1: mismatched roots, ops, alltoallv counts and
 *                  collectives end with HINT_ERR_MISMATCH on every member
 * Rank 0 prints "ok nbc_heap".
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"

static int P, R;
static hint_group W;
static char where[200] = "setup";
static const char *expect = "heap";

#define T_RANK R
#define T_SIZE P
#define T_WHERE where
#include "tests/common/stepcheck.h"

/* bytes per block: empty, one, odd, 64 KiB */
static const size_t sizes[] = {0, 1, 13, 4099, 65536};
#define MAXP 16
#define MAXB 65536

/* off the heap: static arrays (hint serves malloc from the heap) */
static unsigned char off_s[MAXP * MAXB + 4096], off_r[MAXP * MAXB + 4096];

static unsigned char byte_of(int from, int to, size_t i) { return (unsigned char)(from * 37 + to * 13 + i * 11 + 1); }

/* a buffer of n bytes: on the heap, or the static one `which` (0 send, 1 receive) */
static unsigned char *buf(bool heap, int which, size_t n)
{
    if (heap) {
        unsigned char *p = malloc(n ? n : 1);
        T_CHECK(p != NULL);
        return p;
    }
    T_CHECK(n <= sizeof off_s);
    return which ? off_r : off_s;
}
static void unbuf(bool heap, void *p)
{
    if (heap)
        free(p);
}

static void wait_ok(hint_request *r) { T_OK(hint_wait(r, HINT_STATUS_IGNORE)); }

static void ran(const char *op, size_t bytes)
{
    const char *name = NULL;
    T_OK(hint_coll_last(op, &name));
    if (name && strcmp(name, "trivial") == 0 && (P == 1 || bytes == 0))
        return; /* the v variants run their schedule at 0 B too */
    const char *want = P == 1 ? "trivial" : expect;
    bool neg = want[0] == '!'; /* "!heap": anything but */
    if (name == NULL || (strcmp(name, want + neg) == 0) == neg)
        T_FAIL("hint_coll_last(\"%s\") is %s, expected %s", op, name ? name : "NULL", want);
}

static void same_bytes(const unsigned char *got, int from, int to, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (got[i] != byte_of(from, to, i))
            T_FAIL("%s: byte %zu of the block from %d is %u, expected %u", what, i, from, got[i], byte_of(from, to, i));
}

static void t_alltoall(size_t n, bool heap)
{
    AT("ialltoall %zu B %s", n, heap ? "heap" : "off heap");
    unsigned char *s = buf(heap, 0, n * P), *r = buf(heap, 1, n * P);
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            s[(size_t)p * n + i] = byte_of(R, p, i);
    memset(r, 0xee, n * P);
    hint_request q;
    T_OK(hint_ialltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q));
    wait_ok(&q);
    for (int p = 0; p < P; p++)
        same_bytes(r + (size_t)p * n, p, R, n, "ialltoall");
    ran("ialltoall", n);
    unbuf(heap, s);
    unbuf(heap, r);
}

/* alltoallv: from s to d, (s + 2 d) % 3 * n / 2 + (d & 1) bytes, one byte of gap between blocks */
static size_t vcount(int s, int d, size_t n) { return n ? (size_t)((s + 2 * d) % 3) * n / 2 + (size_t)(d & 1) : 0; }

static void t_alltoallv(size_t n, bool heap)
{
    AT("ialltoallv %zu B %s", n, heap ? "heap" : "off heap");
    size_t sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP], st = 0, rt = 0;
    for (int p = 0; p < P; p++) {
        sc[p] = vcount(R, p, n);
        sd[p] = st;
        st += sc[p] + 1;
        rc[p] = vcount(p, R, n);
        rd[p] = rt;
        rt += rc[p] + 1;
    }
    unsigned char *s = buf(heap, 0, st), *r = buf(heap, 1, rt);
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < sc[p]; i++)
            s[sd[p] + i] = byte_of(R, p, i);
    memset(r, 0xee, rt);
    hint_request q;
    T_OK(hint_ialltoallv(s, sc, sd, HINT_BYTE, r, rc, rd, HINT_BYTE, W, &q));
    wait_ok(&q);
    for (int p = 0; p < P; p++) {
        same_bytes(r + rd[p], p, R, rc[p], "ialltoallv");
        T_CHECK(r[rd[p] + rc[p]] == 0xee); /* the gap is untouched */
    }
    unbuf(heap, s);
    unbuf(heap, r);
}

static void t_allgather(size_t n, bool heap, bool v)
{
    AT("iallgather%s %zu B %s", v ? "v" : "", n, heap ? "heap" : "off heap");
    size_t rc[MAXP], rd[MAXP];
    for (int p = 0; p < P; p++) {
        rc[p] = n;
        rd[p] = (size_t)(P - 1 - p) * n; /* reversed */
    }
    unsigned char *s = buf(heap, 0, n), *r = buf(heap, 1, n * P);
    for (size_t i = 0; i < n; i++)
        s[i] = byte_of(R, 0, i);
    hint_request q;
    if (v)
        T_OK(hint_iallgatherv(s, n, HINT_BYTE, r, rc, rd, HINT_BYTE, W, &q));
    else
        T_OK(hint_iallgather(s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q));
    wait_ok(&q);
    for (int p = 0; p < P; p++)
        same_bytes(r + (v ? rd[p] : (size_t)p * n), p, 0, n, "iallgather");
    ran(v ? "iallgatherv" : "iallgather", n);
    unbuf(heap, s);
    unbuf(heap, r);
}

static void t_bcast(size_t n, int root, bool heap)
{
    AT("ibcast %zu B root %d %s", n, root, heap ? "heap" : "off heap");
    unsigned char *b = buf(heap, 0, n);
    for (size_t i = 0; i < n; i++)
        b[i] = R == root ? byte_of(root, 0, i) : 0xee;
    hint_request q;
    T_OK(hint_ibcast(b, n, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    same_bytes(b, root, 0, n, "ibcast");
    ran("ibcast", n);
    unbuf(heap, b);
}

static void t_gather_scatter(size_t n, int root, bool heap, bool v)
{
    AT("igather%s/iscatter%s %zu B root %d %s", v ? "v" : "", v ? "v" : "", n, root, heap ? "heap" : "off heap");
    size_t c[MAXP], d[MAXP];
    for (int p = 0; p < P; p++) {
        c[p] = n;
        d[p] = (size_t)(P - 1 - p) * n;
    }
    unsigned char *s = buf(heap, 0, n * P), *r = buf(heap, 1, n * P);
    for (size_t i = 0; i < n; i++)
        s[i] = byte_of(R, root, i);
    memset(r, 0xee, n * P);
    hint_request q;
    if (v)
        T_OK(hint_igatherv(s, n, HINT_BYTE, r, c, d, HINT_BYTE, root, W, &q));
    else
        T_OK(hint_igather(s, n, HINT_BYTE, r, n, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    if (R == root)
        for (int p = 0; p < P; p++)
            same_bytes(r + (v ? d[p] : (size_t)p * n), p, root, n, "igather");
    ran(v ? "igatherv" : "igather", n);
    /* scatter back what was gathered: every rank gets its own block again */
    memset(s, 0xee, n);
    if (v)
        T_OK(hint_iscatterv(r, c, d, HINT_BYTE, s, n, HINT_BYTE, root, W, &q));
    else
        T_OK(hint_iscatter(r, n, HINT_BYTE, s, n, HINT_BYTE, root, W, &q));
    wait_ok(&q);
    same_bytes(s, R, root, n, "iscatter");
    ran(v ? "iscatterv" : "iscatter", n);
    unbuf(heap, s);
    unbuf(heap, r);
}

static int int_of(int rank, size_t i) { return rank * 1000 + (int)(i % 977) - 300; }

/* reductions over n ints: sum (all three) and the reference sum over ranks */
/* What a SUM over every rank's int_of at element i gives. */
static long sum_over_ranks(size_t i)
{
    long want = 0;
    for (int p = 0; p < P; p++)
        want += int_of(p, i);
    return want;
}

static void t_reductions(size_t n, int root, bool heap)
{
    AT("ireduce/iallreduce/ireduce_scatter_block %zu ints root %d %s", n, root, heap ? "heap" : "off heap");
    size_t bytes = n * sizeof(int);
    int *s = (int *)buf(heap, 0, bytes * P), *r = (int *)buf(heap, 1, bytes * P);
    for (size_t i = 0; i < n * P; i++)
        s[i] = int_of(R, i);
    hint_request q;
    T_OK(hint_iallreduce(s, r, n, HINT_INT, HINT_SUM, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        long want = sum_over_ranks(i);
        if (r[i] != (int)want)
            T_FAIL("iallreduce: element %zu is %d, expected %ld", i, r[i], want);
    }
    ran("iallreduce", bytes);
    memset(r, 0, bytes);
    T_OK(hint_ireduce(s, r, n, HINT_INT, HINT_MAX, root, W, &q));
    wait_ok(&q);
    for (size_t i = 0; R == root && i < n; i++)
        if (r[i] != int_of(P - 1, i))
            T_FAIL("ireduce max: element %zu is %d, expected %d", i, r[i], int_of(P - 1, i));
    ran("ireduce", bytes);
    T_OK(hint_ireduce_scatter_block(s, r, n, HINT_INT, HINT_SUM, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        long want = sum_over_ranks((size_t)R * n + i);
        if (r[i] != (int)want)
            T_FAIL("ireduce_scatter_block: element %zu is %d, expected %ld", i, r[i], want);
    }
    ran("ireduce_scatter_block", bytes);
    /* in place */
    for (size_t i = 0; i < n; i++)
        r[i] = int_of(R, i);
    T_OK(hint_iallreduce(HINT_IN_PLACE, r, n, HINT_INT, HINT_SUM, W, &q));
    wait_ok(&q);
    for (size_t i = 0; i < n; i++) {
        long want = sum_over_ranks(i);
        if (r[i] != (int)want)
            T_FAIL("iallreduce in place: element %zu is %d, expected %ld", i, r[i], want);
    }
    unbuf(heap, s);
    unbuf(heap, r);
}

/* ---- several in flight ---- */

#define NFLIGHT 20 /* more than a group's descriptor ring (16): the later ones publish later */

static void t_many(bool reverse)
{
    AT("%d ialltoall + iallreduce + ibcast in flight, p2p ring, %s", NFLIGHT, reverse ? "reverse waits" : "testall");
    hint_group D;
    T_OK(hint_group_dup(W, &D));
    size_t n = 777;
    unsigned char *s[NFLIGHT], *r[NFLIGHT];
    int sum_in[NFLIGHT], sum_out[NFLIGHT], bc[NFLIGHT];
    hint_request q[3 * NFLIGHT + 2];
    int nq = 0, left = (R - 1 + P) % P, right = (R + 1) % P, got = -1, token = R;
    T_OK(hint_irecv(&got, 1, HINT_INT, left, 7, W, &q[nq++]));
    for (int k = 0; k < NFLIGHT; k++) {
        s[k] = malloc(n * P);
        r[k] = malloc(n * P);
        T_CHECK(s[k] && r[k]);
        for (int p = 0; p < P; p++)
            for (size_t i = 0; i < n; i++)
                s[k][(size_t)p * n + i] = byte_of(R + k, p, i);
        T_OK(hint_ialltoall(s[k], n, HINT_BYTE, r[k], n, HINT_BYTE, W, &q[nq++]));
        sum_in[k] = R + k;
        T_OK(hint_iallreduce(&sum_in[k], &sum_out[k], 1, HINT_INT, HINT_SUM, D, &q[nq++]));
        bc[k] = R == k % P ? 1000 + k : -1;
        T_OK(hint_ibcast(&bc[k], 1, HINT_INT, k % P, D, &q[nq++]));
        if (k == NFLIGHT / 2)
            T_OK(hint_isend(&token, 1, HINT_INT, right, 7, W, &q[nq++]));
    }
    if (reverse) {
        for (int i = nq - 1; i >= 0; i--)
            wait_ok(&q[i]);
    } else {
        int flag = 0;
        for (long spins = 0; !flag; spins++) {
            T_OK(hint_testall(nq, q, &flag, HINT_STATUSES_IGNORE));
            T_CHECK(spins < 100000000L);
        }
    }
    T_CHECK(got == left);
    for (int k = 0; k < NFLIGHT; k++) {
        for (int p = 0; p < P; p++)
            same_bytes(r[k] + (size_t)p * n, p + k, R, n, "ialltoall in flight");
        T_CHECK(sum_out[k] == P * (P - 1) / 2 + P * k);
        T_CHECK(bc[k] == 1000 + k);
        free(s[k]);
        free(r[k]);
    }
    T_OK(hint_group_free(&D));
}

/* A rank that posts and then computes without calling hint: the others' calls complete once it
   waits (its offsets were published at the call, so they copy meanwhile). */
static void t_post_and_compute(void)
{
    AT("rank 0 posts ialltoall and computes 50 ms before it waits");
    size_t n = 4096;
    unsigned char *s = malloc(n * P), *r = malloc(n * P);
    T_CHECK(s && r);
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            s[(size_t)p * n + i] = byte_of(R, p, i);
    hint_request q;
    T_OK(hint_ialltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, W, &q));
    if (R == 0) {
        double t0 = hint_wtime();
        volatile double x = 1;
        while (hint_wtime() - t0 < 0.05)
            x = x * 1.0000001 + 1e-9;
    }
    wait_ok(&q);
    for (int p = 0; p < P; p++)
        same_bytes(r + (size_t)p * n, p, R, n, "ialltoall after compute");
    free(s);
    free(r);
}

/* Members that disagree on the size: the members whose expectation differs end with
   HINT_ERR_MISMATCH, the others complete; nobody waits for ever. */
static void t_mismatch(void)
{
    AT("iallgather with rank 0's block one byte longer");
    if (P < 2)
        return;
    size_t n = 64, mine = R == 0 ? n + 1 : n;
    unsigned char *s = calloc(1, n + 1), *r = calloc((size_t)P, n + 1);
    hint_request q;
    T_OK(hint_iallgather(s, mine, HINT_BYTE, r, mine, HINT_BYTE, W, &q));
    int st = hint_wait(&q, HINT_STATUS_IGNORE);
    T_CHECK(st == HINT_ERR_MISMATCH);
    AT("iallreduce with rank 0's count one longer");
    int a[9] = {0}, b[9];
    T_OK(hint_iallreduce(a, b, R == 0 ? 9 : 8, HINT_INT, HINT_SUM, W, &q));
    st = hint_wait(&q, HINT_STATUS_IGNORE);
    T_CHECK(st == HINT_ERR_MISMATCH);
    T_OK(hint_barrier(W));
    free(s);
    free(r);
}

/* --check (run with HINT_COLL_CHECK=1): i-calls whose members disagree end with
   HINT_ERR_MISMATCH on every member, before anything moves, whichever schedule runs. */
static void t_check(void)
{
    if (P < 2)
        return;
    hint_request q;
    AT("HINT_COLL_CHECK: ibcast with rank 0's root differing");
    int x = 5;
    T_OK(hint_ibcast(&x, 1, HINT_INT, R == 0 ? 0 : 1, W, &q));
    T_CHECK(hint_wait(&q, HINT_STATUS_IGNORE) == HINT_ERR_MISMATCH);
    AT("HINT_COLL_CHECK: ireduce with different ops");
    int y = 0;
    T_OK(hint_ireduce(&x, &y, 1, HINT_INT, R == P - 1 ? HINT_MAX : HINT_SUM, 0, W, &q));
    T_CHECK(hint_wait(&q, HINT_STATUS_IGNORE) == HINT_ERR_MISMATCH);
    AT("HINT_COLL_CHECK: ialltoallv whose last rank sends rank 0 one byte more");
    size_t sc[MAXP], sd[MAXP], rc[MAXP], rd[MAXP];
    unsigned char s[MAXP * 2], r[MAXP * 2];
    for (int p = 0; p < P; p++) {
        sc[p] = rc[p] = 1;
        sd[p] = rd[p] = (size_t)p * 2;
    }
    if (R == P - 1)
        sc[0] = 2;
    T_OK(hint_ialltoallv(s, sc, sd, HINT_BYTE, r, rc, rd, HINT_BYTE, W, &q));
    T_CHECK(hint_wait(&q, HINT_STATUS_IGNORE) == HINT_ERR_MISMATCH);
    AT("HINT_COLL_CHECK: ialltoall with different collectives (iallgather on rank 0)");
    if (R == 0)
        T_OK(hint_iallgather(s, 1, HINT_BYTE, r, 1, HINT_BYTE, W, &q));
    else
        T_OK(hint_ialltoall(s, 1, HINT_BYTE, r, 1, HINT_BYTE, W, &q));
    T_CHECK(hint_wait(&q, HINT_STATUS_IGNORE) == HINT_ERR_MISMATCH);
    AT("HINT_COLL_CHECK: then a call that agrees");
    T_OK(hint_iallreduce(&x, &y, 1, HINT_INT, HINT_SUM, W, &q));
    wait_ok(&q);
    T_CHECK(y == 5 * P);
}

/* A group freed with its collectives in flight: the free takes effect once they complete. */
static void t_free_in_flight(void)
{
    AT("hint_group_free with ialltoall and iallreduce in flight");
    hint_group D;
    T_OK(hint_group_dup(W, &D));
    size_t n = 1000;
    unsigned char *s = malloc(n * P), *r = malloc(n * P);
    T_CHECK(s && r);
    for (int p = 0; p < P; p++)
        for (size_t i = 0; i < n; i++)
            s[(size_t)p * n + i] = byte_of(R, p, i);
    int x = R + 1, y = 0;
    hint_request q[2];
    T_OK(hint_ialltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, D, &q[0]));
    T_OK(hint_iallreduce(&x, &y, 1, HINT_INT, HINT_SUM, D, &q[1]));
    T_OK(hint_group_free(&D));
    T_CHECK(D == HINT_GROUP_NULL);
    T_OK(hint_waitall(2, q, HINT_STATUSES_IGNORE));
    for (int p = 0; p < P; p++)
        same_bytes(r + (size_t)p * n, p, R, n, "ialltoall on a freed group");
    T_CHECK(y == P * (P + 1) / 2);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    bool only_heap = false, check = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
            expect = argv[++i];
        } else if (strcmp(argv[i], "--only-heap") == 0) {
            only_heap = true;
        } else if (strcmp(argv[i], "--check") == 0) {
            check = true;
        } else {
            printf("usage: nbc_heap [--expect NAME] [--only-heap] [--check]\n"
                   "  the single-copy nonblocking collectives at any P on one node; rank 0 prints \"ok nbc_heap\"\n");
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    T_OK(hint_init(&argc, &argv));
    W = HINT_WORLD;
    T_OK(hint_group_rank(W, &R));
    T_OK(hint_group_size(W, &P));
    T_CHECK(P <= MAXP);
    if (check) { /* HINT_COLL_CHECK=1: the mismatches it finds */
        t_check();
        T_OK(hint_finalize());
        if (R == 0)
            printf("ok nbc_heap --check\n");
        return 0;
    }
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        for (int h = 1; h >= 0; h--) {
            bool heap = h;
            t_alltoall(n, heap);
            t_alltoallv(n, heap);
            t_allgather(n, heap, false);
            t_allgather(n, heap, true);
            t_bcast(n, 0, heap);
            t_bcast(n, P - 1, heap);
            t_gather_scatter(n, 0, heap, false);
            t_gather_scatter(n, P - 1, heap, true);
            t_reductions(n / sizeof(int) + (n & 1), P - 1, heap);
        }
    }
    if (!only_heap) {
        t_many(true);
        t_many(false);
        t_post_and_compute();
        t_mismatch();
        t_free_in_flight();
    }
    T_OK(hint_finalize());
    if (R == 0)
        printf("ok nbc_heap\n");
    return 0;
}
