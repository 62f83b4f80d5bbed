/*
 * tests/ranks/staged_mix.c — the staging areas under every interleaving the operations allow:
 * rooted operations whose non-roots (reduce, gather) or root (scatter) leave without waiting,
 * mixed with the all-to-all ones (alltoall, allgather, allreduce, reduce_scatter_block), with
 * the root moving every call, 400 rounds, then long runs of one rooted operation so that the
 * ranks that do not wait run ahead, also with small calls (in the heads' deep ring) and large
 * ones (in the areas' ring) mixed; each result checked. An area rewritten before its readers
 * are done shows up as a wrong value. Run under hintrun.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

static long val(int from, int to, int round) { return (long)from * 1000003 + (long)to * 1009 + round; }

static void force_shm(void)
{
    const char *ops[] = {"reduce", "gather", "scatter", "alltoall", "allgather", "allreduce", "reduce_scatter_block",
                         "bcast"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        RC_OK(hint_coll_set(ops[i], "staged"));
}

static void one_round(int k, long *s, long *r)
{
    int root = k % P, me = rc_rank;
    /* reduce: sum of val(p, root, k) over p */
    long x = val(me, root, k), sum = 0, want = 0;
    for (int p = 0; p < P; p++)
        want += val(p, root, k);
    RC_OK(hint_reduce(&x, &sum, 1, HINT_LONG, HINT_SUM, root, HINT_WORLD));
    if (me == root && sum != want)
        RC_FAIL("round %d reduce to %d: %ld, expected %ld", k, root, sum, want);
    /* gather to root + 1 */
    int groot = (root + 1) % P;
    RC_OK(hint_gather(&x, 1, HINT_LONG, r, 1, HINT_LONG, groot, HINT_WORLD));
    for (int p = 0; me == groot && p < P; p++)
        if (r[p] != val(p, root, k))
            RC_FAIL("round %d gather to %d: block %d is %ld", k, groot, p, r[p]);
    /* scatter from root + 2 */
    int sroot = (root + 2) % P;
    for (int p = 0; p < P; p++)
        s[p] = val(sroot, p, k);
    long y = -1;
    RC_OK(hint_scatter(s, 1, HINT_LONG, &y, 1, HINT_LONG, sroot, HINT_WORLD));
    if (y != val(sroot, me, k))
        RC_FAIL("round %d scatter from %d: %ld", k, sroot, y);
    /* alltoall */
    for (int p = 0; p < P; p++)
        s[p] = val(me, p, k);
    RC_OK(hint_alltoall(s, 1, HINT_LONG, r, 1, HINT_LONG, HINT_WORLD));
    for (int p = 0; p < P; p++)
        if (r[p] != val(p, me, k))
            RC_FAIL("round %d alltoall: block %d is %ld", k, p, r[p]);
    /* reduce_scatter_block: block p of every rank's input holds val(src, p, k) */
    long z = 0, zw = 0;
    for (int p = 0; p < P; p++)
        zw += val(p, me, k);
    RC_OK(hint_reduce_scatter_block(s, &z, 1, HINT_LONG, HINT_SUM, HINT_WORLD));
    if (z != zw)
        RC_FAIL("round %d reduce_scatter_block: %ld, expected %ld", k, z, zw);
    /* allgather and allreduce */
    RC_OK(hint_allgather(&x, 1, HINT_LONG, r, 1, HINT_LONG, HINT_WORLD));
    for (int p = 0; p < P; p++)
        if (r[p] != val(p, root, k))
            RC_FAIL("round %d allgather: block %d is %ld", k, p, r[p]);
    RC_OK(hint_allreduce(&x, &sum, 1, HINT_LONG, HINT_SUM, HINT_WORLD));
    if (sum != want)
        RC_FAIL("round %d allreduce: %ld, expected %ld", k, sum, want);
    /* bcast from root + 3 */
    int broot = (root + 3) % P;
    long b = me == broot ? val(broot, 0, k) : -1;
    RC_OK(hint_bcast(&b, 1, HINT_LONG, broot, HINT_WORLD));
    if (b != val(broot, 0, k))
        RC_FAIL("round %d bcast from %d: %ld", k, broot, b);
}

/* Calls of 1 long (a compact call: the heads' ring, 64 deep) and of BIG longs (the areas' ring,
   8 deep) mixed, the non-roots of reduce and the root of bcast never waiting. */
#define BIG 400
static void run_ahead_mixed(void)
{
    int me = rc_rank;
    long *x = calloc(BIG, sizeof *x), *y = calloc(BIG, sizeof *y);
    RC_CHECK(x != NULL && y != NULL);
    for (int k = 0; k < 300; k++) {
        int n = k % 7 == 3 || k % 11 == 5 ? BIG : 1;
        for (int i = 0; i < n; i++)
            x[i] = val(me, i, k);
        RC_OK(hint_reduce(x, y, n, HINT_LONG, HINT_SUM, 0, HINT_WORLD));
        for (int i = 0; me == 0 && i < n; i++) {
            long want = 0;
            for (int p = 0; p < P; p++)
                want += val(p, i, k);
            if (y[i] != want)
                RC_FAIL("mixed reduce %d (%d longs): element %d is %ld, expected %ld", k, n, i, y[i], want);
        }
    }
    for (int k = 0; k < 300; k++) {
        int n = k % 5 == 2 || k % 13 == 7 ? BIG : 1;
        for (int i = 0; i < n; i++)
            y[i] = me == 0 ? val(0, i, k) : -1;
        RC_OK(hint_bcast(y, n, HINT_LONG, 0, HINT_WORLD));
        for (int i = 0; i < n; i++)
            if (y[i] != val(0, i, k))
                RC_FAIL("mixed bcast %d (%d longs): element %d is %ld", k, n, i, y[i]);
    }
    free(x);
    free(y);
}

/* Long runs of one rooted operation with a fixed root: the ranks that do not wait run as far
   ahead as the staging areas let them, and the root reads each call's data late. */
static void run_ahead(long *s, long *r)
{
    int me = rc_rank;
    for (int k = 0; k < 300; k++) {
        long x = val(me, 0, k), sum = 0, want = 0;
        for (int p = 0; p < P; p++)
            want += val(p, 0, k);
        RC_OK(hint_reduce(&x, &sum, 1, HINT_LONG, HINT_SUM, 0, HINT_WORLD));
        if (me == 0 && sum != want)
            RC_FAIL("run-ahead reduce %d: %ld, expected %ld", k, sum, want);
    }
    for (int k = 0; k < 300; k++) {
        long x = val(me, 1, k);
        RC_OK(hint_gather(&x, 1, HINT_LONG, r, 1, HINT_LONG, 0, HINT_WORLD));
        for (int p = 0; me == 0 && p < P; p++)
            if (r[p] != val(p, 1, k))
                RC_FAIL("run-ahead gather %d: block %d is %ld", k, p, r[p]);
    }
    for (int k = 0; k < 300; k++) {
        for (int p = 0; p < P; p++)
            s[p] = val(0, p, k);
        long y = -1;
        RC_OK(hint_scatter(s, 1, HINT_LONG, &y, 1, HINT_LONG, 0, HINT_WORLD));
        if (y != val(0, me, k))
            RC_FAIL("run-ahead scatter %d: %ld", k, y);
    }
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    long *s = calloc((size_t)P, sizeof *s), *r = calloc((size_t)P, sizeof *r);
    force_shm();
    for (int k = 0; k < 400; k++)
        one_round(k, s, r);
    run_ahead(s, r);
    run_ahead_mixed();
    free(s);
    free(r);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok staged_mix\n");
    return 0;
}
