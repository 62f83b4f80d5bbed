/*
 * tests/ranks/user_op.c — user-defined ops in every reduction, run as ranks under hintrun.
 * The op is 2x2 integer matrix multiplication modulo a prime: exact, and it does not commute,
 * so a result equals the rank-order product x0 x1 ... xP-1 only when the ranks' contributions
 * were combined in rank order. Every algorithm of reduce, allreduce, reduce_scatter_block,
 * reduce_scatter, scan and exscan is forced in turn (from the selection tables) and checked
 * against the product computed locally, at counts 0, 1, 7 and large, for two element types:
 * four contiguous int64s, and a vector of four int64s two apart (the function must see its
 * elements in their layout, and the holes of the output must stay untouched). A commutative
 * user op (a sum) on the same types runs once per operation as well.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;
#define MOD 1000003
#define HOLE INT64_C(-7777)

/* One element type: the matrix entry k of element i lies at i * ext + k * step int64s. */
struct layout {
    hint_type t;
    size_t ext, step;
    const char *name;
};
static struct layout contig4, strided4;
static long fn_calls;

static const struct layout *layout_of(hint_type t)
{
    if (t == contig4.t)
        return &contig4;
    if (t == strided4.t)
        return &strided4;
    RC_FAIL("the user function got a type that is not the call's (%p)", (void *)t);
}

typedef struct {
    int64_t m[4];
} mat;

static mat mul(mat a, mat b)
{
    mat c;
    c.m[0] = (a.m[0] * b.m[0] + a.m[1] * b.m[2]) % MOD;
    c.m[1] = (a.m[0] * b.m[1] + a.m[1] * b.m[3]) % MOD;
    c.m[2] = (a.m[2] * b.m[0] + a.m[3] * b.m[2]) % MOD;
    c.m[3] = (a.m[2] * b.m[1] + a.m[3] * b.m[3]) % MOD;
    return c;
}

static mat add(mat a, mat b)
{
    for (int k = 0; k < 4; k++)
        a.m[k] = (a.m[k] + b.m[k]) % MOD;
    return a;
}

static mat get(const int64_t *buf, const struct layout *l, size_t i)
{
    mat x;
    for (int k = 0; k < 4; k++)
        x.m[k] = buf[i * l->ext + (size_t)k * l->step];
    return x;
}

static void put(int64_t *buf, const struct layout *l, size_t i, mat x)
{
    for (int k = 0; k < 4; k++)
        buf[i * l->ext + (size_t)k * l->step] = x.m[k];
}

/* inout = in * inout: MPI's order, the left operand from the lower ranks */
static void matmul_fn(const void *in, void *inout, size_t n, hint_type t)
{
    const struct layout *l = layout_of(t);
    fn_calls++;
    for (size_t i = 0; i < n; i++)
        put(inout, l, i, mul(get(in, l, i), get(inout, l, i)));
}

static void matsum_fn(const void *in, void *inout, size_t n, hint_type t)
{
    const struct layout *l = layout_of(t);
    for (size_t i = 0; i < n; i++)
        put(inout, l, i, add(get(in, l, i), get(inout, l, i)));
}

/* Rank r's element at global index e: small entries, so that products differ by order. */
static mat gen(int r, size_t e)
{
    mat x = {{(int64_t)((r * 7 + e * 3) % 11 + 1), (int64_t)((r * 5 + e) % 7), (int64_t)((r + e * 2) % 5),
              (int64_t)((r * 3 + e) % 13 + 1)}};
    return x;
}

/* x_lo op ... op x_hi-1 at index e (the identity when the range is empty is never asked). */
static mat fold(bool commutative, int lo, int hi, size_t e)
{
    mat acc = gen(lo, e);
    for (int r = lo + 1; r < hi; r++)
        acc = commutative ? add(acc, gen(r, e)) : mul(acc, gen(r, e));
    return acc;
}

static int64_t *alloc_elems(const struct layout *l, size_t n)
{
    size_t k = n * l->ext + 1;
    int64_t *b = malloc(k * sizeof *b);
    RC_CHECK(b != NULL);
    for (size_t i = 0; i < k; i++)
        b[i] = HOLE;
    return b;
}

static void fill(int64_t *b, const struct layout *l, size_t n, size_t first)
{
    for (size_t i = 0; i < n; i++)
        put(b, l, i, gen(rc_rank, first + i));
}

/* r holds n elements equal to the fold over [lo, hi) at global indices first...; its holes and
   what lies past the elements are untouched. */
static void expect(const char *what, const char *alg, const int64_t *r, const struct layout *l, size_t n,
                   size_t first, bool commutative, int lo, int hi)
{
    for (size_t i = 0; i < n; i++) {
        mat want = fold(commutative, lo, hi, first + i), got = get(r, l, i);
        if (memcmp(&want, &got, sizeof want) != 0)
            RC_FAIL("%s (%s, %s, %s, P=%d, n=%zu): element %zu is [%lld %lld %lld %lld], the rank-order "
                    "product of ranks %d..%d is [%lld %lld %lld %lld]",
                    what, alg, l->name, commutative ? "commutative" : "not commutative", P, n, i,
                    (long long)got.m[0], (long long)got.m[1], (long long)got.m[2], (long long)got.m[3], lo, hi - 1,
                    (long long)want.m[0], (long long)want.m[1], (long long)want.m[2], (long long)want.m[3]);
    }
    for (size_t i = 0; i < n * l->ext + 1; i++) {
        bool data = i < n * l->ext && i % l->ext % l->step == 0 && i % l->ext / l->step < 4;
        if (!data && r[i] != HOLE)
            RC_FAIL("%s (%s, %s, P=%d, n=%zu): int64 %zu outside the data was written", what, alg, l->name, P, n, i);
    }
}

static void expect_untouched(const char *what, const char *alg, const int64_t *r, const struct layout *l, size_t n)
{
    for (size_t i = 0; i < n * l->ext + 1; i++)
        if (r[i] != HOLE)
            RC_FAIL("%s (%s, %s, P=%d, n=%zu): a rank that gets nothing had int64 %zu written", what, alg, l->name, P,
                    n, i);
}

/* A forced algorithm may refuse a call it cannot run (a staged one past its size, a heap one
   without the heap): that is the documented answer, and then nothing was written. */
static bool ran(int st)
{
    if (st == HINT_ERR_UNSUPPORTED)
        return false;
    RC_OK(st);
    return true;
}

struct call {
    hint_op op;
    bool commutative;
    const struct layout *l;
    size_t n;
    const char *alg;
};

static void do_reduce(const struct call *c)
{
    int roots[3] = {0, P / 2, P - 1};
    for (int k = 0; k < 3; k++) {
        int64_t *s = alloc_elems(c->l, c->n), *r = alloc_elems(c->l, c->n);
        fill(s, c->l, c->n, 0);
        if (ran(hint_reduce(s, r, c->n, c->l->t, c->op, roots[k], HINT_WORLD))) {
            if (rc_rank == roots[k])
                expect("reduce", c->alg, r, c->l, c->n, 0, c->commutative, 0, P);
            else
                expect_untouched("reduce", c->alg, r, c->l, c->n);
        }
        free(s);
        free(r);
    }
}

static void do_allreduce(const struct call *c)
{
    int64_t *s = alloc_elems(c->l, c->n), *r = alloc_elems(c->l, c->n);
    fill(s, c->l, c->n, 0);
    if (ran(hint_allreduce(s, r, c->n, c->l->t, c->op, HINT_WORLD)))
        expect("allreduce", c->alg, r, c->l, c->n, 0, c->commutative, 0, P);
    /* in place: the input is in r */
    fill(r, c->l, c->n, 0);
    if (ran(hint_allreduce(HINT_IN_PLACE, r, c->n, c->l->t, c->op, HINT_WORLD)))
        expect("allreduce in place", c->alg, r, c->l, c->n, 0, c->commutative, 0, P);
    free(s);
    free(r);
}

static void do_rsb(const struct call *c)
{
    size_t n = c->n > 2000 ? 2000 : c->n;
    int64_t *s = alloc_elems(c->l, n * (size_t)P), *r = alloc_elems(c->l, n);
    fill(s, c->l, n * (size_t)P, 0);
    if (ran(hint_reduce_scatter_block(s, r, n, c->l->t, c->op, HINT_WORLD)))
        expect("reduce_scatter_block", c->alg, r, c->l, n, n * (size_t)rc_rank, c->commutative, 0, P);
    free(s);
    free(r);
}

static void do_rs(const struct call *c)
{
    size_t base = c->n > 2000 ? 2000 : c->n, total = 0, first = 0;
    size_t *counts = malloc((size_t)P * sizeof *counts);
    for (int p = 0; p < P; p++) {
        counts[p] = base ? base + (size_t)(p % 3) - 1 : (size_t)(p % 2); /* zeros, odd sizes */
        first += p < rc_rank ? counts[p] : 0;
        total += counts[p];
    }
    int64_t *s = alloc_elems(c->l, total), *r = alloc_elems(c->l, counts[rc_rank]);
    fill(s, c->l, total, 0);
    if (ran(hint_reduce_scatter(s, r, counts, c->l->t, c->op, HINT_WORLD)))
        expect("reduce_scatter", c->alg, r, c->l, counts[rc_rank], first, c->commutative, 0, P);
    free(s);
    free(r);
    free(counts);
}

static void do_scan(const struct call *c)
{
    int64_t *s = alloc_elems(c->l, c->n), *r = alloc_elems(c->l, c->n);
    fill(s, c->l, c->n, 0);
    if (ran(hint_scan(s, r, c->n, c->l->t, c->op, HINT_WORLD)))
        expect("scan", c->alg, r, c->l, c->n, 0, c->commutative, 0, rc_rank + 1);
    fill(r, c->l, c->n, 0);
    if (ran(hint_scan(HINT_IN_PLACE, r, c->n, c->l->t, c->op, HINT_WORLD)))
        expect("scan in place", c->alg, r, c->l, c->n, 0, c->commutative, 0, rc_rank + 1);
    free(s);
    free(r);
}

static void do_exscan(const struct call *c)
{
    int64_t *s = alloc_elems(c->l, c->n), *r = alloc_elems(c->l, c->n);
    fill(s, c->l, c->n, 0);
    if (ran(hint_exscan(s, r, c->n, c->l->t, c->op, HINT_WORLD))) {
        if (rc_rank == 0)
            expect_untouched("exscan (rank 0 is left alone)", c->alg, r, c->l, c->n);
        else
            expect("exscan", c->alg, r, c->l, c->n, 0, c->commutative, 0, rc_rank);
    }
    free(s);
    free(r);
}

struct opcase {
    int op_id;
    void (*run)(const struct call *);
};

static const struct opcase cases[] = {
    {COLL_REDUCE, do_reduce},        {COLL_ALLREDUCE, do_allreduce}, {COLL_REDUCE_SCATTER_BLOCK, do_rsb},
    {COLL_REDUCE_SCATTER, do_rs},    {COLL_SCAN, do_scan},           {COLL_EXSCAN, do_exscan},
};

/* The matrices really do not commute: the reverse order gives another product somewhere. */
static void check_the_op_does_not_commute(void)
{
    if (P < 2)
        return;
    for (size_t e = 0; e < 7; e++) {
        mat fwd = fold(false, 0, P, e), rev = gen(P - 1, e);
        for (int r = P - 2; r >= 0; r--)
            rev = mul(rev, gen(r, e));
        if (memcmp(&fwd, &rev, sizeof fwd) != 0)
            return;
    }
    RC_FAIL("the test's matrices commute at P=%d: it could not tell the orders apart", P);
}

/* The ring algorithms combine out of rank order: forced with an op that does not commute they
   run an order-keeping algorithm and say so; with one that commutes they run themselves. */
static void check_ring_falls_back(hint_op noncommutative, hint_op commutative)
{
    static const struct {
        const char *op, *instead;
    } rings[] = {{"allreduce", "recursive_doubling"}, {"reduce_scatter_block", "reduce_scatter"}};
    int64_t s[4 * 64], r[4 * 64];
    for (size_t k = 0; k < 2 && P > 1; k++) {
        RC_OK(hint_coll_set(rings[k].op, "ring"));
        for (int c = 0; c < 2; c++) {
            hint_op op = c ? commutative : noncommutative;
            const char *ran = NULL;
            for (int i = 0; i < 4 * P; i++)
                s[i] = 1;
            if (k == 0)
                RC_OK(hint_allreduce(s, r, 1, contig4.t, op, HINT_WORLD));
            else
                RC_OK(hint_reduce_scatter_block(s, r, 1, contig4.t, op, HINT_WORLD));
            RC_OK(hint_coll_last(rings[k].op, &ran));
            const char *want = c ? "ring" : rings[k].instead;
            if (ran == NULL || strcmp(ran, want) != 0)
                RC_FAIL("%s forced to ring with a%s op ran %s, not %s", rings[k].op,
                        c ? " commutative" : "n op that does not commute", ran ? ran : "nothing", want);
        }
        RC_OK(hint_coll_set(rings[k].op, "auto"));
    }
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    check_the_op_does_not_commute();
    RC_OK(hint_type_contiguous(4, HINT_INT64, &contig4.t));
    RC_OK(hint_type_commit(&contig4.t));
    contig4 = (struct layout){contig4.t, 4, 1, "4 int64"};
    RC_OK(hint_type_vector(4, 1, 2, HINT_INT64, &strided4.t));
    RC_OK(hint_type_commit(&strided4.t));
    strided4 = (struct layout){strided4.t, 7, 2, "vector of 4 int64"};
    hint_op matmul, matsum;
    RC_OK(hint_op_create(matmul_fn, 0, &matmul));
    RC_OK(hint_op_create(matsum_fn, 1, &matsum));
    const size_t counts[] = {0, 1, 7, 5000};
    const struct layout *layouts[] = {&contig4, &strided4};
    long runs = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct coll_table *tab = &coll_tables[cases[k].op_id];
        for (int alg = 0; alg < tab->nalgs; alg++) {
            RC_OK(hint_coll_set(tab->op, tab->algs[alg].name));
            for (size_t li = 0; li < 2; li++)
                for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
                    struct call c = {matmul, false, layouts[li], counts[ci], tab->algs[alg].name};
                    cases[k].run(&c);
                    runs++;
                }
        }
        RC_OK(hint_coll_set(tab->op, "auto"));
        for (size_t li = 0; li < 2; li++) {
            struct call c = {matsum, true, layouts[li], 300, "auto"};
            cases[k].run(&c);
            c = (struct call){matmul, false, layouts[li], 300, "auto"};
            cases[k].run(&c);
        }
    }
    if (P > 1)
        RC_CHECK(fn_calls > 0); /* the user's function did the combining */
    check_ring_falls_back(matmul, matsum);
    RC_OK(hint_op_free(&matmul));
    RC_OK(hint_op_free(&matsum));
    RC_CHECK(matmul == HINT_OP_NULL);
    RC_OK(hint_type_free(&contig4.t));
    RC_OK(hint_type_free(&strided4.t));
    RC_OK(hint_barrier(HINT_WORLD));
    if (rc_rank == 0)
        printf("ok user_op P=%d: %ld algorithm runs\n", P, runs);
    RC_OK(hint_finalize());
    return 0;
}
