/*
 * alltoall bruck — rotate so block i is for rank + i; in round k send every block whose index
 * has bit k set to rank + 2^k (packed into one message) and put what comes from rank - 2^k in
 * the same places; at the end block i came from rank - i. Any P.
 * Cost: ceil(log2 P) alpha + (P/2) ceil(log2 P) n beta: fewest messages, for small blocks.
 */
#include "collectives/algs.h"

int alltoall_bruck(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, r = a->rank;
    size_t b = a->block;
    void *tmp = NULL, *pack = NULL, *unpack = NULL;
    CHECK_GOTO(coll_scratch((size_t)P * b, &tmp), out);
    CHECK_GOTO(coll_scratch(((size_t)P / 2 + 1) * b, &pack), out);
    CHECK_GOTO(coll_scratch(((size_t)P / 2 + 1) * b, &unpack), out);
    char *t = tmp, *pk = pack, *up = unpack;
    for (int i = 0; i < P; i++)
        copy_bytes(t + (size_t)i * b, a->sbuf + (size_t)((r + i) % P) * b, b);
    for (int d = 1; d < P; d *= 2) {
        size_t n = 0;
        for (int i = 0; i < P; i++)
            if (i & d)
                copy_bytes(pk + n++ * b, t + (size_t)i * b, b);
        CHECK_GOTO(coll_sendrecv(pk, n * b, (r + d) % P, up, n * b, (r - d + P) % P, a), out);
        n = 0;
        for (int i = 0; i < P; i++)
            if (i & d)
                copy_bytes(t + (size_t)i * b, up + n++ * b, b);
    }
    for (int i = 0; i < P; i++)
        copy_bytes(a->rbuf + (size_t)((r - i + P) % P) * b, t + (size_t)i * b, b);
out:
    free(tmp);
    free(pack);
    free(unpack);
    return st;
}
