/*
 * allgatherv ring — allgather ring with per-rank block sizes and places. Any P, any counts.
 * Cost: (P-1) alpha + sum(n_p) beta.
 */
#include "collectives/algs.h"

int allgatherv_ring(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    copy_bytes(a->rbuf + a->rdispls[r], a->sbuf, a->rcounts[r]);
    for (int s = 0; s < P - 1; s++) {
        int sb = (r - s + P) % P, rb = (r - s - 1 + P) % P;
        CHECK_GOTO(coll_sendrecv(a->rbuf + a->rdispls[sb], a->rcounts[sb], (r + 1) % P, a->rbuf + a->rdispls[rb],
                               a->rcounts[rb], (r - 1 + P) % P, a), out);
    }
out:
    return st;
}
