/*
 * scatter binomial — the reverse of gather binomial: the root lays blocks out in relative rank
 * order and hands each child its whole subtree in one message; children pass parts on.
 * Any P. Cost: ceil(log2 P) alpha + (P-1) n beta.
 */
#include "collectives/algs.h"

int scatter_binomial(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, v = (a->rank - a->root + P) % P;
    size_t b = a->block;
    /* Size of this rank's subtree: relative ranks [v, v + sub). */
    int sub = v == 0 ? P : v & -v;
    if (sub > P - v)
        sub = P - v;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch((size_t)sub * b, &tmp), out);
    char *t = tmp;
    int mask = 1;
    if (v == 0) {
        for (int i = 0; i < P; i++)
            copy_bytes(t + (size_t)i * b, a->sbuf + (size_t)((i + a->root) % P) * b, b);
        while (mask < P)
            mask <<= 1;
    } else {
        while (!(v & mask))
            mask <<= 1;
        CHECK_GOTO(coll_recv(t, (size_t)sub * b, (v - mask + a->root) % P, a), out);
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (v + mask < P && mask < sub) {
            int n = mask < P - v - mask ? mask : P - v - mask;
            CHECK_GOTO(coll_send(t + (size_t)mask * b, (size_t)n * b, (v + mask + a->root) % P, a), out);
        }
    }
    copy_bytes(a->rbuf, t, b);
out:
    free(tmp);
    return st;
}
