/*
 * allgather ring — step s: pass block (rank - s) to the right, take block (rank - s - 1) from
 * the left, straight into the receive buffer. Any P.
 * Cost: (P-1) (alpha + n beta): bandwidth-optimal, latency-poor.
 */
#include "collectives/algs.h"

int allgather_ring(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    copy_bytes(a->rbuf + (size_t)r * b, a->sbuf, b);
    for (int s = 0; s < P - 1; s++) {
        int sb = (r - s + P) % P, rb = (r - s - 1 + P) % P;
        CHECK_GOTO(coll_sendrecv(a->rbuf + (size_t)sb * b, b, (r + 1) % P, a->rbuf + (size_t)rb * b, b,
                               (r - 1 + P) % P, a), out);
    }
out:
    return st;
}
