/*
 * barrier dissemination — round k: send an empty message to rank + 2^k, receive one from
 * rank - 2^k. Any P. Cost: ceil(log2 P) * alpha.
 */
#include "collectives/algs.h"

int barrier_dissemination(struct coll_args *a)
{
    int st = HINT_SUCCESS;
    for (int d = 1; d < a->size && st == HINT_SUCCESS; d *= 2)
        st = coll_sendrecv(NULL, 0, (a->rank + d) % a->size, NULL, 0, (a->rank - d + a->size) % a->size, a);
    return st;
}
