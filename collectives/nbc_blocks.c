/*
 * collectives/nbc_blocks.c — the nonblocking collectives' schedules for the operations that move
 * one block per rank pair: gather(v), scatter(v), allgather(v), alltoall(v). Linear: every send
 * and receive posted in one round, in the caller's datatypes (point to point moves derived types
 * itself), this rank's own block copied locally; receives go out first, sends to (rank + i) % P
 * so that not every rank starts with the same peer.
 * Cost: one round of P - 1 messages on each rank (the root's P - 1 for gather and scatter).
 */
#include "collectives/sched.h"

static bool is_v(const struct coll_args *a)
{
    return a->op_id == COLL_GATHERV || a->op_id == COLL_SCATTERV || a->op_id == COLL_ALLGATHERV ||
           a->op_id == COLL_ALLTOALLV;
}

/* Where the data for rank p starts on the send side, and its bytes. */
static const char *send_at(const struct coll_args *a, int p, size_t *bytes)
{
    *bytes = is_v(a) ? a->scounts[p] : a->block;
    return is_v(a) ? a->sbuf + a->sdispls[p] : coll_send_block(a, p);
}

/* Where the data from rank p lands on the receive side, and its bytes. */
static char *recv_at(const struct coll_args *a, int p, size_t *bytes)
{
    *bytes = is_v(a) ? a->rcounts[p] : a->block;
    return is_v(a) ? a->rbuf + a->rdispls[p] : coll_recv_block(a, p);
}

void nbc_gather(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    size_t n;
    if (r != a->root) {
        nbc_send(s, a->sbuf, a->block, &a->sl, a->root);
        return;
    }
    for (int i = 1; i < P; i++) {
        int p = (r + i) % P;
        char *at = recv_at(a, p, &n);
        nbc_recv(s, at, n, &a->rl, p);
    }
    nbc_copy(s, a->sbuf, &a->sl, recv_at(a, r, &n), &a->rl, a->block);
}

void nbc_scatter(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    size_t n;
    if (r != a->root) {
        nbc_recv(s, a->rbuf, a->block, &a->rl, a->root);
        return;
    }
    for (int i = 1; i < P; i++) {
        int p = (r + i) % P;
        const char *at = send_at(a, p, &n);
        nbc_send(s, at, n, &a->sl, p);
    }
    nbc_copy(s, send_at(a, r, &n), &a->sl, a->rbuf, &a->rl, a->block);
}

void nbc_allgather(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    size_t n;
    for (int i = 1; i < P; i++) {
        int p = (r - i + P) % P;
        char *at = recv_at(a, p, &n);
        nbc_recv(s, at, n, &a->rl, p);
    }
    for (int i = 1; i < P; i++)
        nbc_send(s, a->sbuf, a->block, &a->sl, (r + i) % P);
    nbc_copy(s, a->sbuf, &a->sl, recv_at(a, r, &n), &a->rl, a->block);
}

void nbc_alltoall(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    size_t n, own;
    for (int i = 1; i < P; i++) {
        int p = (r - i + P) % P;
        char *at = recv_at(a, p, &n);
        nbc_recv(s, at, n, &a->rl, p);
    }
    for (int i = 1; i < P; i++) {
        int p = (r + i) % P;
        const char *at = send_at(a, p, &n);
        nbc_send(s, at, n, &a->sl, p);
    }
    const char *from = send_at(a, r, &own);
    nbc_copy(s, from, &a->sl, recv_at(a, r, &n), &a->rl, own);
}
