/*
 * scatter linear — the root sends each rank its block straight from the send buffer; everyone
 * else receives once. Any P. Cost: (P-1) (alpha + n beta) at the root.
 */
#include "collectives/algs.h"

int scatter_linear(struct coll_args *a)
{
    if (a->rank != a->root)
        return coll_recv(a->rbuf, a->block, a->root, a);
    int st = HINT_SUCCESS;
    hint_request *rq = coll_requests((size_t)a->size);
    if (rq == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            CHECK_GOTO(coll_isend(a->sbuf + (size_t)p * a->block, a->block, p, a, &rq[p]), out);
    copy_bytes(a->rbuf, a->sbuf + (size_t)a->root * a->block, a->block);
out:
    return coll_wait_free(rq, (size_t)a->size, st);
}
