/*
 * allgather bruck — a scratch buffer starts with the own block; round k sends the first
 * min(2^k, P - 2^k) blocks to rank - 2^k and appends as many from rank + 2^k. Block i then
 * belongs to rank + i, which a final rotation puts in place. Any P.
 * Cost: ceil(log2 P) alpha + (P-1) n beta, plus one local copy of everything.
 */
#include "collectives/algs.h"

int allgather_bruck(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch((size_t)P * b, &tmp), out);
    char *t = tmp;
    copy_bytes(t, a->sbuf, b);
    for (int d = 1; d < P; d *= 2) {
        size_t n = (size_t)(d < P - d ? d : P - d) * b;
        CHECK_GOTO(coll_sendrecv(t, n, (r - d + P) % P, t + (size_t)d * b, n, (r + d) % P, a), out);
    }
    for (int i = 0; i < P; i++)
        copy_bytes(a->rbuf + (size_t)((r + i) % P) * b, t + (size_t)i * b, b);
out:
    free(tmp);
    return st;
}
