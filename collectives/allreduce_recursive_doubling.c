/*
 * allreduce recursive_doubling — ranks exchange their whole partial result with partner
 * rank ^ 2^k and combine. For P not a power of two, the first 2*rem ranks pair up first (even
 * ranks hand their data to the odd neighbour and wait for the result), as MPICH does.
 * Each partial result covers a contiguous range of ranks and is combined in rank order, so ops
 * that do not commute work too.
 * Cost: (ceil(log2 P) + 2 [non-power-of-two]) * (alpha + n beta + n gamma). Best for small n.
 */
#include "collectives/algs.h"

int allreduce_recursive_doubling(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    copy_bytes(a->rbuf, a->sbuf, a->block);
    int pof2 = 1;
    while (pof2 * 2 <= P)
        pof2 *= 2;
    int rem = P - pof2, newrank;
    if (r < 2 * rem) {
        if (r % 2 == 0) {
            CHECK_GOTO(coll_send(a->rbuf, a->block, r + 1, a), out);
            newrank = -1;
        } else {
            CHECK_GOTO(coll_recv(tmp, a->block, r - 1, a), out);
            op_reduce(a->op, a->basic, tmp, a->rbuf, a->count);
            newrank = r / 2;
        }
    } else {
        newrank = r - rem;
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int np = newrank ^ mask;
            int peer = np < rem ? np * 2 + 1 : np + rem;
            CHECK_GOTO(coll_sendrecv(a->rbuf, a->block, peer, tmp, a->block, peer, a), out);
            /* the partner's ranks come first when its block of ranks is the lower one */
            op_reduce_ordered(a->op, a->basic, tmp, a->rbuf, a->count, a->block, np < newrank);
        }
    }
    if (r < 2 * rem) {
        if (r % 2)
            CHECK_GOTO(coll_send(a->rbuf, a->block, r - 1, a), out);
        else
            CHECK_GOTO(coll_recv(a->rbuf, a->block, r + 1, a), out);
    }
out:
    free(tmp);
    return st;
}
