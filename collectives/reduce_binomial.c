/*
 * reduce binomial — a binomial tree towards root: at level k a rank whose relative rank has bit
 * k clear receives its partner's partial result and combines it; one with the bit set sends
 * its partial result up and is done. Any P. An op that does not commute runs the rank-order
 * variant instead (reduce_rank_order.c).
 * Cost: ceil(log2 P) * (alpha + n beta + n gamma).
 */
#include "collectives/algs.h"

int reduce_binomial(struct coll_args *a)
{
    if (!op_commutes(a->op))
        return reduce_binomial_in_order(a);
    int st = HINT_SUCCESS, P = a->size, v = (a->rank - a->root + P) % P;
    void *acc = NULL, *tmp = NULL, *own = NULL;
    if (a->rank == a->root) {
        acc = a->rbuf;
    } else {
        CHECK_GOTO(coll_scratch(a->block, &own), out);
        acc = own;
    }
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    copy_bytes(acc, a->sbuf, a->block);
    for (int mask = 1; mask < P; mask <<= 1) {
        if (v & mask) {
            CHECK_GOTO(coll_send(acc, a->block, (v - mask + a->root) % P, a), out);
            break;
        }
        if (v + mask < P) {
            CHECK_GOTO(coll_recv(tmp, a->block, (v + mask + a->root) % P, a), out);
            op_reduce(a->op, a->basic, tmp, acc, a->count);
        }
    }
out:
    free(tmp);
    free(own);
    return st;
}
