/*
 * tests/ranks/p2p_patterns.c — point-to-point patterns, run as ranks under hintrun:
 *   p2p_patterns PATTERN [args]
 * Every pattern checks the data it received against what the sender must have sent and exits
 * non-zero (failing the job) on the first difference.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

/* The byte that position i of a message from src to dst with tag carries. */
static unsigned char pattern(int src, int dst, int tag, size_t i)
{
    return (unsigned char)(src * 131 + dst * 31 + tag * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, size_t n, int src, int dst, int tag)
{
    for (size_t i = 0; i < n; i++)
        b[i] = pattern(src, dst, tag, i);
}

static void verify(const unsigned char *b, size_t n, int src, int dst, int tag)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != pattern(src, dst, tag, i))
            RC_FAIL("byte %zu of %zu from %d (tag %d) is %u, expected %u", i, n, src, tag, b[i],
                    pattern(src, dst, tag, i));
}

/* Each rank sends `bytes` to the next and receives from the previous, several rounds. */
static void ring(size_t bytes)
{
    unsigned char *s = malloc(bytes + 1), *r = malloc(bytes + 1);
    int next = (rc_rank + 1) % P, prev = (rc_rank + P - 1) % P;
    for (int round = 0; round < 3; round++) {
        fill(s, bytes, rc_rank, next, round);
        memset(r, 0xee, bytes);
        hint_status st;
        RC_OK(hint_sendrecv(s, bytes, HINT_BYTE, next, round, r, bytes, HINT_BYTE, prev, round, HINT_WORLD, &st));
        RC_CHECK(st.source == prev && st.tag == round && st.bytes == bytes && st.error == 0);
        verify(r, bytes, prev, rc_rank, round);
    }
    free(s);
    free(r);
}

/* Every rank sends to every rank (itself too) with isend/irecv, all outstanding at once. */
static void allpairs(size_t bytes)
{
    unsigned char *s = malloc((size_t)P * bytes + 1), *r = malloc((size_t)P * bytes + 1);
    hint_request *req = malloc(2 * (size_t)P * sizeof *req);
    for (int p = 0; p < P; p++) {
        fill(s + (size_t)p * bytes, bytes, rc_rank, p, 5);
        RC_OK(hint_irecv(r + (size_t)p * bytes, bytes, HINT_BYTE, p, 5, HINT_WORLD, &req[p]));
    }
    for (int p = 0; p < P; p++)
        RC_OK(hint_isend(s + (size_t)p * bytes, bytes, HINT_BYTE, p, 5, HINT_WORLD,
                         &req[P + p]));
    hint_status *st = malloc(2 * (size_t)P * sizeof *st);
    RC_OK(hint_waitall(2 * (size_t)P, req, st));
    for (int p = 0; p < P; p++) {
        RC_CHECK(req[p] == HINT_REQUEST_NULL);
        RC_CHECK(st[p].source == p && st[p].bytes == bytes);
        verify(r + (size_t)p * bytes, bytes, p, rc_rank, 5);
    }
    free(s);
    free(r);
    free(req);
    free(st);
}

/* Rank 0 receives from anyone; the others each send `msgs` tagged messages. */
static void anysource(void)
{
    const int msgs = 20;
    if (rc_rank == 0) {
        int *seen = calloc((size_t)P, sizeof *seen);
        for (int i = 0; i < (P - 1) * msgs; i++) {
            int v[2];
            hint_status st;
            RC_OK(hint_recv(v, 2, HINT_INT, HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &st));
            RC_CHECK(st.source >= 1 && st.source < P && st.bytes == sizeof v);
            /* non-overtaking: messages of one sender arrive in the order sent */
            RC_CHECK(v[0] == st.source && v[1] == seen[st.source] && st.tag == v[1]);
            seen[st.source]++;
        }
        for (int p = 1; p < P; p++)
            RC_CHECK(seen[p] == msgs);
        free(seen);
    } else {
        for (int i = 0; i < msgs; i++) {
            int v[2] = {rc_rank, i};
            RC_OK(hint_send(v, 2, HINT_INT, 0, i, HINT_WORLD));
        }
    }
}

/* Many outstanding small and large sends to one peer, received in reverse tag order. */
static void many(void)
{
    const int n = 64;
    int peer = (rc_rank + 1) % P, from = (rc_rank + P - 1) % P;
    size_t sizes[4] = {1, 100, 70000, 200000};
    unsigned char **sb = malloc(n * sizeof *sb), **rb = malloc(n * sizeof *rb);
    hint_request *req = malloc(2 * n * sizeof *req);
    for (int i = 0; i < n; i++) {
        size_t b = sizes[i % 4];
        sb[i] = malloc(b);
        rb[i] = malloc(b);
        fill(sb[i], b, rc_rank, peer, i);
        RC_OK(hint_isend(sb[i], b, HINT_BYTE, peer, i, HINT_WORLD, &req[i]));
    }
    for (int i = n - 1; i >= 0; i--)
        RC_OK(hint_irecv(rb[i], sizes[i % 4], HINT_BYTE, from, i, HINT_WORLD, &req[n + i]));
    RC_OK(hint_waitall(2 * (size_t)n, req, HINT_STATUSES_IGNORE));
    for (int i = 0; i < n; i++) {
        verify(rb[i], sizes[i % 4], from, rc_rank, i);
        free(sb[i]);
        free(rb[i]);
    }
    free(sb);
    free(rb);
    free(req);
}

/* A sender far ahead of its receiver: 3 x 8 small messages (more than a channel has cells) sit
   unexpected while a ring on a dup'ed group must still go through, then arrive intact and in
   order. Held in their cells, the flood blocked the channel and the ring deadlocked. */
static void flood(void)
{
    enum { N = 24 };
    static const size_t sizes[4] = {0, 8, 100, 1000};
    int peer = (rc_rank + 1) % P, from = (rc_rank + P - 1) % P;
    unsigned char sb[N][1000], rb[N][1000];
    hint_request req[2 * N];
    hint_group dup;
    RC_OK(hint_group_dup(HINT_WORLD, &dup));
    for (int i = 0; i < N; i++) {
        fill(sb[i], sizes[i % 4], rc_rank, peer, 9);
        RC_OK(hint_isend(sb[i], sizes[i % 4], HINT_BYTE, peer, 9, HINT_WORLD, &req[i]));
    }
    int token = rc_rank, got = -1;
    RC_OK(hint_sendrecv(&token, 1, HINT_INT, peer, 3, &got, 1, HINT_INT, from, 3, dup, HINT_STATUS_IGNORE));
    RC_CHECK(got == from);
    for (int i = 0; i < N; i++)
        RC_OK(hint_irecv(rb[i], sizes[i % 4], HINT_BYTE, from, 9, HINT_WORLD, &req[N + i]));
    hint_status st[2 * N];
    RC_OK(hint_waitall(2 * N, req, st));
    for (int i = 0; i < N; i++) {
        RC_CHECK(st[N + i].bytes == sizes[i % 4]); /* same tag: send order decides which is which */
        verify(rb[i], sizes[i % 4], from, rc_rank, 9);
    }
    RC_OK(hint_group_free(&dup));
}

/* A rank polling one peer's cell in a blocking receive must not stall a third rank whose channel
   to it is full (review finding 3 of 544b59c): rank 0 waits for rank 2's message, which comes
   only once rank 1's 4 x SHM_NCELLS sends to rank 0 have all completed (or after STALL_GIVE_UP_S,
   then the check fails). Run with a yield budget larger than that (HINT_WAIT_YIELD_US), so
   rank 0 stays in recv_now's poll unless something tells it to run a progress pass. Rounds,
   since rank 0 takes the general path (which would pass) when it saw a doorbell rung before it
   began to poll. */
enum { STALL_SENDS = 32, STALL_ROUNDS = 3, STALL_GIVE_UP_S = 3 };

static void stall_round(int round)
{
    unsigned char b[STALL_SENDS][8];
    int token = 0, flag;
    RC_OK(hint_barrier(HINT_WORLD));
    if (rc_rank == 0) {
        RC_OK(hint_iprobe(HINT_ANY_SOURCE, HINT_ANY_TAG, HINT_WORLD, &flag, HINT_STATUS_IGNORE)); /* a pass: bells seen */
        RC_OK(hint_recv(&token, 1, HINT_INT, 2, 7, HINT_WORLD, HINT_STATUS_IGNORE));
        for (int i = 0; i < STALL_SENDS; i++) {
            RC_OK(hint_recv(b[i], 8, HINT_BYTE, 1, i, HINT_WORLD, HINT_STATUS_IGNORE));
            verify(b[i], 8, 1, 0, i + round);
        }
        RC_CHECK(token == 1);
    } else if (rc_rank == 1) {
        usleep(100000); /* rank 0 is in its receive from rank 2 by now (else the round proves less) */
        double t0 = hint_wtime();
        for (int i = 0; i < STALL_SENDS; i++) {
            fill(b[i], 8, 1, 0, i + round);
            RC_OK(hint_send(b[i], 8, HINT_BYTE, 0, i, HINT_WORLD));
        }
        printf("stall round %d: rank 1's %d sends took %.6f s\n", round, STALL_SENDS, hint_wtime() - t0);
        RC_OK(hint_send(&token, 1, HINT_INT, 2, 8, HINT_WORLD));
    } else if (rc_rank == 2) {
        hint_request r;
        int done = 0;
        RC_OK(hint_irecv(&token, 1, HINT_INT, 1, 8, HINT_WORLD, &r));
        for (double t0 = hint_wtime(); !done && hint_wtime() - t0 < STALL_GIVE_UP_S; sched_yield())
            RC_OK(hint_test(&r, &done, HINT_STATUS_IGNORE));
        token = 1;
        RC_OK(hint_send(&token, 1, HINT_INT, 0, 7, HINT_WORLD)); /* frees rank 0 (and so rank 1) either way */
        if (!done)
            RC_OK(hint_wait(&r, HINT_STATUS_IGNORE));
        if (!done)
            RC_FAIL("round %d: rank 1's sends to rank 0 were still stalled after %d s", round, STALL_GIVE_UP_S);
    }
}

static void stall(void)
{
    for (int round = 0; round < STALL_ROUNDS; round++)
        stall_round(round);
    RC_OK(hint_barrier(HINT_WORLD));
}

/* Same tag, same pair: must arrive in send order, also mixing eager and rendezvous sizes. */
static void order(void)
{
    const int n = 40;
    int peer = (rc_rank + 1) % P, from = (rc_rank + P - 1) % P;
    hint_request req[2 * 40];
    unsigned char *sb[40], *rb[40];
    for (int i = 0; i < n; i++) {
        size_t b = i % 3 == 0 ? 100000 : 8;
        sb[i] = malloc(b);
        rb[i] = malloc(100000);
        fill(sb[i], b, rc_rank, peer, i);
        RC_OK(hint_isend(sb[i], b, HINT_BYTE, peer, 9, HINT_WORLD, &req[i]));
    }
    hint_status st[2 * 40];
    for (int i = 0; i < n; i++)
        RC_OK(hint_irecv(rb[i], 100000, HINT_BYTE, from, 9, HINT_WORLD, &req[n + i]));
    RC_OK(hint_waitall(2 * (size_t)n, req, st));
    for (int i = 0; i < n; i++) {
        size_t b = i % 3 == 0 ? 100000 : 8;
        RC_CHECK(st[n + i].bytes == b);
        verify(rb[i], b, from, rc_rank, i);
        free(sb[i]);
        free(rb[i]);
    }
}

/* A receive too small for the message gets HINT_ERR_TRUNCATE and the bytes that fit. */
static void truncate_msgs(void)
{
    int peer = (rc_rank + 1) % P, from = (rc_rank + P - 1) % P;
    size_t sizes[2] = {64, 300000};
    for (int k = 0; k < 2; k++) {
        size_t big = sizes[k], small = big / 2;
        unsigned char *s = malloc(big), *r = malloc(big);
        fill(s, big, rc_rank, peer, k);
        memset(r, 0, big);
        hint_request sr;
        RC_OK(hint_isend(s, big, HINT_BYTE, peer, k, HINT_WORLD, &sr));
        hint_status st;
        RC_EXPECT(hint_recv(r, small, HINT_BYTE, from, k, HINT_WORLD, &st), HINT_ERR_TRUNCATE);
        RC_CHECK(st.error == HINT_ERR_TRUNCATE && st.bytes == small && st.source == from);
        verify(r, small, from, rc_rank, k);
        RC_CHECK(r[small] == 0);
        RC_OK(hint_wait(&sr, HINT_STATUS_IGNORE));
        free(s);
        free(r);
    }
    /* the channel is still usable afterwards */
    ring(1000);
}

/* Every call given a bad rank, group, count, tag, type or NULL buffer returns its error. */
static void badargs(void)
{
    int x = 0;
    hint_request r;
    RC_EXPECT(hint_send(&x, 1, HINT_INT, P, 0, HINT_WORLD), HINT_ERR_RANK);
    RC_EXPECT(hint_send(&x, 1, HINT_INT, -5, 0, HINT_WORLD), HINT_ERR_RANK);
    RC_EXPECT(hint_recv(&x, 1, HINT_INT, P + 3, 0, HINT_WORLD, NULL), HINT_ERR_RANK);
    RC_EXPECT(hint_send(&x, 1, HINT_INT, 0, -1, HINT_WORLD), HINT_ERR_TAG);
    RC_EXPECT(hint_send(&x, 1, HINT_INT, 0, HINT_TAG_UB + 1, HINT_WORLD), HINT_ERR_TAG);
    RC_EXPECT(hint_recv(&x, 1, HINT_INT, 0, -7, HINT_WORLD, NULL), HINT_ERR_TAG);
    RC_EXPECT(hint_send(&x, 1, HINT_INT, 0, 0, HINT_GROUP_NULL), HINT_ERR_GROUP);
    RC_EXPECT(hint_isend(NULL, 4, HINT_INT, 0, 0, HINT_WORLD, &r), HINT_ERR_BUFFER);
    RC_EXPECT(hint_irecv(NULL, 4, HINT_INT, 0, 0, HINT_WORLD, &r), HINT_ERR_BUFFER);
    RC_EXPECT(hint_send(&x, 1, HINT_TYPE_NULL, 0, 0, HINT_WORLD), HINT_ERR_TYPE);
    RC_EXPECT(hint_send(&x, SIZE_MAX / 2, HINT_INT, 0, 0, HINT_WORLD), HINT_ERR_COUNT);
    RC_EXPECT(hint_isend(&x, 1, HINT_INT, 0, 0, HINT_WORLD, NULL), HINT_ERR_ARG);
    RC_EXPECT(hint_wait(NULL, NULL), HINT_ERR_ARG);
    RC_EXPECT(hint_waitall(3, NULL, NULL), HINT_ERR_ARG);
    int flag;
    RC_EXPECT(hint_test(NULL, &flag, NULL), HINT_ERR_ARG);
    hint_request nul = HINT_REQUEST_NULL;
    hint_status st;
    RC_OK(hint_wait(&nul, &st));
    RC_CHECK(st.source == HINT_PROC_NULL);
    RC_OK(hint_test(&nul, &flag, NULL));
    RC_CHECK(flag == 1);
    int size;
    RC_EXPECT(hint_group_size(HINT_GROUP_NULL, &size), HINT_ERR_GROUP);
    RC_EXPECT(hint_group_size(HINT_WORLD, NULL), HINT_ERR_ARG);
    hint_group w = HINT_WORLD;
    RC_EXPECT(hint_group_free(&w), HINT_ERR_GROUP);
    /* HINT_PROC_NULL completes at once with an empty status */
    RC_OK(hint_send(&x, 1, HINT_INT, HINT_PROC_NULL, 0, HINT_WORLD));
    RC_OK(hint_recv(&x, 1, HINT_INT, HINT_PROC_NULL, 0, HINT_WORLD, &st));
    RC_CHECK(st.source == HINT_PROC_NULL && st.bytes == 0);
    /* zero bytes with a NULL buffer is fine */
    RC_OK(hint_sendrecv(NULL, 0, HINT_BYTE, (rc_rank + 1) % P, 3, NULL, 0, HINT_BYTE, (rc_rank + P - 1) % P, 3,
                        HINT_WORLD, &st));
    RC_CHECK(st.bytes == 0 && st.source == (rc_rank + P - 1) % P);
}

/* hint_test returns at once with done = 0 while nothing has been sent (the peer sends only after
   a barrier this rank has not entered yet), then reports the message once it is there. */
static void testpoll(void)
{
    int peer = (rc_rank + 1) % P, from = (rc_rank + P - 1) % P;
    double v = 0, w = rc_rank + 0.5;
    hint_request rr, sr;
    RC_OK(hint_irecv(&v, 1, HINT_DOUBLE, from, 1, HINT_WORLD, &rr));
    int done = -1;
    hint_status st;
    RC_OK(hint_test(&rr, &done, &st));
    RC_CHECK(done == 0 && rr != HINT_REQUEST_NULL);
    RC_OK(hint_barrier(HINT_WORLD));
    RC_OK(hint_isend(&w, 1, HINT_DOUBLE, peer, 1, HINT_WORLD, &sr));
    while (!done)
        RC_OK(hint_test(&rr, &done, &st));
    RC_CHECK(rr == HINT_REQUEST_NULL && v == from + 0.5 && st.source == from);
    RC_OK(hint_wait(&sr, NULL));
}

/* Large messages between buffers of every kind (heap, stack, static, mmap) in both roles, so
   every single-copy path and its fallbacks run; HINT_P2P_PATH picks the path to force. */
static unsigned char static_send[300000], static_recv[300000];

static void buffer_kinds(void)
{
    const size_t n = 300000; /* above every cell payload: rendezvous */
    unsigned char stack_send[n], stack_recv[n];
    unsigned char *heap_send = heap_buffer(n), *heap_recv = heap_buffer(n); /* malloc, or hint_malloc */
    unsigned char *map_send = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    unsigned char *map_recv = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    RC_CHECK(map_send != MAP_FAILED && map_recv != MAP_FAILED);
    unsigned char *sends[4] = {heap_send, stack_send, static_send, map_send};
    unsigned char *recvs[4] = {heap_recv, stack_recv, static_recv, map_recv};
    int next = (rc_rank + 1) % P, prev = (rc_rank + P - 1) % P;
    for (int s = 0; s < 4; s++)
        for (int r = 0; r < 4; r++) {
            int tag = s * 4 + r;
            fill(sends[s], n, rc_rank, next, tag);
            memset(recvs[r], 0, n);
            hint_status st;
            RC_OK(hint_sendrecv(sends[s], n, HINT_BYTE, next, tag, recvs[r], n, HINT_BYTE, prev, tag, HINT_WORLD, &st));
            RC_CHECK(st.bytes == n);
            verify(recvs[r], n, prev, rc_rank, tag);
        }
    heap_buffer_free(heap_send);
    heap_buffer_free(heap_recv);
    munmap(map_send, n);
    munmap(map_recv, n);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (rc_rank == 0 && getenv("HINT_JOBID"))
        printf("jobid=%s\n", getenv("HINT_JOBID"));
    const char *what = argc > 1 ? argv[1] : "ring";
    size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 1000;
    if (strcmp(what, "ring") == 0)
        ring(bytes);
    else if (strcmp(what, "allpairs") == 0)
        allpairs(bytes);
    else if (strcmp(what, "anysource") == 0)
        anysource();
    else if (strcmp(what, "many") == 0)
        many();
    else if (strcmp(what, "order") == 0)
        order();
    else if (strcmp(what, "truncate") == 0)
        truncate_msgs();
    else if (strcmp(what, "badargs") == 0)
        badargs();
    else if (strcmp(what, "testpoll") == 0)
        testpoll();
    else if (strcmp(what, "buffers") == 0)
        buffer_kinds();
    else if (strcmp(what, "flood") == 0)
        flood();
    else if (strcmp(what, "stall") == 0) {
        if (P >= 3)
            stall();
    }
    else
        RC_FAIL("unknown pattern %s", what);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok %s\n", what);
    return 0;
}
