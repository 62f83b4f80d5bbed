/*
 * gather binomial — a binomial tree towards the root; a rank collects the blocks of its whole
 * subtree (contiguous in relative rank order) and sends them up in one message. The root then
 * rotates relative order back to rank order. Any P.
 * Cost: ceil(log2 P) alpha + (P-1) n beta: fewer messages than linear for small blocks.
 */
#include "collectives/algs.h"

int gather_binomial(struct coll_args *a)
{
    int st = HINT_SUCCESS, P = a->size, v = (a->rank - a->root + P) % P;
    size_t b = a->block;
    /* Blocks this rank will hold: its subtree, relative ranks [v, v + sub). */
    int sub = v == 0 ? P : v & -v;
    if (sub > P - v)
        sub = P - v;
    void *tmp = NULL;
    CHECK_GOTO(coll_scratch((size_t)sub * b, &tmp), out);
    char *t = tmp;
    copy_bytes(t, a->sbuf, b);
    int mask = 1;
    for (; mask < P; mask <<= 1) {
        if (v & mask) {
            CHECK_GOTO(coll_send(t, (size_t)sub * b, (v - mask + a->root) % P, a), out);
            break;
        }
        if (v + mask < P) {
            int n = mask < P - v - mask ? mask : P - v - mask;
            CHECK_GOTO(coll_recv(t + (size_t)mask * b, (size_t)n * b, (v + mask + a->root) % P, a), out);
        }
    }
    if (v == 0)
        for (int i = 0; i < P; i++)
            copy_bytes(a->rbuf + (size_t)((i + a->root) % P) * b, t + (size_t)i * b, b);
out:
    free(tmp);
    return st;
}
