/*
 * scan / exscan recursive_doubling — at step k rank i exchanges with rank i ^ 2^k its partial
 * result (the reduction of its aligned block of 2^k ranks); what comes from below is combined
 * on the left of the partial result and into the prefix, what comes from above on the right of
 * the partial result only (MPICH's algorithm). Every combination keeps rank order, so any op.
 * exscan's rank 0 writes nothing. Any P.
 * Cost: ceil(log2 P) (alpha + n beta + 2 n gamma).
 */
#include "collectives/algs.h"

/* The partner's partial result `in` joins this rank's `partial`; from below it also joins the
   prefix (exscan: *have_prefix says whether the prefix holds anything yet). */
static void combine(struct coll_args *a, bool from_below, void *in, char *partial, bool *have_prefix)
{
    if (!from_below) {
        op_reduce_ordered(a->op, a->basic, in, partial, a->count, a->block, false);
        return;
    }
    op_reduce(a->op, a->basic, in, partial, a->count);
    if (*have_prefix)
        op_reduce(a->op, a->basic, in, a->rbuf, a->count);
    else
        copy_bytes(a->rbuf, in, a->block);
    *have_prefix = true;
}

static int scan_doubling(struct coll_args *a, bool inclusive)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    void *partial = NULL, *tmp = NULL;
    bool have_prefix = inclusive;
    CHECK_GOTO(coll_scratch(a->block, &partial), out);
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    copy_bytes(partial, a->sbuf, a->block); /* before r is written: in place, the input is r */
    if (inclusive)
        copy_bytes(a->rbuf, a->sbuf, a->block);
    for (int mask = 1; mask < P; mask <<= 1) {
        int peer = r ^ mask;
        if (peer >= P)
            continue;
        CHECK_GOTO(coll_sendrecv(partial, a->block, peer, tmp, a->block, peer, a), out);
        combine(a, peer < r, tmp, partial, &have_prefix);
    }
out:
    free(partial);
    free(tmp);
    return st;
}

int scan_recursive_doubling(struct coll_args *a) { return scan_doubling(a, true); }
int exscan_recursive_doubling(struct coll_args *a) { return scan_doubling(a, false); }
