/*
 * alltoallv pairwise — step s exchanges with rank + s / rank - s only, per-pair sizes. Any P,
 * any counts. Cost: (P-1) alpha + sum beta, one exchange in flight.
 */
#include "collectives/algs.h"

int alltoallv_pairwise(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    copy_bytes(a->rbuf + a->rdispls[r], a->sbuf + a->sdispls[r], a->rcounts[r]);
    for (int s = 1; s < P; s++) {
        int dst = (r + s) % P, src = (r - s + P) % P;
        CHECK_GOTO(coll_sendrecv(a->sbuf + a->sdispls[dst], a->scounts[dst], dst, a->rbuf + a->rdispls[src],
                               a->rcounts[src], src, a), out);
    }
out:
    return st;
}
