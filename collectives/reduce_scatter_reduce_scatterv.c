/*
 * reduce_scatter reduce_scatterv — the whole vector reduced to rank 0 (reduce binomial, in rank
 * order for an op that does not commute), then rank 0 sends every rank its part, all at once.
 * Any P, any counts (zero included). Cost: ceil(log2 P) (alpha + N beta + N gamma) to reduce
 * N bytes, then P-1 messages of the parts from rank 0.
 */
#include "collectives/algs.h"

int reduce_scatter_reduce_scatterv(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size;
    void *all = NULL;
    hint_request *rq = NULL;
    if (a->rank == 0)
        CHECK_GOTO(coll_scratch(a->block, &all), out);
    struct coll_args r = *a;
    r.root = 0;
    r.rbuf = all;
    CHECK_GOTO(reduce_binomial(&r), out);
    if (a->rank != 0)
        return coll_recv(a->rbuf, a->rcounts[a->rank], 0, a);
    rq = coll_requests((size_t)P);
    CHECK_GOTO(rq == NULL ? HINT_ERR_NOMEM : HINT_SUCCESS, out);
    for (int p = 1; p < P && st == HINT_SUCCESS; p++)
        st = coll_isend((char *)all + a->rdispls[p], a->rcounts[p], p, a, &rq[p]);
    copy_bytes(a->rbuf, all, a->rcounts[0]);
    st = coll_wait_free(rq, (size_t)P, st);
    rq = NULL;
out:
    free(rq);
    free(all);
    return st;
}
