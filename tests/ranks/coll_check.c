/*
 * tests/ranks/coll_check.c — every algorithm of one collective against a straightforward
 * reference, run as ranks under hintrun:
 *   coll_check OP        all algorithms of OP (from the selection table), sizes 0, 1, 7, 8, 64, 100,
 *                        4096, 65536 and 1 MiB per rank, on the world, on a split group, and
 *                        in place where MPI allows it
 *   coll_check OP regroup  each algorithm of OP at a few sizes on groups made, freed and made
 *                        again (dup, split, create), each new group reusing the freed one's slot
 *   coll_check errors    bad arguments return their HINT_ERR_* without hanging anyone
 * Data is a function of (rank, block, index), so every rank can compute what it must receive.
 */
#include <complex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "collectives/algs.h"
#include "collectives/coll.h"
#include "hint.h"
#include "tests/common/malloc_heap.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static const size_t sizes[] = {0, 1, 7, 8, 64, 100, 4096, 65536, 1 << 20};
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Test buffers: malloc (the shared heap) or, with HINT_TEST_BUFFERS=mmap, private mappings off
   the heap, or with HINT_TEST_BUFFERS=static, a static array (bump allocation, rewound when no
   buffer is live), so every algorithm is checked with each kind. */
static bool use_mmap, use_static;
static _Alignas(64) unsigned char static_pool[40 << 20];
static size_t static_used;
static int static_live;
static bool bufs_on_heap; /* test buffers lie on the shared heap (not mmap, not HINT_HEAP=private) */

static void *tb_alloc(size_t n)
{
    if (use_static) {
        size_t at = (static_used + 63) & ~(size_t)63;
        if (at + n > sizeof static_pool)
            RC_FAIL("static pool exhausted (%zu + %zu bytes)", at, n);
        static_used = at + n;
        static_live++;
        return static_pool + at;
    }
    if (!use_mmap)
        return malloc(n);
    size_t *p = mmap(NULL, n + 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        RC_FAIL("mmap of %zu bytes failed", n);
    p[0] = n + 64;
    return (char *)p + 64;
}

static void *tb_calloc(size_t n, size_t s)
{
    void *p = tb_alloc(n * s);
    if (use_static)
        memset(p, 0, n * s); /* mmap memory is zero already */
    return p;
}

static void tb_free(void *q)
{
    if (use_static) {
        if (--static_live == 0)
            static_used = 0;
        return;
    }
    if (!use_mmap) {
        free(q);
        return;
    }
    size_t *p = (size_t *)((char *)q - 64);
    munmap(p, p[0]);
}

/* Changed for each new group in the regroup mode, so that data a freed group left behind in
   shared state can never pass for this call's. */
static int salt;

static unsigned char gen(int who, int block, size_t i)
{
    return (unsigned char)(who * 37 + block * 101 + i * 11 + (i >> 9) + 1 + salt * 53);
}

static void fill(unsigned char *b, size_t n, int who, int block)
{
    for (size_t i = 0; i < n; i++)
        b[i] = gen(who, block, i);
}

static const char *current_alg = "";

static void expect_block(const unsigned char *b, size_t n, int who, int block, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (b[i] != gen(who, block, i))
            RC_FAIL("%s (%s): byte %zu of %zu of block from %d is %u, expected %u", what, current_alg, i, n, who,
                    b[i], gen(who, block, i));
}

struct ctx {
    hint_group g;
    int r, P;
    const char *alg;
    const char *op;
};

static void force(struct ctx *c)
{
    RC_OK(hint_coll_set(c->op, c->alg));
}

/* heap_copy: the library moved this call's inputs to the heap itself (reduce_scatter_block in
   place works from a copy), so a shared-heap algorithm runs even with buffers off the heap. */
static void check_ran_as(struct ctx *c, size_t bytes, bool heap_copy)
{
    const char *ran = NULL;
    RC_OK(hint_coll_last(c->op, &ran));
    RC_CHECK(ran != NULL);
    /* off the heap, the shared-heap algorithms hand over to message-based ones, and report it */
    bool heap_alg = !strcmp(c->alg, "row") || !strcmp(c->alg, "column") || !strcmp(c->alg, "hilbert") ||
                    !strcmp(c->alg, "morton") || !strcmp(c->alg, "morton_numa") || !strcmp(c->alg, "heap");
    const char *fallback = !strncmp(c->op, "allgather", 9)              ? "ring"
                           : !strcmp(c->op, "allreduce")            ? "recursive_doubling"
                           : !strcmp(c->op, "bcast")                ? "shm"
                           : !strcmp(c->op, "reduce")               ? "binomial"
                           : !strcmp(c->op, "gather") || !strcmp(c->op, "scatter") ? "linear"
                           : !strcmp(c->op, "reduce_scatter_block") ? "ring"
                                                                    : "pairwise";
    /* except the copy orders of alltoall(v) and allgather(v), which reach contiguous buffers
       anywhere through CMA (where the kernel allows it: hint_coll_last then says pairwise/ring) */
    bool order_alg = heap_alg && strcmp(c->alg, "heap") != 0 &&
                     (!strncmp(c->op, "allgather", 9) || !strncmp(c->op, "alltoall", 8));
    const char *want = !bufs_on_heap && heap_alg && !heap_copy && !order_alg ? fallback : c->alg;
    if (order_alg && !bufs_on_heap && !strcmp(ran, fallback))
        want = fallback; /* the kernel refuses CMA here (order_buffers.c tests both paths strictly) */
    if (c->P > 1 && bytes > 0 && strcmp(ran, want) != 0)
        RC_FAIL("%s forced to %s ran %s (expected %s)", c->op, c->alg, ran, want);
}

static void check_ran(struct ctx *c, size_t bytes) { check_ran_as(c, bytes, false); }

/* ---- reference checks per operation ---- */

static void t_barrier(struct ctx *c)
{
    /* nobody leaves before everybody entered: max(entry) <= min(exit) on the shared clock */
    for (int k = 0; k < 20; k++) {
        double times[2] = {hint_wtime(), 0};
        RC_OK(hint_barrier(c->g));
        times[1] = hint_wtime();
        double *all = tb_alloc(2 * sizeof(double) * (size_t)c->P);
        hint_coll_set("allgather", "auto");
        RC_OK(hint_allgather(times, 2, HINT_DOUBLE, all, 2, HINT_DOUBLE, c->g));
        double max_in = 0, min_out = 1e300;
        for (int p = 0; p < c->P; p++) {
            max_in = all[2 * p] > max_in ? all[2 * p] : max_in;
            min_out = all[2 * p + 1] < min_out ? all[2 * p + 1] : min_out;
        }
        RC_CHECK(max_in <= min_out);
        tb_free(all);
        check_ran(c, 1);
    }
}

static void t_bcast(struct ctx *c, size_t n)
{
    unsigned char *b = tb_alloc(n + 1);
    for (int root = 0; root < c->P; root += (c->P > 3 ? c->P - 1 : 1)) {
        if (c->r == root)
            fill(b, n, root, 0);
        else
            memset(b, 0, n);
        RC_OK(hint_bcast(b, n, HINT_BYTE, root, c->g));
        check_ran(c, n);
        expect_block(b, n, root, 0, "bcast");
    }
    tb_free(b);
}

static void t_gather(struct ctx *c, size_t n, bool in_place)
{
    int root = c->P - 1;
    unsigned char *s = tb_alloc(n + 1), *r = tb_alloc((size_t)c->P * n + 1);
    fill(s, n, c->r, 0);
    memset(r, 0, (size_t)c->P * n);
    const void *sb = s;
    if (in_place && c->r == root) {
        fill(r + (size_t)root * n, n, root, 0);
        sb = HINT_IN_PLACE;
    }
    RC_OK(hint_gather(sb, n, HINT_BYTE, r, n, HINT_BYTE, root, c->g));
    check_ran(c, n);
    if (c->r == root)
        for (int p = 0; p < c->P; p++)
            expect_block(r + (size_t)p * n, n, p, 0, "gather");
    tb_free(s);
    tb_free(r);
}

static void t_scatter(struct ctx *c, size_t n, bool in_place)
{
    int root = 0;
    unsigned char *s = tb_alloc((size_t)c->P * n + 1), *r = tb_alloc(n + 1);
    if (c->r == root)
        for (int p = 0; p < c->P; p++)
            fill(s + (size_t)p * n, n, root, p);
    memset(r, 0, n);
    void *rb = (in_place && c->r == root) ? HINT_IN_PLACE : r;
    RC_OK(hint_scatter(s, n, HINT_BYTE, rb, n, HINT_BYTE, root, c->g));
    check_ran(c, n);
    expect_block(rb == HINT_IN_PLACE ? s : r, n, root, c->r, "scatter");
    tb_free(s);
    tb_free(r);
}

static void t_allgather(struct ctx *c, size_t n, bool in_place)
{
    unsigned char *s = tb_alloc(n + 1), *r = tb_alloc((size_t)c->P * n + 1);
    fill(s, n, c->r, 0);
    memset(r, 0, (size_t)c->P * n);
    if (in_place)
        fill(r + (size_t)c->r * n, n, c->r, 0);
    RC_OK(hint_allgather(in_place ? HINT_IN_PLACE : s, n, HINT_BYTE, r, n, HINT_BYTE, c->g));
    check_ran(c, n);
    for (int p = 0; p < c->P; p++)
        expect_block(r + (size_t)p * n, n, p, 0, "allgather");
    tb_free(s);
    tb_free(r);
}

static void t_alltoall(struct ctx *c, size_t n, bool in_place)
{
    size_t tot = (size_t)c->P * n;
    unsigned char *s = tb_alloc(tot + 1), *r = tb_alloc(tot + 1);
    for (int p = 0; p < c->P; p++)
        fill((in_place ? r : s) + (size_t)p * n, n, c->r, p);
    if (!in_place)
        memset(r, 0, tot);
    RC_OK(hint_alltoall(in_place ? HINT_IN_PLACE : s, n, HINT_BYTE, r, n, HINT_BYTE, c->g));
    check_ran(c, n);
    for (int p = 0; p < c->P; p++)
        expect_block(r + (size_t)p * n, n, p, c->r, "alltoall");
    tb_free(s);
    tb_free(r);
}

/* Bytes of all blocks: with none at all, any algorithm may serve the call (nothing to move). */
static size_t vtotal(const size_t *counts, int P)
{
    size_t t = 0;
    for (int p = 0; p < P; p++)
        t += counts[p];
    return t;
}

/* v variants: rank p's block has vcount(p, n) bytes, placed in reverse rank order with gaps. */
static size_t vcount(int p, size_t n) { return (p % 3 == 1) ? 0 : n + (size_t)p % 5; }

static size_t vlayout(int P, size_t n, size_t *counts, size_t *displs)
{
    size_t off = 0;
    /* HINT_TEST_VDENSE=1: in rank order without gaps, the usual prefix sums (allgatherv hier then
       gathers straight into the receive buffer) */
    if (getenv("HINT_TEST_VDENSE") && atoi(getenv("HINT_TEST_VDENSE"))) {
        for (int p = 0; p < P; p++) {
            counts[p] = vcount(p, n);
            displs[p] = off;
            off += counts[p];
        }
        return off + 1;
    }
    for (int p = P - 1; p >= 0; p--) {
        counts[p] = vcount(p, n);
        displs[p] = off;
        off += counts[p] + 3;
    }
    return off + 1;
}

static void t_gatherv(struct ctx *c, size_t n, bool in_place)
{
    int root = c->P / 2;
    size_t *cnt = tb_alloc(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    size_t tot = vlayout(c->P, n, cnt, dsp);
    unsigned char *s = tb_alloc(cnt[c->r] + 1), *r = tb_calloc(tot, 1);
    fill(s, cnt[c->r], c->r, 0);
    const void *sb = s;
    if (in_place && c->r == root) {
        fill(r + dsp[root], cnt[root], root, 0);
        sb = HINT_IN_PLACE;
    }
    RC_OK(hint_gatherv(sb, cnt[c->r], HINT_BYTE, r, cnt, dsp, HINT_BYTE, root, c->g));
    check_ran(c, 1);
    if (c->r == root)
        for (int p = 0; p < c->P; p++)
            expect_block(r + dsp[p], cnt[p], p, 0, "gatherv");
    tb_free(cnt);
    tb_free(s);
    tb_free(r);
}

static void t_scatterv(struct ctx *c, size_t n, bool in_place)
{
    int root = c->P - 1;
    size_t *cnt = tb_alloc(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    size_t tot = vlayout(c->P, n, cnt, dsp);
    unsigned char *s = tb_calloc(tot, 1), *r = tb_calloc(cnt[c->r] + 1, 1);
    if (c->r == root)
        for (int p = 0; p < c->P; p++)
            fill(s + dsp[p], cnt[p], root, p);
    void *rb = (in_place && c->r == root) ? HINT_IN_PLACE : r;
    RC_OK(hint_scatterv(s, cnt, dsp, HINT_BYTE, rb, cnt[c->r], HINT_BYTE, root, c->g));
    check_ran(c, 1);
    expect_block(rb == HINT_IN_PLACE ? s + dsp[root] : r, cnt[c->r], root, c->r, "scatterv");
    tb_free(cnt);
    tb_free(s);
    tb_free(r);
}

static void t_allgatherv(struct ctx *c, size_t n, bool in_place)
{
    size_t *cnt = tb_alloc(2 * sizeof(size_t) * (size_t)c->P), *dsp = cnt + c->P;
    size_t tot = vlayout(c->P, n, cnt, dsp);
    unsigned char *s = tb_alloc(cnt[c->r] + 1), *r = tb_calloc(tot, 1);
    fill(s, cnt[c->r], c->r, 0);
    if (in_place)
        fill(r + dsp[c->r], cnt[c->r], c->r, 0);
    RC_OK(hint_allgatherv(in_place ? HINT_IN_PLACE : s, cnt[c->r], HINT_BYTE, r, cnt, dsp, HINT_BYTE, c->g));
    check_ran(c, vtotal(cnt, c->P));
    for (int p = 0; p < c->P; p++)
        expect_block(r + dsp[p], cnt[p], p, 0, "allgatherv");
    tb_free(cnt);
    tb_free(s);
    tb_free(r);
}

static void t_alltoallv(struct ctx *c, size_t n, bool in_place)
{
    int P = c->P;
    /* rank r sends pair_count(r, p) bytes to p */
#define PAIR(a, b) ((((a) + (b)) % 4 == 3) ? 0 : n + (size_t)((a) * 7 + (b)) % 5)
    size_t *sc = tb_alloc(4 * sizeof(size_t) * (size_t)P), *sd = sc + P, *rcn = sd + P, *rd = rcn + P;
    size_t so = 0, ro = 0;
    for (int p = P - 1; p >= 0; p--) {
        sc[p] = PAIR(c->r, p);
        sd[p] = so;
        so += sc[p] + 1;
        rcn[p] = PAIR(p, c->r);
        rd[p] = ro;
        ro += rcn[p] + 2;
    }
    unsigned char *s = tb_calloc(so + 1, 1), *r = tb_calloc(ro + 1, 1);
    if (in_place) {
        /* in place: the receive layout describes the send side too, so sizes must be symmetric */
        for (int p = 0; p < P; p++)
            fill(r + rd[p], rcn[p], c->r, p);
        for (int p = 0; p < P; p++)
            if (PAIR(c->r, p) != PAIR(p, c->r))
                goto skip_asym;
        RC_OK(hint_alltoallv(HINT_IN_PLACE, NULL, NULL, HINT_BYTE, r, rcn, rd, HINT_BYTE, c->g));
        check_ran(c, 1);
        for (int p = 0; p < P; p++)
            expect_block(r + rd[p], rcn[p], p, c->r, "alltoallv in place");
    skip_asym:;
    } else {
        for (int p = 0; p < P; p++)
            fill(s + sd[p], sc[p], c->r, p);
        RC_OK(hint_alltoallv(s, sc, sd, HINT_BYTE, r, rcn, rd, HINT_BYTE, c->g));
        check_ran(c, 1);
        for (int p = 0; p < P; p++)
            expect_block(r + rd[p], rcn[p], p, c->r, "alltoallv");
    }
#undef PAIR
    tb_free(sc);
    tb_free(s);
    tb_free(r);
}

/* ---- reductions: several kinds and ops, integer-valued so every order gives equal results ---- */

static long ival(int who, size_t i) { return (long)((who * 7 + i * 3 + (size_t)salt) % 11) - 5 + (long)(i % 4 == 0); }

#define REDUCE_KIND(NAME, CTYPE, HTYPE, OPH, OPEXPR, INIT)                                       \
    static void NAME(struct ctx *c, size_t count, int mode, bool in_place)                      \
    {                                                                                            \
        CTYPE *s = tb_alloc(count * sizeof(CTYPE) * (size_t)c->P + 8);                             \
        CTYPE *r = tb_alloc(count * sizeof(CTYPE) * (size_t)c->P + 8);                             \
        size_t n = mode == 2 ? count * (size_t)c->P : count;                                     \
        for (size_t i = 0; i < n; i++)                                                           \
            s[i] = (CTYPE)ival(c->r, i);                                                         \
        memcpy(r, s, n * sizeof(CTYPE));                                                         \
        const void *sb = in_place ? HINT_IN_PLACE : (const void *)s;                             \
        int root = c->P > 1 ? 1 : 0;                                                             \
        if (mode == 0)                                                                           \
            RC_OK(hint_allreduce(sb, r, count, HTYPE, OPH, c->g));                               \
        else if (mode == 1)                                                                      \
            RC_OK(hint_reduce(c->r == root ? sb : s, r, count, HTYPE, OPH, root, c->g));         \
        else                                                                                     \
            RC_OK(hint_reduce_scatter_block(sb, r, count, HTYPE, OPH, c->g));                    \
        check_ran_as(c, count, mode == 2 && in_place && MALLOC_ON_HEAP); /* copy: malloc'd */     \
        if (mode == 1 && c->r != root)                                                           \
            goto done;                                                                           \
        for (size_t i = 0; i < count; i++) {                                                     \
            size_t gi = mode == 2 ? (size_t)c->r * count + i : i;                                \
            CTYPE want = (CTYPE)ival(0, gi);                                                     \
            for (int p = 1; p < c->P; p++) {                                                     \
                CTYPE x = (CTYPE)ival(p, gi);                                                    \
                want = OPEXPR;                                                                   \
            }                                                                                    \
            if (r[i] != want)                                                                    \
                RC_FAIL("%s %s element %zu: got %g, want %g", c->op, #NAME, i, (double)r[i],     \
                        (double)want);                                                           \
        }                                                                                        \
    done:                                                                                        \
        tb_free(s);                                                                                 \
        tb_free(r);                                                                                 \
    }

REDUCE_KIND(sum_int, int, HINT_INT, HINT_SUM, want + x, 0)
REDUCE_KIND(max_double, double, HINT_DOUBLE, HINT_MAX, (x > want ? x : want), 0)
REDUCE_KIND(bxor_u64, uint64_t, HINT_UINT64, HINT_BXOR, want ^ x, 0)
REDUCE_KIND(min_i32, int32_t, HINT_INT32, HINT_MIN, (x < want ? x : want), 0)
REDUCE_KIND(land_long, long, HINT_LONG, HINT_LAND, (long)(want && x), 0)
REDUCE_KIND(sum_float, float, HINT_FLOAT, HINT_SUM, want + x, 0)

static void t_reduction(struct ctx *c, size_t bytes, int mode, bool in_place)
{
    sum_int(c, bytes / sizeof(int), mode, in_place);
    max_double(c, bytes / sizeof(double), mode, in_place);
    if (bytes <= 65536) {
        bxor_u64(c, bytes / 8, mode, in_place);
        min_i32(c, bytes / 4, mode, in_place);
        land_long(c, bytes / 8, mode, in_place);
        sum_float(c, bytes / 4, mode, in_place);
    }
    if (bytes == 7) /* odd sizes too: 7 elements */
        sum_int(c, 7, mode, in_place);
}

static int find_op(const char *op);

/* Whether the forced algorithm applies to blocks of n bytes (some only take small blocks). */
static bool applicable_at(struct ctx *c, size_t n)
{
    const struct coll_table *t = &coll_tables[find_op(c->op)];
    for (int i = 0; i < t->nalgs; i++)
        if (!strcmp(t->algs[i].name, c->alg)) {
            struct coll_args probe = {.op_id = find_op(c->op), .g = c->g, .size = c->P, .rank = c->r, .block = n};
            return coll_alg_usable(i, &probe);
        }
    return true;
}

/* One call of op with blocks of n bytes, for the status a forced algorithm gives. */
static int call_sized(const char *op, hint_group g, int P, size_t n)
{
    char *s = calloc((size_t)P, n), *r = calloc((size_t)P, n);
    int st;
    if (!strcmp(op, "alltoall"))
        st = hint_alltoall(s, n, HINT_BYTE, r, n, HINT_BYTE, g);
    else if (!strcmp(op, "allgather"))
        st = hint_allgather(s, n, HINT_BYTE, r, n, HINT_BYTE, g);
    else if (!strcmp(op, "allreduce") && n % 8 == 0)
        st = hint_allreduce(s, r, n / 8, HINT_DOUBLE, HINT_SUM, g);
    else if (!strcmp(op, "reduce") && n % 8 == 0)
        st = hint_reduce(s, r, n / 8, HINT_DOUBLE, HINT_SUM, 0, g);
    else if (!strcmp(op, "reduce_scatter_block") && n % 8 == 0)
        st = hint_reduce_scatter_block(s, r, n / 8, HINT_DOUBLE, HINT_SUM, g);
    else if (!strcmp(op, "gather"))
        st = hint_gather(s, n, HINT_BYTE, r, n, HINT_BYTE, 0, g);
    else if (!strcmp(op, "scatter"))
        st = hint_scatter(s, n, HINT_BYTE, r, n, HINT_BYTE, 0, g);
    else if (!strcmp(op, "bcast"))
        st = hint_bcast(r, n, HINT_BYTE, 0, g);
    else
        RC_FAIL("no sized call for %s", op);
    free(s);
    free(r);
    return st;
}

static void run_op_sizes(struct ctx *c, const size_t *sizes, size_t nsizes)
{
    for (size_t k = 0; k < nsizes; k++) {
        size_t n = sizes[k];
        /* keep each rank's buffers at most 16 MiB */
        bool per_peer = !strcmp(c->op, "alltoall") || !strcmp(c->op, "alltoallv") || !strcmp(c->op, "allgather") ||
                        !strcmp(c->op, "allgatherv") || !strcmp(c->op, "gather") || !strcmp(c->op, "scatter") ||
                        !strcmp(c->op, "gatherv") || !strcmp(c->op, "scatterv") || !strcmp(c->op, "reduce_scatter_block");
        if (per_peer && n * (size_t)c->P > (16u << 20))
            continue;
        if (!applicable_at(c, n)) {
            /* forced but not applicable at this size: the call must say so */
            if (c->P > 1 && n > 0)
                RC_EXPECT(call_sized(c->op, c->g, c->P, n), HINT_ERR_UNSUPPORTED);
            continue;
        }
        for (int ip = 0; ip < 2; ip++) {
            bool in_place = ip == 1;
            if (!strcmp(c->op, "barrier")) {
                if (k == 0 && !in_place)
                    t_barrier(c);
            } else if (!strcmp(c->op, "bcast")) {
                if (!in_place)
                    t_bcast(c, n);
            } else if (!strcmp(c->op, "gather"))
                t_gather(c, n, in_place);
            else if (!strcmp(c->op, "scatter"))
                t_scatter(c, n, in_place);
            else if (!strcmp(c->op, "allgather"))
                t_allgather(c, n, in_place);
            else if (!strcmp(c->op, "alltoall"))
                t_alltoall(c, n, in_place);
            else if (!strcmp(c->op, "gatherv"))
                t_gatherv(c, n, in_place);
            else if (!strcmp(c->op, "scatterv"))
                t_scatterv(c, n, in_place);
            else if (!strcmp(c->op, "allgatherv"))
                t_allgatherv(c, n, in_place);
            else if (!strcmp(c->op, "alltoallv"))
                t_alltoallv(c, n, in_place);
            else if (!strcmp(c->op, "allreduce"))
                t_reduction(c, n, 0, in_place);
            else if (!strcmp(c->op, "reduce"))
                t_reduction(c, n, 1, in_place);
            else if (!strcmp(c->op, "reduce_scatter_block"))
                t_reduction(c, n, 2, in_place);
            else
                RC_FAIL("no reference for %s", c->op);
        }
    }
}

/* HINT_TEST_SIZES=a,b,...: only these sizes (a driver that keeps its cost small). */
static void run_op(struct ctx *c)
{
    const char *v = getenv("HINT_TEST_SIZES");
    size_t mine[NSIZES], n = 0;
    for (char *end; v && *v && n < NSIZES; v = *end ? end + 1 : end)
        mine[n++] = strtoul(v, &end, 10);
    if (n > 0)
        run_op_sizes(c, mine, n);
    else
        run_op_sizes(c, sizes, NSIZES);
}

/* HINT_TEST_ALGS=prefix: only the algorithms whose names start with it (tests/ranks/test_coll_hier). */
static bool skipped_alg(const char *name)
{
    const char *only = getenv("HINT_TEST_ALGS");
    return only && *only && strncmp(name, only, strlen(only)) != 0;
}

/* One small call of op (8 bytes a block), for checking the status a forced algorithm gives. */
static int call_small(const char *op, hint_group g, int P)
{
    static char s[8 * 64], r[8 * 64];
    size_t cnt[64], dsp[64];
    for (int p = 0; p < P; p++)
        cnt[p] = 8, dsp[p] = 8 * (size_t)p;
    if (!strcmp(op, "barrier"))
        return hint_barrier(g);
    if (!strcmp(op, "bcast"))
        return hint_bcast(r, 8, HINT_BYTE, 0, g);
    if (!strcmp(op, "allgather"))
        return hint_allgather(s, 8, HINT_BYTE, r, 8, HINT_BYTE, g);
    if (!strcmp(op, "allgatherv"))
        return hint_allgatherv(s, 8, HINT_BYTE, r, cnt, dsp, HINT_BYTE, g);
    if (!strcmp(op, "alltoall"))
        return hint_alltoall(s, 8, HINT_BYTE, r, 8, HINT_BYTE, g);
    if (!strcmp(op, "alltoallv"))
        return hint_alltoallv(s, cnt, dsp, HINT_BYTE, r, cnt, dsp, HINT_BYTE, g);
    if (!strcmp(op, "gatherv"))
        return hint_gatherv(s, 8, HINT_BYTE, r, cnt, dsp, HINT_BYTE, 0, g);
    if (!strcmp(op, "scatterv"))
        return hint_scatterv(s, cnt, dsp, HINT_BYTE, r, 8, HINT_BYTE, 0, g);
    return call_sized(op, g, P, 8);
}

static int find_op(const char *op)
{
    int id = coll_op_by_name(op);
    if (id < 0)
        RC_FAIL("unknown op %s", op);
    return id;
}

/* This rank's node as hintrun gave it (HINT_NODE_ID; one node without it). */
static int my_node(void)
{
    const char *v = getenv("HINT_NODE_ID");
    return v ? atoi(v) : 0;
}

/* Whether g's members are on several nodes, from what each member says of itself (not from the
   library's node map, which this checks). */
static bool spans_nodes(hint_group g)
{
    int P, me = my_node();
    RC_OK(hint_group_size(g, &P));
    int *all = malloc((size_t)P * sizeof *all);
    RC_CHECK(all != NULL);
    RC_OK(hint_coll_set("allgather", "auto"));
    RC_OK(hint_allgather(&me, 1, HINT_INT, all, 1, HINT_INT, g));
    bool spans = false;
    for (int p = 1; p < P; p++)
        spans = spans || all[p] != all[0];
    free(all);
    return spans;
}

/* Node-only algorithms refused (forced on a group spanning nodes: HINT_ERR_UNSUPPORTED). */
static int refused_across;

static void all_algorithms(const char *op, hint_group g)
{
    struct ctx c = {.g = g, .op = op};
    RC_OK(hint_group_rank(g, &c.r));
    RC_OK(hint_group_size(g, &c.P));
    bool spans = spans_nodes(g);
    const struct coll_table *t = &coll_tables[find_op(op)];
    for (int i = 0; i < t->nalgs; i++) {
        c.alg = t->algs[i].name;
        if (skipped_alg(c.alg))
            continue;
        /* an algorithm that cannot run for this P must say so, then is skipped */
        RC_OK(hint_coll_set(op, c.alg));
        struct coll_args probe = {.op_id = find_op(op), .g = g, .size = c.P, .rank = c.r};
        bool usable = coll_alg_usable(i, &probe);
        /* across nodes a node-only algorithm never runs; on one node the node segment's do */
        if (spans && t->algs[i].node_only) {
            RC_CHECK(!usable);
            refused_across++;
        }
        if (!spans && c.P > 1 && t->algs[i].applicable == coll_shm_ok && !usable)
            RC_FAIL("%s/%s cannot run on a group of %d on one node", op, c.alg, c.P);
        if (!usable) {
            if (c.P > 1)
                RC_EXPECT(call_small(op, g, c.P), HINT_ERR_UNSUPPORTED);
            continue;
        }
        force(&c);
        current_alg = c.alg;
        run_op(&c);
    }
    RC_OK(hint_coll_set(op, "auto"));
    c.alg = NULL;
}

/* Bad arguments: every rank passes the same bad value, so every rank returns at once. */
static void t_errors(int P)
{
    int x[64] = {0}, y[64] = {0};
    const char *name;
    RC_EXPECT(hint_coll_set("alltoall", "no_such_algorithm"), HINT_ERR_ARG);
    RC_EXPECT(hint_coll_set("no_such_op", "auto"), HINT_ERR_ARG);
    RC_EXPECT(hint_coll_set(NULL, "auto"), HINT_ERR_ARG);
    RC_EXPECT(hint_coll_last("no_such_op", &name), HINT_ERR_ARG);
    RC_EXPECT(hint_coll_last("bcast", NULL), HINT_ERR_ARG);
    RC_EXPECT(hint_bcast(x, 1, HINT_INT, P, HINT_WORLD), HINT_ERR_ROOT);
    RC_EXPECT(hint_bcast(x, 1, HINT_INT, -1, HINT_WORLD), HINT_ERR_ROOT);
    RC_EXPECT(hint_reduce(x, y, 1, HINT_INT, HINT_SUM, P + 2, HINT_WORLD), HINT_ERR_ROOT);
    RC_EXPECT(hint_bcast(x, 1, HINT_INT, 0, HINT_GROUP_NULL), HINT_ERR_GROUP);
    RC_EXPECT(hint_barrier(HINT_GROUP_NULL), HINT_ERR_GROUP);
    RC_EXPECT(hint_bcast(NULL, 4, HINT_INT, 0, HINT_WORLD), HINT_ERR_BUFFER);
    /* HINT_IN_PLACE as the receive buffer: the error says so rather than only "NULL" */
    RC_EXPECT(hint_allreduce(HINT_IN_PLACE, HINT_IN_PLACE, 1, HINT_INT, HINT_SUM, HINT_WORLD), HINT_ERR_BUFFER);
    RC_CHECK(strstr(hint_strerror(HINT_ERR_BUFFER), "HINT_IN_PLACE") != NULL);
    RC_EXPECT(hint_bcast(x, 1, HINT_TYPE_NULL, 0, HINT_WORLD), HINT_ERR_TYPE);
    RC_EXPECT(hint_allreduce(x, y, 1, HINT_BYTE, HINT_SUM, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(x, y, 1, HINT_DOUBLE, HINT_BXOR, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(x, y, 1, HINT_COMPLEX_DOUBLE, HINT_MAX, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(x, y, 1, HINT_CHAR, HINT_LAND, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(x, y, 1, HINT_INT, (hint_op)x, HINT_WORLD), HINT_ERR_OP);
    RC_EXPECT(hint_allreduce(x, y, SIZE_MAX / 2, HINT_INT, HINT_SUM, HINT_WORLD), HINT_ERR_COUNT);
    RC_EXPECT(hint_allgather(x, 2, HINT_INT, y, 3, HINT_INT, HINT_WORLD), HINT_ERR_TYPE);
    RC_EXPECT(hint_alltoall(x, 1, HINT_INT, y, 1, HINT_DOUBLE, HINT_WORLD), HINT_ERR_TYPE);
    RC_EXPECT(hint_alltoall(x, 1, HINT_INT, NULL, 1, HINT_INT, HINT_WORLD), HINT_ERR_BUFFER);
    RC_EXPECT(hint_allgatherv(x, 1, HINT_INT, y, NULL, NULL, HINT_INT, HINT_WORLD), HINT_ERR_ARG);
    RC_EXPECT(hint_gather(HINT_IN_PLACE, 1, HINT_INT, y, 1, HINT_INT, P > 1 && rc_rank == 0 ? 1 : P + 5,
                          HINT_WORLD), P > 1 && rc_rank == 0 ? HINT_ERR_BUFFER : HINT_ERR_ROOT);
    /* a forced algorithm that cannot run says so; the fallback switch lets the default run */
    if (P == 3) {
        RC_OK(hint_coll_set("allgather", "recursive_doubling"));
        RC_EXPECT(hint_allgather(x, 1, HINT_INT, y, 1, HINT_INT, HINT_WORLD), HINT_ERR_UNSUPPORTED);
        setenv("HINT_COLL_FALLBACK", "silent", 1);
        RC_OK(hint_allgather(x, 1, HINT_INT, y, 1, HINT_INT, HINT_WORLD));
        RC_OK(hint_coll_last("allgather", &name));
        RC_CHECK(strcmp(name, "recursive_doubling") != 0);
        unsetenv("HINT_COLL_FALLBACK");
        RC_OK(hint_coll_set("allgather", "auto"));
    }
    /* after all that, the group still works */
    x[0] = rc_rank;
    RC_OK(hint_allreduce(x, y, 1, HINT_INT, HINT_SUM, HINT_WORLD));
    RC_CHECK(y[0] == P * (P - 1) / 2);
}

/* A new group over the whole world, made the k-th of three ways (dup, split with the ranks
   reversed, create from every rank) so that each constructor hands out a reused slot. */
static hint_group regroup_new(int k, int P)
{
    hint_group g = HINT_GROUP_NULL;
    if (k % 3 == 0) {
        RC_OK(hint_group_dup(HINT_WORLD, &g));
    } else if (k % 3 == 1) {
        RC_OK(hint_group_split(HINT_WORLD, 7, P - rc_rank, &g));
    } else {
        int *all = malloc((size_t)P * sizeof *all);
        for (int p = 0; p < P; p++)
            all[p] = p;
        RC_OK(hint_group_create(HINT_WORLD, P, all, &g));
        free(all);
    }
    return g;
}

/* Issue 13: a collective on a freed group, then the same or another algorithm on a new group
   that gets the freed group's collective slot, with other data: every result must be this
   call's. The world barrier after each free makes every member release the slot before the
   next group takes one, so the next group reuses it (slots are handed out lowest first). */
static void regroup_algorithms(const char *op, int P)
{
    static const size_t small[] = {0, 8, 100, 4096, 65536};
    const struct coll_table *t = &coll_tables[find_op(op)];
    for (int i = 0; i < t->nalgs; i++) {
        if (skipped_alg(t->algs[i].name))
            continue;
        for (int k = 0; k < 3; k++) {
            hint_group g = regroup_new(k, P);
            salt = i * 3 + k + 1;
            struct ctx c = {.g = g, .op = op, .alg = t->algs[i].name};
            RC_OK(hint_group_rank(g, &c.r));
            RC_OK(hint_group_size(g, &c.P));
            struct coll_args probe = {.op_id = find_op(op), .g = g, .size = c.P, .rank = c.r};
            if (coll_alg_usable(i, &probe)) {
                force(&c);
                current_alg = c.alg;
                run_op_sizes(&c, small, sizeof small / sizeof small[0]);
            }
            RC_OK(hint_group_free(&g));
            RC_OK(hint_barrier(HINT_WORLD));
        }
    }
    RC_OK(hint_coll_set(op, "auto"));
    salt = 0;
}

/* Virtual nodes (hintrun --nodes K): groups spanning nodes unevenly (every third rank, and the
   rest), and each node's own group, where the node-only algorithms run again. The world spans
   nodes, so every node-only algorithm of op was refused on it. */
static void across_nodes(const char *op, int P)
{
    hint_group uneven, node;
    RC_OK(hint_group_split(HINT_WORLD, rc_rank % 3 == 0, rc_rank, &uneven));
    all_algorithms(op, uneven);
    RC_OK(hint_group_free(&uneven));
    RC_OK(hint_group_split_type(HINT_WORLD, HINT_SPLIT_NODE, P - rc_rank, &node));
    RC_CHECK(!spans_nodes(node));
    all_algorithms(op, node);
    RC_OK(hint_group_free(&node));
    const struct coll_table *t = &coll_tables[find_op(op)];
    int node_only = 0;
    for (int i = 0; i < t->nalgs; i++)
        node_only += t->algs[i].node_only;
    if (node_only > 0 && refused_across < node_only && !skipped_alg(""))
        RC_FAIL("%s: %d node-only algorithms, but only %d refusals across nodes", op, node_only, refused_across);
    if (rc_rank == 0)
        printf("%s: %d node-only algorithm refusals on groups spanning nodes\n", op, refused_across);
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    use_mmap = getenv("HINT_TEST_BUFFERS") && !strcmp(getenv("HINT_TEST_BUFFERS"), "mmap");
    use_static = getenv("HINT_TEST_BUFFERS") && !strcmp(getenv("HINT_TEST_BUFFERS"), "static");
    void *probe = tb_alloc(64);
    bufs_on_heap = hint_mem_shared(probe);
    tb_free(probe);
    if (argc < 2)
        RC_FAIL("usage: coll_check OP");
    int P;
    RC_OK(hint_group_size(HINT_WORLD, &P));
    if (!strcmp(argv[1], "errors")) {
        t_errors(P);
        RC_OK(hint_finalize());
        if (rc_rank == 0)
            printf("ok errors\n");
        return 0;
    }
    if (argc > 2 && !strcmp(argv[2], "regroup")) {
        regroup_algorithms(argv[1], P);
        RC_OK(hint_finalize());
        if (rc_rank == 0)
            printf("ok %s regroup\n", argv[1]);
        return 0;
    }
    all_algorithms(argv[1], HINT_WORLD);
    /* a split group with ranks in another order: odd and even, reversed */
    hint_group sub;
    RC_OK(hint_group_split(HINT_WORLD, rc_rank % 2, P - rc_rank, &sub));
    all_algorithms(argv[1], sub);
    RC_OK(hint_group_free(&sub));
    const char *nn = getenv("HINT_NNODES");
    if (nn && atoi(nn) > 1)
        across_nodes(argv[1], P);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok %s\n", argv[1]);
    return 0;
}
