/*
 * alltoallv linear — every receive and send posted at once with per-pair sizes and places.
 * Any P, any counts. Cost: (P-1) alpha + sum beta, all overlapping.
 */
#include "collectives/algs.h"

int alltoallv_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    hint_request *rq = coll_requests(2 * (size_t)P);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int s = 1; s < P; s++) {
        int src = (r - s + P) % P;
        CHECK_GOTO(coll_irecv(a->rbuf + a->rdispls[src], a->rcounts[src], src, a, &rq[s]), out);
    }
    for (int s = 1; s < P; s++) {
        int dst = (r + s) % P;
        CHECK_GOTO(coll_isend(a->sbuf + a->sdispls[dst], a->scounts[dst], dst, a, &rq[P + s]), out);
    }
    copy_bytes(a->rbuf + a->rdispls[r], a->sbuf + a->sdispls[r], a->rcounts[r]);
out:
    return coll_wait_free(rq, 2 * (size_t)P, st);
}
