/*
 * alltoall linear — post every receive and every send at once and wait for all (Open MPI's
 * "basic linear"). Any P. Cost: (P-1) (alpha + n beta) with all messages overlapping.
 */
#include "collectives/algs.h"

int alltoall_linear(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    hint_request *rq = coll_requests(2 * (size_t)P);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int s = 1; s < P; s++) {
        int src = (r - s + P) % P;
        CHECK_GOTO(coll_irecv(a->rbuf + (size_t)src * b, b, src, a, &rq[s]), out);
    }
    for (int s = 1; s < P; s++) {
        int dst = (r + s) % P;
        CHECK_GOTO(coll_isend(a->sbuf + (size_t)dst * b, b, dst, a, &rq[P + s]), out);
    }
    copy_bytes(a->rbuf + (size_t)r * b, a->sbuf + (size_t)r * b, b);
out:
    return coll_wait_free(rq, 2 * (size_t)P, st);
}
