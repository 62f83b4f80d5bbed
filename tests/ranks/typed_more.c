/*
 * tests/ranks/typed_more.c — derived datatypes in the collectives typed_coll does not cover, every
 * algorithm of each, run under hintrun: reduce, allreduce, reduce_scatter_block, gather, scatter,
 * gatherv, scatterv, and allgather(v) / alltoall(v) in place; one layout has a negative extent
 * (its elements run backwards from the buffer address), one has holes.
 *
 * The reference is the same call on contiguous data: the derived call's inputs packed with
 * hint_pack, the contiguous call's outputs unpacked into a second copy of the receive area with
 * hint_unpack (both checked by the datatype and collective suites on their own). The two receive
 * areas are compared whole, so bytes the type skips must keep their sentinel.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static int P;

struct layout {
    const char *name;
    hint_type t;
    ptrdiff_t extent; /* bytes from one element to the next (negative: backwards) */
};
static struct layout L[3];

/* A buffer for n elements of l: the address the call gets, inside a sentinel-filled area. */
struct buf {
    double *mem, *at;
    size_t doubles;
};

static void buf_get(struct buf *b, const struct layout *l, size_t n)
{
    size_t stride = (size_t)(l->extent < 0 ? -l->extent : l->extent) / sizeof(double);
    b->doubles = (n + 1) * stride + 4;
    RC_CHECK((b->mem = malloc(b->doubles * sizeof(double))) != NULL);
    for (size_t i = 0; i < b->doubles; i++)
        b->mem[i] = -999.0;
    b->at = l->extent < 0 ? b->mem + (b->doubles - 2) : b->mem + 1;
}

static void fill(struct buf *b, const struct layout *l, size_t n, int who)
{
    for (size_t i = 0; i < n; i++)
        b->at[(ptrdiff_t)i * l->extent / (ptrdiff_t)sizeof(double)] = who * 1000.0 + (double)i + 1;
}

static double *packed(const struct buf *b, const struct layout *l, size_t n)
{
    double *p = malloc((n + 1) * sizeof *p);
    size_t pos = 0;
    RC_OK(hint_pack(b->at, n, l->t, p, (n + 1) * sizeof *p, &pos));
    return p;
}

static void unpack_into(struct buf *b, const struct layout *l, size_t n, const double *p)
{
    size_t pos = 0;
    RC_OK(hint_unpack(p, n * sizeof *p, &pos, b->at, n, l->t));
}

static void same(const struct buf *got, const struct buf *want, const char *what, const char *alg)
{
    for (size_t i = 0; i < got->doubles; i++)
        if (got->mem[i] != want->mem[i])
            RC_FAIL("%s (%s): double %zu of the area is %g, expected %g", what, alg, i, got->mem[i], want->mem[i]);
}

static void buf_put(struct buf *b) { free(b->mem); }

/* Reductions: n doubles in layout l, sum. mode 0 allreduce, 1 reduce (root P-1), 2 rsb. */
static void t_reduce(int mode, const struct layout *l, size_t n, bool in_place, const char *alg)
{
    size_t nin = mode == 2 ? n * (size_t)P : n, nout = n;
    int root = P - 1;
    bool out_here = mode != 1 || rc_rank == root;
    struct buf s, r, want;
    buf_get(&s, l, nin);
    buf_get(&r, l, nin);
    buf_get(&want, l, nin);
    fill(&s, l, nin, rc_rank);
    if (in_place)
        fill(&r, l, nin, rc_rank);
    double *ps = packed(in_place ? &r : &s, l, nin), *pr = calloc(nin + 1, sizeof *pr);
    int st;
    if (mode == 0)
        st = hint_allreduce(ps, pr, nout, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
    else if (mode == 1)
        st = hint_reduce(ps, pr, nout, HINT_DOUBLE, HINT_SUM, root, HINT_WORLD);
    else
        st = hint_reduce_scatter_block(ps, pr, nout, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
    RC_OK(st);
    memcpy(want.mem, in_place ? r.mem : r.mem, r.doubles * sizeof(double));
    if (out_here)
        unpack_into(&want, l, nout, pr);
    const void *sb = in_place && (mode != 1 || rc_rank == root) ? HINT_IN_PLACE : (const void *)(in_place ? r.at : s.at);
    if (mode == 0)
        st = hint_allreduce(sb, r.at, nout, l->t, HINT_SUM, HINT_WORLD);
    else if (mode == 1)
        st = hint_reduce(sb, r.at, nout, l->t, HINT_SUM, root, HINT_WORLD);
    else
        st = hint_reduce_scatter_block(sb, r.at, nout, l->t, HINT_SUM, HINT_WORLD);
    if (st != HINT_SUCCESS)
        RC_FAIL("reduction %d on %s (%s): %s", mode, l->name, alg, hint_strerror(st));
    if (mode == 2 && in_place) {
        /* only the first block of r is defined after an in-place reduce_scatter_block */
        for (size_t i = 0; i < nout; i++) {
            double g = r.at[(ptrdiff_t)i * l->extent / (ptrdiff_t)sizeof(double)];
            double w = want.at[(ptrdiff_t)i * l->extent / (ptrdiff_t)sizeof(double)];
            if (g != w)
                RC_FAIL("rsb in place on %s (%s): element %zu is %g, expected %g", l->name, alg, i, g, w);
        }
    } else if (out_here) {
        same(&r, &want, mode == 0 ? "allreduce" : mode == 1 ? "reduce" : "reduce_scatter_block", alg);
    }
    free(ps);
    free(pr);
    buf_put(&s);
    buf_put(&r);
    buf_put(&want);
}

/* gather (op 0) / scatter (1) / allgather (2) / alltoall (3): n doubles a block; the derived side
   in layout l on the side named by `derived_recv`, the other contiguous; or in place. */
static void t_blocks(int op, const struct layout *l, size_t n, bool in_place, const char *alg)
{
    int root = P > 1 ? 1 : 0;
    bool root_here = rc_rank == root;
    size_t nblocks = (size_t)P;
    struct buf big, want;
    buf_get(&big, l, n * nblocks);
    buf_get(&want, l, n * nblocks);
    double *one = malloc((n + 1) * sizeof *one), *all = malloc((n * nblocks + 1) * sizeof *all);
    fill(&big, l, n * nblocks, rc_rank + 1);
    for (size_t i = 0; i < n; i++)
        one[i] = rc_rank * 100.0 + (double)i;
    /* reference on packed data: the derived side is big (gather/allgather/alltoall: receive;
       scatter: send), the other side `one` (or, in place, big's own block) */
    double *pbig = packed(&big, l, n * nblocks), *pout = calloc(n * nblocks + 1, sizeof *pout);
    /* in place, the reference works in place on the packed copy too */
    double *pref = in_place && op != 1 ? pbig : pout;
    int st = HINT_SUCCESS;
    if (op == 0)
        st = hint_gather(in_place && root_here ? HINT_IN_PLACE : one, n, HINT_DOUBLE, pref, n, HINT_DOUBLE, root,
                         HINT_WORLD);
    else if (op == 1)
        st = hint_scatter(pbig, n, HINT_DOUBLE, in_place && root_here ? HINT_IN_PLACE : (void *)pout, n, HINT_DOUBLE,
                          root, HINT_WORLD);
    else if (op == 2)
        st = hint_allgather(in_place ? HINT_IN_PLACE : one, n, HINT_DOUBLE, pref, n, HINT_DOUBLE, HINT_WORLD);
    else
        st = hint_alltoall(in_place ? HINT_IN_PLACE : one, n, HINT_DOUBLE, pref, n, HINT_DOUBLE, HINT_WORLD);
    RC_OK(st);
    memcpy(want.mem, big.mem, big.doubles * sizeof(double));
    if (op != 1 && (op != 0 || root_here))
        unpack_into(&want, l, n * nblocks, pref);
    double *got_one = calloc(n + 1, sizeof *got_one);
    if (op == 0)
        st = hint_gather(in_place && root_here ? HINT_IN_PLACE : (const void *)one, n, HINT_DOUBLE, big.at, n, l->t,
                         root, HINT_WORLD);
    else if (op == 1)
        st = hint_scatter(big.at, n, l->t, in_place && root_here ? HINT_IN_PLACE : (void *)got_one, n, HINT_DOUBLE,
                          root, HINT_WORLD);
    else if (op == 2)
        st = in_place ? hint_allgather(HINT_IN_PLACE, 0, HINT_TYPE_NULL, big.at, n, l->t, HINT_WORLD)
                      : hint_allgather(one, n, HINT_DOUBLE, big.at, n, l->t, HINT_WORLD);
    else
        st = in_place ? hint_alltoall(HINT_IN_PLACE, 0, HINT_TYPE_NULL, big.at, n, l->t, HINT_WORLD)
                      : hint_alltoall(one, n, HINT_DOUBLE, big.at, n, l->t, HINT_WORLD);
    static const char *const names[] = {"gather", "scatter", "allgather", "alltoall"};
    if (st != HINT_SUCCESS)
        RC_FAIL("%s on %s (%s)%s: %s", names[op], l->name, alg, in_place ? " in place" : "", hint_strerror(st));
    same(&big, &want, names[op], alg);
    if (op == 1 && !(in_place && root_here))
        for (size_t i = 0; i < n; i++)
            if (got_one[i] != pout[i])
                RC_FAIL("scatter on %s (%s): element %zu is %g, expected %g", l->name, alg, i, got_one[i], pout[i]);
    free(one);
    free(all);
    free(pbig);
    free(pout);
    free(got_one);
    buf_put(&big);
    buf_put(&want);
}

/* v variants on layout l: block p has (p + rc_rank) % 3 + n elements (alltoallv: sender and
   receiver agree), blocks in reverse rank order. op 0 gatherv, 1 scatterv, 2 allgatherv,
   3 alltoallv; in place where MPI allows. */
static size_t vcount(int from, int to, size_t n) { return n ? (size_t)((from + 2 * to) % 3) + n : 0; }

static void t_v(int op, const struct layout *l, size_t n, bool in_place, const char *alg)
{
    int root = 0;
    bool root_here = rc_rank == root;
    size_t cnt[64], dsp[64], tot = 0;
    for (int p = P - 1; p >= 0; p--) {
        /* the v side's count of block p: what p contributes (gatherv, allgatherv), what p gets
           (scatterv), what p sends this rank (alltoallv) */
        cnt[p] = op == 3 ? vcount(p, rc_rank, n) : vcount(p, 0, n);
        dsp[p] = tot;
        tot += cnt[p] + 1;
    }
    size_t mine = op == 3 ? 0 : vcount(rc_rank, 0, n);
    struct buf v, want;
    buf_get(&v, l, tot);
    buf_get(&want, l, tot);
    fill(&v, l, tot, rc_rank + 1);
    double *one = malloc((mine + 1) * sizeof *one), *got_one = calloc(mine + 1, sizeof *got_one);
    for (size_t i = 0; i < mine; i++)
        one[i] = rc_rank * 100.0 + (double)i;
    /* reference: the v side packed element by element into the same displacements, contiguous */
    double *pv = packed(&v, l, tot), *pout = malloc((tot + 1) * sizeof *pout);
    memcpy(pout, pv, (tot + 1) * sizeof *pout);
    size_t scnt[64], sdsp[64], stot = 0;
    for (int p = P - 1; p >= 0 && op == 3; p--) {
        scnt[p] = vcount(rc_rank, p, n);
        sdsp[p] = stot;
        stot += scnt[p] + 1;
    }
    double *sbuf = malloc((stot + 1) * sizeof *sbuf);
    for (size_t i = 0; i < stot; i++)
        sbuf[i] = rc_rank * 10.0 + (double)i;
    int st;
    if (op == 0)
        st = hint_gatherv(in_place && root_here ? HINT_IN_PLACE : one, mine, HINT_DOUBLE, pout, cnt, dsp,
                          HINT_DOUBLE, root, HINT_WORLD);
    else if (op == 1)
        st = hint_scatterv(pv, cnt, dsp, HINT_DOUBLE, in_place && root_here ? HINT_IN_PLACE : (void *)got_one, mine,
                           HINT_DOUBLE, root, HINT_WORLD);
    else if (op == 2)
        st = in_place ? hint_allgatherv(HINT_IN_PLACE, 0, HINT_TYPE_NULL, pout, cnt, dsp, HINT_DOUBLE, HINT_WORLD)
                      : hint_allgatherv(one, mine, HINT_DOUBLE, pout, cnt, dsp, HINT_DOUBLE, HINT_WORLD);
    else
        st = hint_alltoallv(sbuf, scnt, sdsp, HINT_DOUBLE, pout, cnt, dsp, HINT_DOUBLE, HINT_WORLD);
    RC_OK(st);
    double *ref_one = got_one;
    got_one = calloc(mine + 1, sizeof *got_one);
    memcpy(want.mem, v.mem, v.doubles * sizeof(double));
    if (op != 1 && (op != 0 || root_here))
        unpack_into(&want, l, tot, pout);
    if (op == 0)
        st = hint_gatherv(in_place && root_here ? HINT_IN_PLACE : one, mine, HINT_DOUBLE, v.at, cnt, dsp, l->t, root,
                          HINT_WORLD);
    else if (op == 1)
        st = hint_scatterv(v.at, cnt, dsp, l->t, in_place && root_here ? HINT_IN_PLACE : (void *)got_one, mine,
                           HINT_DOUBLE, root, HINT_WORLD);
    else if (op == 2)
        st = in_place ? hint_allgatherv(HINT_IN_PLACE, 0, HINT_TYPE_NULL, v.at, cnt, dsp, l->t, HINT_WORLD)
                      : hint_allgatherv(one, mine, HINT_DOUBLE, v.at, cnt, dsp, l->t, HINT_WORLD);
    else
        st = hint_alltoallv(sbuf, scnt, sdsp, HINT_DOUBLE, v.at, cnt, dsp, l->t, HINT_WORLD);
    static const char *const names[] = {"gatherv", "scatterv", "allgatherv", "alltoallv"};
    if (st != HINT_SUCCESS)
        RC_FAIL("%s on %s (%s)%s: %s", names[op], l->name, alg, in_place ? " in place" : "", hint_strerror(st));
    same(&v, &want, names[op], alg);
    if (op == 1 && !(in_place && root_here))
        for (size_t i = 0; i < mine; i++)
            if (got_one[i] != ref_one[i])
                RC_FAIL("scatterv on %s (%s): element %zu is %g, expected %g", l->name, alg, i, got_one[i], ref_one[i]);
    free(one);
    free(got_one);
    free(ref_one);
    free(pv);
    free(pout);
    free(sbuf);
    buf_put(&v);
    buf_put(&want);
}

static const size_t sizes[] = {0, 1, 5, 100, 3000};

/* A forced algorithm is tried at the sizes it takes (the staged ones take small blocks only). */
static const struct coll_alg *forced;
static int forced_op;

static bool fits(const char *alg, size_t block)
{
    (void)alg;
    struct coll_args probe = {.op_id = forced_op, .g = HINT_WORLD, .size = P, .rank = rc_rank, .block = block};
    return forced == NULL || coll_alg_usable((int)(forced - coll_tables[forced_op].algs), &probe);
}


static void every_alg(const char *op, void (*run)(const char *alg))
{
    int id = -1;
    for (int i = 0; i < COLL_NOPS; i++)
        if (!strcmp(coll_tables[i].op, op))
            id = i;
    RC_CHECK(id >= 0);
    const struct coll_table *t = &coll_tables[id];
    for (int i = 0; i <= t->nalgs; i++) {
        const char *alg = i < t->nalgs ? t->algs[i].name : "auto";
        RC_OK(hint_coll_set(op, alg));
        struct coll_args probe = {.op_id = id, .g = HINT_WORLD, .size = P, .rank = rc_rank, .block = 8};
        if (i < t->nalgs && !coll_alg_usable(i, &probe))
            continue; /* a node-only one when the world spans nodes, too */
        forced = i < t->nalgs ? &t->algs[i] : NULL;
        forced_op = id;
        run(alg);
    }
    RC_OK(hint_coll_set(op, "auto"));
}

#define FOR_LAYOUTS_SIZES(body)                                                                  \
    for (int li = 0; li < 3; li++)                                                               \
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)                            \
            for (int ip = 0; ip < 2; ip++) {                                                     \
                const struct layout *l = &L[li];                                                 \
                size_t n = sizes[si];                                                            \
                bool in_place = ip == 1;                                                         \
                body;                                                                            \
            }

static void run_allreduce(const char *alg) { FOR_LAYOUTS_SIZES(if (fits(alg, n * 8)) t_reduce(0, l, n, in_place, alg)) }
static void run_reduce(const char *alg) { FOR_LAYOUTS_SIZES(if (fits(alg, n * 8)) t_reduce(1, l, n, in_place, alg)) }
static void run_rsb(const char *alg) { FOR_LAYOUTS_SIZES(if (fits(alg, n * 8)) t_reduce(2, l, n, in_place, alg)) }
static void run_gather(const char *alg) { FOR_LAYOUTS_SIZES(if (fits(alg, n * 8)) t_blocks(0, l, n, in_place, alg)) }
static void run_scatter(const char *alg) { FOR_LAYOUTS_SIZES(if (fits(alg, n * 8)) t_blocks(1, l, n, in_place, alg)) }
static void run_allgather(const char *alg) { FOR_LAYOUTS_SIZES(if (in_place && fits(alg, n * 8)) t_blocks(2, l, n, true, alg)) }
static void run_alltoall(const char *alg) { FOR_LAYOUTS_SIZES(if (in_place && fits(alg, n * 8)) t_blocks(3, l, n, true, alg)) }
static void run_gatherv(const char *alg) { FOR_LAYOUTS_SIZES(t_v(0, l, n, in_place, alg)) }
static void run_scatterv(const char *alg) { FOR_LAYOUTS_SIZES(t_v(1, l, n, in_place, alg)) }
static void run_allgatherv(const char *alg) { FOR_LAYOUTS_SIZES(t_v(2, l, n, in_place, alg)) }
static void run_alltoallv(const char *alg) { FOR_LAYOUTS_SIZES(if (!in_place) t_v(3, l, n, false, alg)) }

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (P > 64)
        RC_FAIL("at most 64 ranks");
    hint_type t;
    L[0] = (struct layout){"double", HINT_DOUBLE, 8};
    RC_OK(hint_type_resized(HINT_DOUBLE, 0, 24, &t));
    RC_OK(hint_type_commit(&t));
    L[1] = (struct layout){"double+2 holes", t, 24};
    RC_OK(hint_type_resized(HINT_DOUBLE, 0, -16, &t));
    RC_OK(hint_type_commit(&t));
    L[2] = (struct layout){"double, extent -16", t, -16};
    every_alg("allreduce", run_allreduce);
    every_alg("reduce", run_reduce);
    every_alg("reduce_scatter_block", run_rsb);
    every_alg("gather", run_gather);
    every_alg("scatter", run_scatter);
    every_alg("allgather", run_allgather);
    every_alg("alltoall", run_alltoall);
    every_alg("gatherv", run_gatherv);
    every_alg("scatterv", run_scatterv);
    every_alg("allgatherv", run_allgatherv);
    every_alg("alltoallv", run_alltoallv);
    RC_OK(hint_type_free(&L[1].t));
    RC_OK(hint_type_free(&L[2].t));
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok typed_more\n");
    return 0;
}
