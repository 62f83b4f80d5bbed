/*
 * collectives/nbc.c — the nonblocking collectives' schedules for barrier, bcast and the
 * reductions, and the one entry from api.c (nbc_start). Message-based algorithms only, each the
 * schedule form of its blocking namesake:
 *   barrier               dissemination: ceil(log2 P) rounds of one zero-byte send and receive.
 *   bcast                 binomial tree from the root: receive from the parent, then send to
 *                         every child at once. ceil(log2 P) * (alpha + n beta).
 *   reduce                binomial tree towards rank 0, then rank 0 to the root: operands
 *                         combined in rank order, so the result holds for an op that does not
 *                         commute. (ceil(log2 P) [+1]) * (alpha + n beta + n gamma).
 *   allreduce             recursive doubling (non-powers of two fold the first 2 * rem ranks in
 *                         pairs, as MPICH), in rank order. (log2 P [+2]) * (alpha + n beta + n gamma).
 *                         From NBC_RING_BYTES on, at P > 2 and for an op that commutes: a ring,
 *                         reduce-scatter then allgather of P chunks, 2 (P - 1) rounds moving
 *                         2 (P - 1) / P * n in all: 2 (P - 1) alpha + 2 n beta + n gamma.
 *   reduce_scatter_block  every block sent straight to its owner, then P - 1 reductions in rank
 *                         order. (P - 1) * (alpha + n beta) in one round, (P - 1) n gamma.
 * Derived datatypes: the data moves in the caller's types where it only moves; a reduction packs
 * its input to dense scratch at the call and unpacks its result at the end.
 */
#include <stdlib.h>

#include "collectives/sched.h"
#include "runtime/runtime.h"

/* Bytes from which iallreduce runs the ring (the blocking calls' tuning does not apply here). */
#define NBC_RING_BYTES ((size_t)32768)

void nbc_barrier(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    for (int k = 1; k < P; k <<= 1) {
        sched_send(s, NULL, 0, NULL, (r + k) % P);
        sched_recv(s, NULL, 0, NULL, (r - k + P) % P);
        sched_round(s);
    }
}

void nbc_bcast(struct sched *s, const struct coll_args *a)
{
    int P = a->size, v = (a->rank - a->root + P) % P, mask = 1;
    for (; mask < P; mask <<= 1) {
        if (v & mask) {
            nbc_recv(s, a->rbuf, a->block, &a->rl, (v - mask + a->root) % P);
            sched_round(s);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < P)
            nbc_send(s, a->rbuf, a->block, &a->rl, (v + mask + a->root) % P);
}

/* acc = acc op tmp, acc holding the lower ranks' operands (tmp is scratch). */
static void reduce_left(struct sched *s, const struct coll_args *a, char *acc, char *tmp)
{
    sched_reduce_after(s, tmp, acc, a->count, a->block);
}

/* The input, dense: the send buffer itself, or packed from its layout into `into`. */
static const char *dense_input(struct sched *s, const struct coll_args *a, char *into)
{
    static const struct coll_layout bytes = {0};
    nbc_copy(s, a->sbuf, &a->sl, into, &bytes, a->block);
    return into;
}

void nbc_reduce(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank;
    bool root = r == a->root, dense_out = root && !a->rl.type && a->root == 0;
    char *acc = dense_out ? a->rbuf : sched_scratch(s, a->block);
    char *tmp = sched_scratch(s, a->block);
    dense_input(s, a, acc);
    for (int mask = 1; mask < P; mask <<= 1) {
        if (r & mask) {
            sched_send(s, acc, a->block, NULL, r - mask);
            sched_round(s);
            break;
        }
        if (r + mask < P) {
            sched_recv(s, tmp, a->block, NULL, r + mask);
            sched_round(s);
            reduce_left(s, a, acc, tmp);
        }
    }
    if (a->root == 0) {
        if (root)
            nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
        return;
    }
    if (r == 0)
        sched_send(s, acc, a->block, NULL, a->root);
    else if (root)
        nbc_recv(s, a->rbuf, a->block, &a->rl, 0);
}

/* Recursive doubling's rank of real rank r, -1 for the even ranks folded into their neighbour. */
static int fold_rank(int r, int rem) { return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem; }
static int real_rank(int nr, int rem) { return nr < rem ? nr * 2 + 1 : nr + rem; }

/* Chunk i of a ring over `count` elements: its first element and its length. */
static void ring_chunk(const struct coll_args *a, int i, size_t *first, size_t *n)
{
    size_t P = (size_t)a->size, q = a->count / P, r = a->count % P, k = (size_t)i;
    *first = k * q + (k < r ? k : r);
    *n = q + (k < r);
}

/* The ring: in step k rank r sends chunk r - k on to r + 1 and adds what r - 1 sends into chunk
   r - k - 1, so after P - 1 steps it holds chunk r + 1 whole; then P - 1 steps pass the whole
   chunks round. Each chunk's operands are combined in ring order, hence only for ops that commute. */
static void allreduce_ring(struct sched *s, const struct coll_args *a, char *acc)
{
    int P = a->size, r = a->rank, right = (r + 1) % P, left = (r - 1 + P) % P;
    size_t first, n, big = a->count / (size_t)P + 1;
    char *tmp = sched_scratch(s, big * a->esize);
    for (int k = 0; k < P - 1; k++) {
        ring_chunk(a, (r - k + P) % P, &first, &n);
        sched_send(s, acc + first * a->esize, n * a->esize, NULL, right);
        ring_chunk(a, (r - k - 1 + 2 * P) % P, &first, &n);
        sched_recv(s, tmp, n * a->esize, NULL, left);
        sched_round(s);
        sched_reduce(s, tmp, acc + first * a->esize, n);
    }
    for (int k = 0; k < P - 1; k++) {
        ring_chunk(a, (r + 1 - k + P) % P, &first, &n);
        sched_send(s, acc + first * a->esize, n * a->esize, NULL, right);
        ring_chunk(a, (r - k + P) % P, &first, &n);
        sched_recv(s, acc + first * a->esize, n * a->esize, NULL, left);
        sched_round(s);
    }
}

void nbc_allreduce(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank, pof2 = 1;
    while (pof2 * 2 <= P)
        pof2 *= 2;
    int rem = P - pof2, nr = fold_rank(r, rem);
    char *acc = a->rl.type ? sched_scratch(s, a->block) : a->rbuf;
    dense_input(s, a, acc);
    if (P > 2 && a->block >= NBC_RING_BYTES && a->count >= (size_t)P && op_commutes(a->op)) {
        allreduce_ring(s, a, acc);
        if (a->rl.type)
            nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
        return;
    }
    char *tmp = sched_scratch(s, a->block);
    if (r < 2 * rem) {
        if (nr < 0) {
            sched_send(s, acc, a->block, NULL, r + 1);
        } else {
            sched_recv(s, tmp, a->block, NULL, r - 1);
            sched_round(s);
            sched_reduce(s, tmp, acc, a->count); /* r - 1's operand first */
        }
        sched_round(s);
    }
    for (int mask = 1; nr >= 0 && mask < pof2; mask <<= 1) {
        int np = nr ^ mask, peer = real_rank(np, rem);
        sched_send(s, acc, a->block, NULL, peer);
        sched_recv(s, tmp, a->block, NULL, peer);
        sched_round(s);
        if (np < nr)
            sched_reduce(s, tmp, acc, a->count);
        else
            reduce_left(s, a, acc, tmp);
    }
    if (r < 2 * rem) {
        if (nr >= 0)
            sched_send(s, acc, a->block, NULL, r - 1);
        else
            sched_recv(s, acc, a->block, NULL, r + 1);
        sched_round(s);
    }
    if (a->rl.type)
        nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
}

void nbc_reduce_scatter_block(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank;
    size_t n = a->block;
    const char *in = a->sl.type ? sched_scratch(s, n * (size_t)P) : a->sbuf;
    char *got = sched_scratch(s, n * (size_t)P);
    char *acc = a->rl.type ? sched_scratch(s, n) : a->rbuf;
    if (a->sl.type)
        nbc_copy(s, a->sbuf, &a->sl, (char *)in, &bytes, n * (size_t)P);
    for (int i = 1; i < P; i++)
        sched_recv(s, got + (size_t)((r - i + P) % P) * n, n, NULL, (r - i + P) % P);
    for (int i = 1; i < P; i++)
        sched_send(s, in + (size_t)((r + i) % P) * n, n, NULL, (r + i) % P);
    sched_round(s);
    /* operand of rank p: what p sent, or this rank's own block */
#define OPERAND(p) ((p) == r ? in + (size_t)r * n : got + (size_t)(p) * n)
    sched_copy(s, OPERAND(P - 1), n, NULL, acc, n, NULL);
    for (int p = P - 2; p >= 0; p--)
        sched_reduce(s, OPERAND(p), acc, a->count);
#undef OPERAND
    if (a->rl.type)
        nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, n);
}

typedef void (*nbc_builder)(struct sched *, const struct coll_args *);

static const nbc_builder builders[COLL_NOPS] = {
    [COLL_BARRIER] = nbc_barrier,
    [COLL_BCAST] = nbc_bcast,
    [COLL_REDUCE] = nbc_reduce,
    [COLL_ALLREDUCE] = nbc_allreduce,
    [COLL_REDUCE_SCATTER_BLOCK] = nbc_reduce_scatter_block,
    [COLL_GATHER] = nbc_gather,
    [COLL_GATHERV] = nbc_gather,
    [COLL_SCATTER] = nbc_scatter,
    [COLL_SCATTERV] = nbc_scatter,
    [COLL_ALLGATHER] = nbc_allgather,
    [COLL_ALLGATHERV] = nbc_allgather,
    [COLL_ALLTOALL] = nbc_alltoall,
    [COLL_ALLTOALLV] = nbc_alltoall,
    [COLL_NEIGHBOR_ALLGATHER] = nbc_neighbor,
    [COLL_NEIGHBOR_ALLGATHERV] = nbc_neighbor,
    [COLL_NEIGHBOR_ALLTOALL] = nbc_neighbor,
    [COLL_NEIGHBOR_ALLTOALLV] = nbc_neighbor,
};

int nbc_start(const struct coll_args *a, bool trivial, void *scratch, hint_request *out)
{
    struct sched *s = sched_new(a);
    if (s == NULL) {
        free(scratch);
        return HINT_ERR_NOMEM;
    }
    sched_adopt(s, scratch);
    if (!trivial) {
        if (builders[a->op_id] == NULL) { /* api.c's i-calls are all in the table */
            RT_ERR("coll", "%s has no nonblocking schedule; the call returns HINT_ERR_INTERNAL",
                   coll_tables[a->op_id].op);
            sched_discard(s);
            return HINT_ERR_INTERNAL;
        }
        builders[a->op_id](s, a);
    }
    return sched_start(s, out);
}
