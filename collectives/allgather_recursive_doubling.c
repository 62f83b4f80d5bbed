/*
 * allgather recursive_doubling — round k: exchange the 2^k blocks gathered so far with partner
 * rank ^ 2^k. P must be a power of two. Cost: log2 P alpha + (P-1) n beta.
 */
#include "collectives/algs.h"

bool allgather_recursive_doubling_ok(const struct coll_args *a) { return is_pow2(a->size); }

int allgather_recursive_doubling(struct coll_args *a)
{
    int st = HINT_SUCCESS, r = a->rank;
    size_t b = a->block;
    copy_bytes(a->rbuf + (size_t)r * b, a->sbuf, b);
    for (int mask = 1; mask < a->size; mask <<= 1) {
        int peer = r ^ mask;
        size_t mine = (size_t)(r & ~(mask - 1)) * b, theirs = (size_t)(peer & ~(mask - 1)) * b;
        CHECK_GOTO(coll_sendrecv(a->rbuf + mine, (size_t)mask * b, peer, a->rbuf + theirs, (size_t)mask * b, peer, a), out);
    }
out:
    return st;
}
