/*
 * alltoall pairwise — step s: send the block for rank + s, receive the one from rank - s; one
 * exchange in flight at a time, so it never floods a peer. Any P.
 * Cost: (P-1) (alpha + n beta): the large-message baseline.
 */
#include "collectives/algs.h"

int alltoall_pairwise(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    copy_bytes(a->rbuf + (size_t)r * b, a->sbuf + (size_t)r * b, b);
    for (int s = 1; s < P; s++) {
        int dst = (r + s) % P, src = (r - s + P) % P;
        CHECK_GOTO(coll_sendrecv(a->sbuf + (size_t)dst * b, b, dst, a->rbuf + (size_t)src * b, b, src, a), out);
    }
out:
    return st;
}
