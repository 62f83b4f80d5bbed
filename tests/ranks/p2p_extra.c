/*
 * tests/ranks/p2p_extra.c — the point-to-point calls beyond send and receive (issue 20), run as
 * ranks under hintrun:  p2p_extra CASE
 *   probe       probe then receive while several senders race; iprobe is false before any send
 *   mprobe      matched probes with HINT_ANY_SOURCE while other receives are posted
 *   ssend       a synchronous send does not complete while its receiver is held at a barrier
 *   complete    waitany / waitsome / testall / testany / testsome with null and inactive entries
 *   cancel      cancel of a posted receive, of a matched one, of a send, of a started persistent one
 *   persistent  send_init / recv_init loops of 1000 starts, 0 B to rendezvous sizes, derived types
 *   detach      hint_request_free of requests still in flight
 * Every case checks what arrived against what was sent and exits non-zero on the first difference.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

/* Sizes from empty to rendezvous (above the largest cell payload, 32 KiB), odd ones among them. */
static const size_t sizes[] = {0, 1, 7, 1000, 4099, 40001, 100003};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Byte i of message `seq` from src: every message is told apart by its bytes and its size. */
static unsigned char pattern(int src, int seq, size_t i)
{
    return (unsigned char)(src * 131 + seq * 29 + i * 13 + (i >> 9));
}

static void fill(unsigned char *b, size_t n, int src, int seq)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(src, seq, i);
}

static void verify(const unsigned char *b, size_t n, int src, int seq)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(src, seq, i))
            RC_FAIL("byte %zu of %zu from %d (message %d) is %u, expected %u", i, n, src, seq, b[i],
                    pattern(src, seq, i));
}

static int next_rank(void) { return (rc_rank + 1) % P; }
static int prev_rank(void) { return (rc_rank + P - 1) % P; }

/* ---- probe ---- */

/* Every rank sends NSIZES messages, one of each size, to `root` on one tag, so the senders race
   for the root's probes. A probe names a source S and a size; the receive from S that follows
   must get exactly that message: S's oldest one, of that size. */
static void probe_race(int root)
{
    const int tag = 10;
    unsigned char **sb = malloc(NSIZES * sizeof *sb);
    hint_request *sr = malloc(NSIZES * sizeof *sr);
    for (size_t k = 0; k < NSIZES; k++) {
        sb[k] = malloc(sizes[k] + 1);
        fill(sb[k], sizes[k], rc_rank, (int)k);
        RC_OK(hint_isend(sb[k], sizes[k], HINT_BYTE, root, tag, HINT_WORLD, &sr[k]));
    }
    if (rc_rank == root) {
        int *seen = calloc((size_t)P, sizeof *seen);
        unsigned char *rb = malloc(sizes[NSIZES - 1] + 1);
        for (int m = 0; m < P * (int)NSIZES; m++) {
            hint_status ps, rs;
            if (m % 2) {
                RC_OK(hint_probe(HINT_ANY_SOURCE, tag, HINT_WORLD, &ps));
            } else { /* iprobe until something is there */
                int flag = 0;
                while (!flag)
                    RC_OK(hint_iprobe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, &ps));
            }
            int s = ps.source;
            RC_CHECK(s >= 0 && s < P && ps.tag == tag && ps.error == 0);
            RC_CHECK(seen[s] < (int)NSIZES && ps.bytes == sizes[seen[s]]);
            memset(rb, 0xee, ps.bytes + 1);
            RC_OK(hint_recv(rb, ps.bytes, HINT_BYTE, s, tag, HINT_WORLD, &rs));
            RC_CHECK(rs.source == s && rs.tag == tag && rs.bytes == ps.bytes);
            verify(rb, rs.bytes, s, seen[s]);
            RC_CHECK(rb[rs.bytes] == 0xee);
            seen[s]++;
        }
        for (int p = 0; p < P; p++)
            RC_CHECK(seen[p] == (int)NSIZES);
        int flag = 1;
        RC_OK(hint_iprobe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, NULL));
        RC_CHECK(flag == 0);
        free(seen);
        free(rb);
    }
    RC_OK(hint_waitall(NSIZES, sr, NULL));
    for (size_t k = 0; k < NSIZES; k++)
        free(sb[k]);
    free(sb);
    free(sr);
}

static void probe_cases(void)
{
    /* Nothing was sent yet: every iprobe is false, on every group. */
    int flag = 1;
    hint_status st;
    RC_OK(hint_iprobe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, &st));
    RC_CHECK(flag == 0);
    RC_OK(hint_iprobe(prev_rank(), 3, HINT_WORLD, &flag, &st));
    RC_CHECK(flag == 0);
    /* HINT_PROC_NULL: found at once, nothing from nobody */
    RC_OK(hint_iprobe(HINT_PROC_NULL, 3, HINT_WORLD, &flag, &st));
    RC_CHECK(flag == 1 && st.source == HINT_PROC_NULL && st.tag == HINT_ANY_TAG && st.bytes == 0);
    RC_OK(hint_probe(HINT_PROC_NULL, HINT_ANY_TAG, HINT_WORLD, &st));
    RC_CHECK(st.source == HINT_PROC_NULL && st.bytes == 0);
    /* bad arguments */
    RC_EXPECT(hint_iprobe(P, 3, HINT_WORLD, &flag, &st), HINT_ERR_RANK);
    RC_EXPECT(hint_iprobe(0, -5, HINT_WORLD, &flag, &st), HINT_ERR_TAG);
    RC_EXPECT(hint_iprobe(0, 3, HINT_WORLD, NULL, &st), HINT_ERR_ARG);
    RC_EXPECT(hint_probe(0, 3, HINT_GROUP_NULL, &st), HINT_ERR_GROUP);
    RC_OK(hint_barrier(HINT_WORLD));

    /* A message on the world is not seen on a duplicate, nor with another tag, and a derived type's
       message reports its packed bytes. */
    hint_group dup;
    RC_OK(hint_group_dup(HINT_WORLD, &dup));
    hint_type vec;
    RC_OK(hint_type_vector(5, 3, 4, HINT_INT, &vec));
    RC_OK(hint_type_commit(&vec));
    int sv[20], rv[15];
    for (int i = 0; i < 20; i++)
        sv[i] = rc_rank * 100 + i;
    hint_request r;
    RC_OK(hint_isend(sv, 1, vec, next_rank(), 4, HINT_WORLD, &r));
    do
        RC_OK(hint_iprobe(prev_rank(), 4, HINT_WORLD, &flag, &st));
    while (!flag);
    RC_CHECK(st.source == prev_rank() && st.tag == 4 && st.bytes == 15 * sizeof(int));
    RC_OK(hint_iprobe(HINT_ANY_SOURCE, HINT_ANY_TAG, dup, &flag, NULL));
    RC_CHECK(flag == 0);
    RC_OK(hint_iprobe(HINT_ANY_SOURCE, 5, HINT_WORLD, &flag, NULL));
    RC_CHECK(flag == 0);
    RC_OK(hint_probe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &st)); /* still there */
    RC_CHECK(st.source == prev_rank() && st.bytes == 15 * sizeof(int));
    RC_OK(hint_recv(rv, 15, HINT_INT, st.source, st.tag, HINT_WORLD, &st));
    for (int b = 0, k = 0; b < 5; b++)
        for (int j = 0; j < 3; j++, k++)
            RC_CHECK(rv[k] == prev_rank() * 100 + b * 4 + j);
    RC_OK(hint_wait(&r, NULL));
    RC_OK(hint_type_free(&vec));
    RC_OK(hint_group_free(&dup));
    RC_OK(hint_barrier(HINT_WORLD));

    for (int root = 0; root < P && root < 4; root++) {
        probe_race(root);
        RC_OK(hint_barrier(HINT_WORLD));
    }
}

/* ---- matched probe ---- */

/* Every rank sends two messages on tag 62 to root (an odd small one, then a large one) and, after
   a barrier, one on tag 63. The root posted its tag-63 receives first (from any source); it takes
   each sender's first tag-62 message with hint_mprobe(HINT_ANY_SOURCE), posts a receive for the
   second from that sender, and only then receives the probed one: the posted receive must get
   the second (the probed message left the queue), and the tag-63 receives must stay untouched. */
static void mprobe_round(int root)
{
    size_t small = 3 + (size_t)rc_rank % 5, large = 50001;
    unsigned char *s0 = malloc(small), *s1 = malloc(large);
    fill(s0, small, rc_rank, 0);
    fill(s1, large, rc_rank, 1);
    int mine = rc_rank * 7 + 1;
    hint_request *late = NULL;
    int *late_v = NULL;
    if (rc_rank == root) {
        late = malloc((size_t)P * sizeof *late);
        late_v = malloc((size_t)P * sizeof *late_v);
        for (int p = 0; p < P; p++)
            RC_OK(hint_irecv(&late_v[p], 1, HINT_INT, HINT_ANY_SOURCE, 63, HINT_WORLD, &late[p]));
    }
    RC_OK(hint_barrier(HINT_WORLD));
    hint_request sr[2];
    RC_OK(hint_isend(s0, small, HINT_BYTE, root, 62, HINT_WORLD, &sr[0]));
    RC_OK(hint_isend(s1, large, HINT_BYTE, root, 62, HINT_WORLD, &sr[1]));
    if (rc_rank == root) {
        int *seen = calloc((size_t)P, sizeof *seen);
        unsigned char *r0 = malloc(16), *r1 = malloc(large);
        for (int m = 0; m < P; m++) {
            hint_message msg = HINT_MESSAGE_NULL;
            hint_status ps, st;
            if (m % 2) {
                RC_OK(hint_mprobe(HINT_ANY_SOURCE, 62, HINT_WORLD, &msg, &ps));
            } else {
                int flag = 0;
                while (!flag)
                    RC_OK(hint_improbe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, &msg, &ps));
            }
            int s = ps.source;
            RC_CHECK(msg != HINT_MESSAGE_NULL && s >= 0 && s < P && !seen[s]);
            RC_CHECK(ps.tag == 62 && ps.bytes == 3 + (size_t)s % 5);
            seen[s] = 1;
            hint_request rr;
            RC_OK(hint_irecv(r1, large, HINT_BYTE, s, 62, HINT_WORLD, &rr));
            /* the probed message is nobody else's: this receive gets the second one */
            memset(r0, 0xee, 16);
            hint_message copy = msg;
            RC_OK(hint_mrecv(r0, 16, HINT_BYTE, &msg, &st));
            RC_CHECK(msg == HINT_MESSAGE_NULL);
            RC_CHECK(st.source == s && st.tag == 62 && st.bytes == ps.bytes && st.error == 0);
            verify(r0, st.bytes, s, 0);
            RC_CHECK(r0[st.bytes] == 0xee);
            RC_EXPECT(hint_mrecv(r0, 16, HINT_BYTE, &copy, &st), HINT_ERR_REQUEST); /* received already */
            RC_OK(hint_wait(&rr, &st));
            RC_CHECK(st.source == s && st.bytes == large);
            verify(r1, large, s, 1);
        }
        free(seen);
        free(r0);
        free(r1);
    }
    RC_OK(hint_waitall(2, sr, NULL));
    RC_OK(hint_barrier(HINT_WORLD));
    RC_OK(hint_send(&mine, 1, HINT_INT, root, 63, HINT_WORLD));
    if (rc_rank == root) {
        hint_status *st = malloc((size_t)P * sizeof *st);
        int *seen = calloc((size_t)P, sizeof *seen);
        RC_OK(hint_waitall((size_t)P, late, st));
        for (int p = 0; p < P; p++) {
            int s = st[p].source;
            RC_CHECK(s >= 0 && s < P && !seen[s] && late_v[p] == s * 7 + 1);
            seen[s] = 1;
        }
        free(st);
        free(seen);
        free(late);
        free(late_v);
    }
    free(s0);
    free(s1);
}

static void mprobe_cases(void)
{
    hint_message m = HINT_MESSAGE_NULL;
    hint_status st;
    int flag = 1;
    RC_OK(hint_improbe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, &m, &st));
    RC_CHECK(flag == 0 && m == HINT_MESSAGE_NULL);
    /* HINT_PROC_NULL: HINT_MESSAGE_NO_PROC, whose receive completes at once with nothing */
    RC_OK(hint_mprobe(HINT_PROC_NULL, 1, HINT_WORLD, &m, &st));
    RC_CHECK(m == HINT_MESSAGE_NO_PROC && st.source == HINT_PROC_NULL);
    int v = 42;
    RC_OK(hint_mrecv(&v, 1, HINT_INT, &m, &st));
    RC_CHECK(m == HINT_MESSAGE_NULL && st.source == HINT_PROC_NULL && st.bytes == 0 && v == 42);
    RC_EXPECT(hint_mrecv(&v, 1, HINT_INT, &m, &st), HINT_ERR_REQUEST); /* HINT_MESSAGE_NULL */
    hint_message bogus = (hint_message)&v;
    RC_EXPECT(hint_mrecv(&v, 1, HINT_INT, &bogus, &st), HINT_ERR_REQUEST);
    RC_EXPECT(hint_mprobe(0, 1, HINT_WORLD, NULL, &st), HINT_ERR_ARG);
    RC_OK(hint_barrier(HINT_WORLD));

    for (int root = 0; root < P && root < 5; root++)
        mprobe_round(root);

    /* a matched probe's message into a buffer too small: HINT_ERR_TRUNCATE, what fits stored */
    double d[3] = {rc_rank + 0.25, 2, 3}, e[2] = {0, 0};
    hint_request r;
    RC_OK(hint_isend(d, 3, HINT_DOUBLE, next_rank(), 8, HINT_WORLD, &r));
    RC_OK(hint_mprobe(prev_rank(), 8, HINT_WORLD, &m, &st));
    RC_CHECK(st.bytes == 3 * sizeof(double));
    RC_EXPECT(hint_mrecv(e, 2, HINT_DOUBLE, &m, &st), HINT_ERR_TRUNCATE);
    RC_CHECK(st.error == HINT_ERR_TRUNCATE && e[0] == prev_rank() + 0.25 && e[1] == 2);
    RC_OK(hint_wait(&r, NULL));

    /* hint_imrecv completes through hint_wait */
    RC_OK(hint_isend(d, 3, HINT_DOUBLE, next_rank(), 9, HINT_WORLD, &r));
    RC_OK(hint_mprobe(HINT_ANY_SOURCE, 9, HINT_WORLD, &m, &st));
    double f[3];
    hint_request rr;
    RC_OK(hint_imrecv(f, 3, HINT_DOUBLE, &m, &rr));
    RC_CHECK(m == HINT_MESSAGE_NULL);
    RC_OK(hint_wait(&rr, &st));
    RC_CHECK(st.source == prev_rank() && f[0] == prev_rank() + 0.25 && f[2] == 3);
    RC_OK(hint_wait(&r, NULL));
    RC_OK(hint_barrier(HINT_WORLD));
}

/* ---- synchronous send ---- */

/* Send `n` elements of t (of `bytes` packed bytes) to the next rank with hint_issend while the
   next rank waits at a barrier before it posts its receive: the send must not complete before. */
static void ssend_held(const void *buf, size_t n, hint_type t, void *rbuf, size_t bytes)
{
    int next = next_rank(), prev = prev_rank();
    hint_request s;
    RC_OK(hint_issend(buf, n, t, next, 20, HINT_WORLD, &s));
    int done = 0;
    hint_status st;
    for (int i = 0; i < 200 && !done; i++) {
        RC_OK(hint_test(&s, &done, &st));
        if (i % 50 == 49)
            usleep(200); /* let the receiver's rank run: it must still not match before the barrier */
    }
    RC_CHECK(!done && s != HINT_REQUEST_NULL);
    RC_OK(hint_barrier(HINT_WORLD));
    hint_request r;
    RC_OK(hint_irecv(rbuf, n, t, prev, 20, HINT_WORLD, &r));
    RC_OK(hint_wait(&s, &st));
    RC_CHECK(s == HINT_REQUEST_NULL && st.bytes == bytes);
    RC_OK(hint_wait(&r, &st));
    RC_CHECK(st.source == prev && st.bytes == bytes && st.error == 0);
}

static void ssend_cases(void)
{
    unsigned char *s = malloc(sizes[NSIZES - 1] + 1), *r = malloc(sizes[NSIZES - 1] + 1);
    for (size_t k = 0; k < NSIZES; k++) {
        fill(s, sizes[k], rc_rank, (int)k);
        memset(r, 0xee, sizes[k] + 1);
        ssend_held(s, sizes[k], HINT_BYTE, r, sizes[k]);
        verify(r, sizes[k], prev_rank(), (int)k);
        RC_CHECK(r[sizes[k]] == 0xee);
    }
    /* a derived type: a column of a 6 x 4 matrix of doubles */
    hint_type col;
    RC_OK(hint_type_vector(6, 1, 4, HINT_DOUBLE, &col));
    RC_OK(hint_type_commit(&col));
    double m[24], c[24];
    for (int i = 0; i < 24; i++) {
        m[i] = rc_rank + i / 100.0;
        c[i] = -1;
    }
    ssend_held(m + 1, 1, col, c + 2, 6 * sizeof(double));
    for (int i = 0; i < 24; i++)
        RC_CHECK(c[i] == (i % 4 == 2 && i < 24 ? prev_rank() + (i - 1) / 100.0 : -1));
    RC_OK(hint_type_free(&col));

    /* blocking hint_ssend against a receive posted first, to self and to the next rank */
    int v = rc_rank, w = -1;
    hint_request rr;
    RC_OK(hint_irecv(&w, 1, HINT_INT, rc_rank, 21, HINT_WORLD, &rr));
    RC_OK(hint_ssend(&v, 1, HINT_INT, rc_rank, 21, HINT_WORLD));
    RC_OK(hint_wait(&rr, NULL));
    RC_CHECK(w == rc_rank);
    RC_OK(hint_irecv(&w, 1, HINT_INT, prev_rank(), 22, HINT_WORLD, &rr));
    RC_OK(hint_barrier(HINT_WORLD));
    RC_OK(hint_ssend(&v, 1, HINT_INT, next_rank(), 22, HINT_WORLD));
    RC_OK(hint_wait(&rr, NULL));
    RC_CHECK(w == prev_rank());
    RC_OK(hint_ssend(&v, 1, HINT_INT, HINT_PROC_NULL, 22, HINT_WORLD));
    RC_EXPECT(hint_ssend(&v, 1, HINT_INT, P, 22, HINT_WORLD), HINT_ERR_RANK);
    RC_EXPECT(hint_issend(&v, 1, HINT_INT, 0, 22, HINT_WORLD, NULL), HINT_ERR_ARG);
    free(s);
    free(r);
    RC_OK(hint_barrier(HINT_WORLD));
}

/* ---- completion calls ---- */

static void complete_cases(void)
{
    size_t idx = 0, out = 0, ind[8];
    int done = 0;
    hint_status st, sts[8];
    hint_request nul[3] = {HINT_REQUEST_NULL, HINT_REQUEST_NULL, HINT_REQUEST_NULL};
    /* only null requests (or none at all) */
    RC_OK(hint_waitany(3, nul, &idx, &st));
    RC_CHECK(idx == HINT_UNDEFINED_INDEX && st.source == HINT_PROC_NULL && st.tag == HINT_ANY_TAG);
    RC_OK(hint_waitany(0, NULL, &idx, &st));
    RC_CHECK(idx == HINT_UNDEFINED_INDEX);
    RC_OK(hint_testany(3, nul, &idx, &done, &st));
    RC_CHECK(done == 1 && idx == HINT_UNDEFINED_INDEX);
    RC_OK(hint_waitsome(3, nul, &out, ind, sts));
    RC_CHECK(out == HINT_UNDEFINED_INDEX);
    RC_OK(hint_testsome(3, nul, &out, ind, sts));
    RC_CHECK(out == HINT_UNDEFINED_INDEX);
    done = 0;
    RC_OK(hint_testall(3, nul, &done, sts));
    RC_CHECK(done == 1 && sts[2].source == HINT_PROC_NULL);
    RC_OK(hint_waitall(3, nul, sts));
    RC_EXPECT(hint_waitany(3, nul, NULL, &st), HINT_ERR_ARG);
    RC_EXPECT(hint_testany(3, NULL, &idx, &done, &st), HINT_ERR_ARG);
    hint_request bad[1] = {(hint_request)&st};
    RC_EXPECT(hint_waitsome(1, bad, &out, ind, sts), HINT_ERR_REQUEST);

    /* Receives from the previous rank with nulls between them, and an inactive persistent one,
       posted before the sender passed the barrier: nothing can complete yet. */
    enum { N = 4 };
    int vals[N], inact_buf = -1;
    hint_request r[2 * N + 1];
    hint_request inactive;
    RC_OK(hint_recv_init(&inact_buf, 1, HINT_INT, prev_rank(), 99, HINT_WORLD, &inactive));
    for (int i = 0; i < N; i++) {
        r[2 * i] = HINT_REQUEST_NULL;
        RC_OK(hint_irecv(&vals[i], 1, HINT_INT, prev_rank(), 30 + i, HINT_WORLD, &r[2 * i + 1]));
    }
    r[2 * N] = inactive;
    RC_OK(hint_testall(2 * N + 1, r, &done, sts));
    RC_CHECK(done == 0 && r[1] != HINT_REQUEST_NULL && r[2 * N - 1] != HINT_REQUEST_NULL);
    RC_OK(hint_testany(2 * N + 1, r, &idx, &done, &st));
    RC_CHECK(done == 0 && idx == HINT_UNDEFINED_INDEX);
    RC_OK(hint_testsome(2 * N + 1, r, &out, ind, sts));
    RC_CHECK(out == 0);
    RC_OK(hint_barrier(HINT_WORLD));
    /* tags 30 and 31 first: waitany gets them one by one */
    for (int i = 0; i < N; i++) {
        int v = rc_rank * 10 + i;
        RC_OK(hint_send(&v, 1, HINT_INT, next_rank(), 30 + i, HINT_WORLD));
        if (i == 1)
            break;
    }
    int got[N] = {0};
    for (int k = 0; k < 2; k++) {
        RC_OK(hint_waitany(2 * N + 1, r, &idx, &st));
        RC_CHECK(idx == 1 || idx == 3);
        RC_CHECK(r[idx] == HINT_REQUEST_NULL && st.source == prev_rank() && st.tag == 30 + (int)idx / 2);
        RC_CHECK(!got[idx / 2] && vals[idx / 2] == prev_rank() * 10 + (int)idx / 2);
        got[idx / 2] = 1;
    }
    RC_OK(hint_barrier(HINT_WORLD));
    for (int i = 2; i < N; i++) {
        int v = rc_rank * 10 + i;
        RC_OK(hint_send(&v, 1, HINT_INT, next_rank(), 30 + i, HINT_WORLD));
    }
    size_t total = 0;
    while (total < 2) {
        RC_OK(hint_waitsome(2 * N + 1, r, &out, ind, sts));
        RC_CHECK(out >= 1 && out <= 2);
        for (size_t k = 0; k < out; k++) {
            size_t i = ind[k];
            RC_CHECK((i == 5 || i == 7) && r[i] == HINT_REQUEST_NULL && !got[i / 2]);
            RC_CHECK(sts[k].tag == 30 + (int)i / 2 && vals[i / 2] == prev_rank() * 10 + (int)i / 2);
            got[i / 2] = 1;
        }
        total += out;
    }
    RC_OK(hint_waitany(2 * N + 1, r, &idx, &st));
    RC_CHECK(idx == HINT_UNDEFINED_INDEX); /* only nulls and the inactive one are left */
    RC_OK(hint_waitsome(2 * N + 1, r, &out, ind, sts));
    RC_CHECK(out == HINT_UNDEFINED_INDEX);
    RC_CHECK(r[2 * N] == inactive);

    /* testall / testany polling until done */
    int a = rc_rank, b = -1, c = -1;
    hint_request q[3];
    RC_OK(hint_irecv(&b, 1, HINT_INT, prev_rank(), 40, HINT_WORLD, &q[0]));
    q[1] = HINT_REQUEST_NULL;
    RC_OK(hint_isend(&a, 1, HINT_INT, next_rank(), 40, HINT_WORLD, &q[2]));
    do
        RC_OK(hint_testall(3, q, &done, sts));
    while (!done);
    RC_CHECK(q[0] == HINT_REQUEST_NULL && q[2] == HINT_REQUEST_NULL && b == prev_rank());
    RC_CHECK(sts[0].source == prev_rank() && sts[1].source == HINT_PROC_NULL && sts[2].bytes == sizeof(int));
    RC_OK(hint_irecv(&c, 1, HINT_INT, HINT_ANY_SOURCE, 41, HINT_WORLD, &q[1]));
    RC_OK(hint_send(&a, 1, HINT_INT, next_rank(), 41, HINT_WORLD));
    do
        RC_OK(hint_testany(3, q, &idx, &done, &st));
    while (!done);
    RC_CHECK(idx == 1 && c == prev_rank() && st.source == prev_rank() && q[1] == HINT_REQUEST_NULL);
    RC_OK(hint_request_free(&inactive));
    RC_CHECK(inactive == HINT_REQUEST_NULL);
    RC_OK(hint_barrier(HINT_WORLD));
}

/* ---- cancel ---- */

static void cancel_cases(void)
{
    hint_status st;
    int flag = -1;
    /* a receive nobody sends to: cancelled, and a later message of its envelope goes elsewhere */
    int v = -1, w = -1;
    hint_request r;
    RC_OK(hint_irecv(&v, 1, HINT_INT, HINT_ANY_SOURCE, 70, HINT_WORLD, &r));
    RC_OK(hint_cancel(&r));
    RC_CHECK(r != HINT_REQUEST_NULL);
    RC_OK(hint_wait(&r, &st));
    RC_CHECK(r == HINT_REQUEST_NULL);
    RC_OK(hint_test_cancelled(&st, &flag));
    RC_CHECK(flag == 1 && v == -1);
    RC_OK(hint_barrier(HINT_WORLD));
    int x = rc_rank + 1000;
    RC_OK(hint_send(&x, 1, HINT_INT, next_rank(), 70, HINT_WORLD));
    RC_OK(hint_recv(&w, 1, HINT_INT, HINT_ANY_SOURCE, 70, HINT_WORLD, &st));
    RC_CHECK(w == prev_rank() + 1000 && v == -1);
    RC_OK(hint_test_cancelled(&st, &flag));
    RC_CHECK(flag == 0);

    /* Matched receives cannot be cancelled: the synchronous send completes only once its receive
       matched, and the barrier after it tells the receiver so. Small (whole at once) and large
       (possibly still streaming when cancelled). */
    for (size_t k = 0; k < NSIZES; k++) {
        size_t n = sizes[k];
        unsigned char *s = malloc(n + 1), *rb = malloc(n + 1);
        fill(s, n, rc_rank, (int)k);
        RC_OK(hint_irecv(rb, n, HINT_BYTE, prev_rank(), 71, HINT_WORLD, &r));
        RC_OK(hint_barrier(HINT_WORLD));
        RC_OK(hint_ssend(s, n, HINT_BYTE, next_rank(), 71, HINT_WORLD));
        RC_OK(hint_barrier(HINT_WORLD));
        RC_OK(hint_cancel(&r));
        RC_OK(hint_wait(&r, &st));
        RC_OK(hint_test_cancelled(&st, &flag));
        RC_CHECK(flag == 0 && st.source == prev_rank() && st.bytes == n);
        verify(rb, n, prev_rank(), (int)k);
        free(s);
        free(rb);
    }

    /* a send: not cancellable, it completes as usual */
    hint_request s;
    RC_OK(hint_isend(&x, 1, HINT_INT, next_rank(), 72, HINT_WORLD, &s));
    RC_EXPECT(hint_cancel(&s), HINT_ERR_UNSUPPORTED);
    RC_OK(hint_recv(&w, 1, HINT_INT, prev_rank(), 72, HINT_WORLD, NULL));
    RC_OK(hint_wait(&s, NULL));
    RC_CHECK(w == prev_rank() + 1000);
    hint_request none = HINT_REQUEST_NULL;
    RC_EXPECT(hint_cancel(&none), HINT_ERR_REQUEST);
    RC_EXPECT(hint_cancel(NULL), HINT_ERR_ARG);
    RC_EXPECT(hint_test_cancelled(NULL, &flag), HINT_ERR_ARG);

    /* a started persistent receive: cancelled, then started again and matched */
    hint_request pr;
    RC_OK(hint_recv_init(&w, 1, HINT_INT, prev_rank(), 73, HINT_WORLD, &pr));
    RC_OK(hint_cancel(&pr)); /* inactive: nothing to cancel */
    RC_OK(hint_start(&pr));
    RC_OK(hint_cancel(&pr));
    RC_OK(hint_wait(&pr, &st));
    RC_OK(hint_test_cancelled(&st, &flag));
    RC_CHECK(flag == 1 && pr != HINT_REQUEST_NULL);
    RC_OK(hint_barrier(HINT_WORLD)); /* no tag-73 message is sent before every rank cancelled */
    w = -1;
    RC_OK(hint_start(&pr));
    RC_OK(hint_send(&x, 1, HINT_INT, next_rank(), 73, HINT_WORLD));
    RC_OK(hint_wait(&pr, &st));
    RC_OK(hint_test_cancelled(&st, &flag));
    RC_CHECK(flag == 0 && w == prev_rank() + 1000 && st.source == prev_rank());
    RC_OK(hint_request_free(&pr));
    RC_OK(hint_barrier(HINT_WORLD));
}

/* ---- persistent requests ---- */

static void persistent_loop(size_t bytes, int starts)
{
    unsigned char *s = malloc(bytes + 1), *r = malloc(bytes + 1);
    hint_request q[2];
    RC_OK(hint_recv_init(r, bytes, HINT_BYTE, prev_rank(), 80, HINT_WORLD, &q[0]));
    RC_OK(hint_send_init(s, bytes, HINT_BYTE, next_rank(), 80, HINT_WORLD, &q[1]));
    hint_request keep[2] = {q[0], q[1]};
    hint_status st[2];
    for (int i = 0; i < starts; i++) {
        fill(s, bytes, rc_rank, i);
        memset(r, 0xee, bytes + 1);
        RC_OK(hint_startall(2, q));
        RC_OK(hint_waitall(2, q, st));
        RC_CHECK(q[0] == keep[0] && q[1] == keep[1]); /* still allocated, inactive */
        RC_CHECK(st[0].source == prev_rank() && st[0].tag == 80 && st[0].bytes == bytes && st[1].bytes == bytes);
        verify(r, bytes, prev_rank(), i);
        RC_CHECK(r[bytes] == 0xee);
    }
    RC_OK(hint_request_free(&q[0]));
    RC_OK(hint_request_free(&q[1]));
    RC_CHECK(q[0] == HINT_REQUEST_NULL && q[1] == HINT_REQUEST_NULL);
    free(s);
    free(r);
}

static void persistent_cases(void)
{
    for (size_t k = 0; k < NSIZES; k++)
        persistent_loop(sizes[k], sizes[k] > 10000 ? 100 : 1000);

    /* the life cycle: waits and tests of an inactive request return at once with an empty status */
    int v = 7, w = -1, done = 0;
    hint_request s, r;
    hint_status st;
    RC_OK(hint_send_init(&v, 1, HINT_INT, next_rank(), 81, HINT_WORLD, &s));
    RC_OK(hint_recv_init(&w, 1, HINT_INT, HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &r));
    RC_OK(hint_wait(&s, &st));
    RC_CHECK(s != HINT_REQUEST_NULL && st.source == HINT_PROC_NULL && st.bytes == 0);
    RC_OK(hint_test(&r, &done, &st));
    RC_CHECK(done == 1 && r != HINT_REQUEST_NULL && st.source == HINT_PROC_NULL);
    RC_OK(hint_start(&r));
    RC_EXPECT(hint_start(&r), HINT_ERR_REQUEST); /* active already */
    hint_request pair[2] = {s, r};
    RC_EXPECT(hint_startall(2, pair), HINT_ERR_REQUEST); /* one active: nothing started */
    RC_OK(hint_start(&s));
    RC_OK(hint_wait(&r, &st));
    RC_CHECK(w == 7 && st.source == prev_rank() && st.tag == 81);
    RC_OK(hint_wait(&s, &st));
    RC_OK(hint_request_free(&s));
    RC_OK(hint_request_free(&r));
    hint_request plain;
    RC_OK(hint_isend(&v, 1, HINT_INT, HINT_PROC_NULL, 81, HINT_WORLD, &plain));
    RC_EXPECT(hint_start(&plain), HINT_ERR_REQUEST); /* not persistent */
    RC_OK(hint_wait(&plain, NULL));
    RC_EXPECT(hint_start(&plain), HINT_ERR_REQUEST); /* HINT_REQUEST_NULL */
    RC_EXPECT(hint_request_free(&plain), HINT_ERR_REQUEST);
    RC_EXPECT(hint_send_init(&v, 1, HINT_INT, P, 81, HINT_WORLD, &s), HINT_ERR_RANK);
    RC_EXPECT(hint_recv_init(&w, 1, HINT_INT, 0, 81, HINT_WORLD, NULL), HINT_ERR_ARG);
    /* HINT_PROC_NULL: every start completes at once */
    RC_OK(hint_send_init(&v, 1, HINT_INT, HINT_PROC_NULL, 81, HINT_WORLD, &s));
    for (int i = 0; i < 3; i++) {
        RC_OK(hint_start(&s));
        RC_OK(hint_wait(&s, &st));
        RC_CHECK(st.source == HINT_PROC_NULL);
    }
    RC_OK(hint_request_free(&s));

    /* a derived type, both sides, from any source, 1000 starts */
    hint_type vec;
    RC_OK(hint_type_vector(4, 2, 3, HINT_INT, &vec));
    RC_OK(hint_type_commit(&vec));
    int sv[12], rv[12];
    hint_request q[2];
    RC_OK(hint_send_init(sv, 1, vec, next_rank(), 82, HINT_WORLD, &q[0]));
    RC_OK(hint_recv_init(rv, 1, vec, HINT_ANY_SOURCE, 82, HINT_WORLD, &q[1]));
    RC_OK(hint_type_free(&vec)); /* the requests hold it */
    for (int i = 0; i < 1000; i++) {
        for (int j = 0; j < 12; j++) {
            sv[j] = rc_rank * 100000 + i * 12 + j;
            rv[j] = -1;
        }
        RC_OK(hint_startall(2, q));
        hint_status sts[2];
        RC_OK(hint_waitall(2, q, sts));
        RC_CHECK(sts[1].source == prev_rank() && sts[1].bytes == 8 * sizeof(int));
        for (int j = 0; j < 12; j++)
            RC_CHECK(rv[j] == (j % 3 == 2 ? -1 : prev_rank() * 100000 + i * 12 + j));
    }
    RC_OK(hint_request_free(&q[0]));
    RC_OK(hint_request_free(&q[1]));
    RC_OK(hint_barrier(HINT_WORLD));
}

/* ---- hint_request_free of requests in flight ---- */

static void detach_cases(void)
{
    /* fire-and-forget sends, many more than stay in flight at once (so freed ones are reused) */
    enum { N = 3000 };
    int *sv = malloc(N * sizeof *sv), *rv = malloc(N * sizeof *rv);
    for (int i = 0; i < N; i++) {
        sv[i] = rc_rank * N + i;
        hint_request s;
        RC_OK(hint_isend(&sv[i], 1, HINT_INT, next_rank(), 90, HINT_WORLD, &s));
        RC_OK(hint_request_free(&s));
        RC_CHECK(s == HINT_REQUEST_NULL);
        if (i % 100 == 99)
            for (int j = i - 99; j <= i; j++)
                RC_OK(hint_recv(&rv[j], 1, HINT_INT, prev_rank(), 90, HINT_WORLD, NULL));
    }
    for (int i = 0; i < N; i++)
        RC_CHECK(rv[i] == prev_rank() * N + i);
    /* a large send freed before its receive is posted */
    size_t n = 100003;
    unsigned char *s = malloc(n), *r = malloc(n);
    fill(s, n, rc_rank, 1);
    hint_request q;
    RC_OK(hint_isend(s, n, HINT_BYTE, next_rank(), 91, HINT_WORLD, &q));
    RC_OK(hint_request_free(&q));
    RC_OK(hint_barrier(HINT_WORLD));
    RC_OK(hint_recv(r, n, HINT_BYTE, prev_rank(), 91, HINT_WORLD, NULL));
    verify(r, n, prev_rank(), 1);
    RC_OK(hint_barrier(HINT_WORLD)); /* every send's data was taken: s may be freed */
    free(s);
    free(r);
    free(sv);
    free(rv);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (rc_rank == 0 && getenv("HINT_JOBID"))
        printf("jobid=%s\n", getenv("HINT_JOBID"));
    const char *what = argc > 1 ? argv[1] : "probe";
    if (strcmp(what, "probe") == 0)
        probe_cases();
    else if (strcmp(what, "mprobe") == 0)
        mprobe_cases();
    else if (strcmp(what, "ssend") == 0)
        ssend_cases();
    else if (strcmp(what, "complete") == 0)
        complete_cases();
    else if (strcmp(what, "cancel") == 0)
        cancel_cases();
    else if (strcmp(what, "persistent") == 0)
        persistent_cases();
    else if (strcmp(what, "detach") == 0)
        detach_cases();
    else
        RC_FAIL("unknown case %s", what);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok %s\n", what);
    return 0;
}
