/*
 * gather linear — the root posts one receive per rank straight into its block of the receive
 * buffer; everyone else sends once. Any P. Cost: (P-1) (alpha + n beta) at the root, which is
 * fine at node scale and when blocks are large.
 */
#include "collectives/algs.h"

int gather_linear(struct coll_args *a)
{
    if (a->rank != a->root)
        return coll_send(a->sbuf, a->block, a->root, a);
    int st = HINT_SUCCESS;
    hint_request *rq = coll_requests((size_t)a->size);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            CHECK_GOTO(coll_irecv(a->rbuf + (size_t)p * a->block, a->block, p, a, &rq[p]), out);
    copy_bytes(a->rbuf + (size_t)a->root * a->block, a->sbuf, a->block);
out:
    return coll_wait_free(rq, (size_t)a->size, st);
}
