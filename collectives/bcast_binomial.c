/*
 * bcast binomial — a binomial tree rooted at root (ranks renumbered relative to it): receive
 * from the parent, then send to children from the farthest down. Any P.
 * Cost: ceil(log2 P) * (alpha + n beta).
 */
#include "collectives/algs.h"

int bcast_binomial(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, v = (a->rank - a->root + P) % P;
    int mask = 1;
    for (; mask < P; mask <<= 1) {
        if (v & mask) {
            CHECK_GOTO(coll_recv(a->rbuf, a->block, (v - mask + a->root) % P, a), out);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < P)
            CHECK_GOTO(coll_send(a->rbuf, a->block, (v + mask + a->root) % P, a), out);
out:
    return st;
}
