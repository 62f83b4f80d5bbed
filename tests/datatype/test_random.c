/*
 * tests/datatype/test_random.c — property test: seeded random type trees (every constructor,
 * nested, zero counts, negative strides and displacements, resized, both subarray orders)
 * checked against the naive reference of dtref.h: size, lb/extent, true extent, pack with each
 * representation, slices at random cut points, unpack, and the canonical description (the same
 * typemap rebuilt as an hindexed of bytes must commit to the same text).
 */
#include <criterion/criterion.h>
#include <stdio.h>

#include "datatype/datatype.h"
#include "dtref.h"

#define NTYPES 10000
#define MAXENT 1500 /* typemap entries per type, to keep the run short */

struct rng {
    uint64_t s;
};

static uint32_t rnd(struct rng *g)
{
    g->s ^= g->s << 13;
    g->s ^= g->s >> 7;
    g->s ^= g->s << 17;
    return (uint32_t)(g->s >> 11);
}

static size_t rn(struct rng *g, size_t n) { return n ? rnd(g) % n : 0; }
static ptrdiff_t rs(struct rng *g, ptrdiff_t lo, ptrdiff_t hi) { return lo + (ptrdiff_t)rn(g, (size_t)(hi - lo + 1)); }

struct rt {
    hint_type t;
    struct ref r;
};

static const struct {
    hint_type t;
    size_t size;
} leaves[] = {{&hint_type_byte_, 1}, {&hint_type_int32_, 4}, {&hint_type_double_, 8}, {&hint_type_complex_double_, 16},
              {&hint_type_char_, 1}, {&hint_type_float_, 4}};

static void gen(struct rng *g, int depth, struct rt *out);

static void rt_free(struct rt *x)
{
    if (x->t != NULL)
        (void)hint_type_free(&x->t); /* HINT_ERR_TYPE for a predefined type, which stays */
    ref_free(&x->r);
}

static void gen_leaf(struct rng *g, struct rt *out)
{
    size_t i = rn(g, sizeof leaves / sizeof leaves[0]);
    out->t = leaves[i].t;
    ref_basic(&out->r, leaves[i].size);
}

/* count blocks, block i = bl[i] copies of old at d[i] bytes */
static void ref_blocks(struct ref *out, const struct ref *old, size_t n, const size_t *bl, const ptrdiff_t *d)
{
    struct ref_builder b;
    refb_init(&b);
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < bl[i]; j++)
            refb_copy(&b, old, d[i] + (ptrdiff_t)j * ref_extent(old));
    refb_done(&b, out);
}

static void gen_node(struct rng *g, int depth, struct rt *out, const struct rt *old)
{
    size_t n = rn(g, 7), bl[6], sub = rn(g, 4);
    ptrdiff_t d[6], ext = ref_extent(&old->r);
    int kind = (int)rn(g, 9), st = HINT_SUCCESS;
    for (size_t i = 0; i < 6; i++) {
        bl[i] = rn(g, 4);
        d[i] = rs(g, -6, 12);
    }
    switch (kind) {
    case 0: /* contiguous */
        st = hint_type_contiguous(n, old->t, &out->t);
        bl[0] = n, d[0] = 0;
        ref_blocks(&out->r, &old->r, 1, bl, d);
        break;
    case 1: { /* vector */
        ptrdiff_t stride = rs(g, -4, 6);
        st = hint_type_vector(n, sub, stride, old->t, &out->t);
        for (size_t i = 0; i < n; i++)
            bl[i] = sub, d[i] = (ptrdiff_t)i * stride * ext;
        ref_blocks(&out->r, &old->r, n, bl, d);
        break;
    }
    case 2: { /* hvector */
        ptrdiff_t stride = rs(g, -40, 80);
        st = hint_type_hvector(n, sub, stride, old->t, &out->t);
        for (size_t i = 0; i < n; i++)
            bl[i] = sub, d[i] = (ptrdiff_t)i * stride;
        ref_blocks(&out->r, &old->r, n, bl, d);
        break;
    }
    case 3: { /* indexed */
        ptrdiff_t db[6];
        st = hint_type_indexed(n, bl, d, old->t, &out->t);
        for (size_t i = 0; i < n; i++)
            db[i] = d[i] * ext;
        ref_blocks(&out->r, &old->r, n, bl, db);
        break;
    }
    case 4: /* hindexed */
        for (size_t i = 0; i < n; i++)
            d[i] *= 3;
        st = hint_type_hindexed(n, bl, d, old->t, &out->t);
        ref_blocks(&out->r, &old->r, n, bl, d);
        break;
    case 5: { /* indexed_block */
        ptrdiff_t db[6];
        st = hint_type_indexed_block(n, sub, d, old->t, &out->t);
        for (size_t i = 0; i < n; i++)
            db[i] = d[i] * ext, bl[i] = sub;
        ref_blocks(&out->r, &old->r, n, bl, db);
        break;
    }
    case 6: { /* struct of old and one or two more */
        struct rt more[2] = {{0}};
        hint_type types[3] = {old->t};
        struct ref_builder b;
        size_t m = 1 + rn(g, 3);
        for (size_t i = 1; i < m; i++) {
            gen(g, depth + 1, &more[i - 1]);
            types[i] = more[i - 1].t;
        }
        for (size_t i = 0; i < m; i++)
            d[i] *= 5;
        st = hint_type_struct(m, bl, d, types, &out->t);
        refb_init(&b);
        for (size_t i = 0; i < m; i++) {
            const struct ref *r = i == 0 ? &old->r : &more[i - 1].r;
            for (size_t j = 0; j < bl[i]; j++)
                refb_copy(&b, r, d[i] + (ptrdiff_t)j * ref_extent(r));
        }
        refb_done(&b, &out->r);
        for (size_t i = 0; i + 1 < m; i++)
            rt_free(&more[i]);
        break;
    }
    case 7: { /* resized */
        ptrdiff_t lb = rs(g, -16, 16), e = rs(g, 0, 64);
        struct ref_builder b;
        st = hint_type_resized(old->t, lb, e, &out->t);
        refb_init(&b);
        refb_copy(&b, &old->r, 0);
        refb_done(&b, &out->r);
        out->r.lb = lb;
        out->r.ub = lb + e;
        break;
    }
    default: { /* subarray, 1 to 3 dimensions, either order */
        int nd = 1 + (int)rn(g, 3), order = (int)rn(g, 2);
        size_t sizes[3], subs[3], starts[3], total = 1, idx[3] = {0};
        struct ref_builder b;
        for (int i = 0; i < nd; i++) {
            sizes[i] = 1 + rn(g, 4);
            subs[i] = rn(g, sizes[i] + 1);
            starts[i] = rn(g, sizes[i] - subs[i] + 1);
            total *= subs[i];
        }
        st = hint_type_subarray(nd, sizes, subs, starts, order, old->t, &out->t);
        refb_init(&b);
        /* walk the sub-box with the fastest dimension innermost */
        for (size_t c = 0; c < total; c++) {
            size_t lin = 0;
            if (order == HINT_ORDER_C)
                for (int i = 0; i < nd; i++)
                    lin = lin * sizes[i] + starts[i] + idx[i];
            else
                for (int i = nd - 1; i >= 0; i--)
                    lin = lin * sizes[i] + starts[i] + idx[i];
            refb_copy(&b, &old->r, (ptrdiff_t)lin * ext);
            for (int i = 0; i < nd; i++) {
                int dd = order == HINT_ORDER_C ? nd - 1 - i : i;
                if (++idx[dd] < subs[dd])
                    break;
                idx[dd] = 0;
            }
        }
        refb_done(&b, &out->r);
        size_t all = 1;
        for (int i = 0; i < nd; i++)
            all *= sizes[i];
        out->r.lb = 0;
        out->r.ub = (ptrdiff_t)all * ext;
        break;
    }
    }
    cr_assert_eq(st, HINT_SUCCESS, "constructor %d failed: %d", kind, st);
}

static void gen(struct rng *g, int depth, struct rt *out)
{
    struct rt old = {0};
    memset(out, 0, sizeof *out);
    if (depth >= 4 || (depth > 0 && rn(g, 4) == 0)) {
        gen_leaf(g, out);
        return;
    }
    gen(g, depth + 1, &old);
    for (;;) {
        gen_node(g, depth, out, &old);
        if (out->r.n <= MAXENT)
            break;
        rt_free(out);
    }
    rt_free(&old); /* the new type keeps what it needs */
}

static void check_layout(const struct rt *x)
{
    size_t size;
    ptrdiff_t lb, ext, tlb, text, rtlb, rtext;
    cr_assert_eq(hint_type_size(x->t, &size), HINT_SUCCESS);
    cr_assert_eq(size, x->r.size, "size %zu, reference %zu", size, x->r.size);
    cr_assert_eq(hint_type_extent(x->t, &lb, &ext), HINT_SUCCESS);
    cr_assert(lb == x->r.lb && ext == ref_extent(&x->r), "lb/extent %td/%td, reference %td/%td", lb, ext, x->r.lb,
              ref_extent(&x->r));
    cr_assert_eq(hint_type_true_extent(x->t, &tlb, &text), HINT_SUCCESS);
    ref_true(&x->r, &rtlb, &rtext);
    cr_assert(tlb == rtlb && text == rtext, "true lb/extent %td/%td, reference %td/%td", tlb, text, rtlb, rtext);
}

/* The same typemap as an hindexed of bytes, resized the same: must describe identically. */
static void check_canonical(const struct rt *x)
{
    hint_type b = NULL, r = NULL;
    char d1[4096], d2[4096];
    cr_assert_eq(hint_type_hindexed(x->r.n, x->r.len, x->r.disp, HINT_BYTE, &b), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(b, x->r.lb, ref_extent(&x->r), &r), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&r), HINT_SUCCESS);
    dt_describe(x->t, d1, sizeof d1);
    dt_describe(r, d2, sizeof d2);
    cr_assert_str_eq(d1, d2, "descriptions differ:\n%s---\n%s", d1, d2);
    hint_type_free(&b);
    hint_type_free(&r);
}

/* On a mismatch: what was built, what it committed to, what the reference says. */
static void dump(const struct rt *x)
{
    char d[8192];
    dt_describe(x->t, d, sizeof d);
    fprintf(stderr, "description:\n%sreference lb %td ub %td, %zu entries:", d, x->r.lb, x->r.ub, x->r.n);
    for (size_t i = 0; i < x->r.n && i < 64; i++)
        fprintf(stderr, " (%td,%zu)", x->r.disp[i], x->r.len[i]);
    fprintf(stderr, "\n");
}

static void check_pack(struct rng *g, const struct rt *x, size_t count)
{
    struct ref_buf in, out, expect;
    size_t bytes = count * x->r.size, done, pos;
    char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    ref_buf_alloc(&in, &x->r, count, (unsigned)count);
    ref_buf_alloc(&expect, &x->r, count, 99);
    ref_pack(&x->r, in.base, count, want);
    ref_unpack(&x->r, want, expect.base, count);
    for (int rep = DT_REP_AUTO; rep < DT_NREP; rep++) {
        /* one shot */
        memset(got, 0, bytes + 1);
        cr_assert_eq(dt_pack_range_rep(in.base, count, x->t, 0, got, bytes, &done, rep), HINT_SUCCESS);
        cr_assert_eq(done, bytes);
        if (memcmp(got, want, bytes) != 0)
            dump(x);
        cr_assert(memcmp(got, want, bytes) == 0, "pack (%s) differs from the reference, count %zu",
                  dt_rep_name(rep), count);
        /* random cut points */
        memset(got, 0, bytes + 1);
        for (size_t off = 0; off < bytes; off += done) {
            size_t len = 1 + rn(g, bytes / 3 + 2);
            cr_assert_eq(dt_pack_range_rep(in.base, count, x->t, off, got + off, len, &done, rep), HINT_SUCCESS);
            cr_assert(done > 0 && done <= len);
        }
        cr_assert(memcmp(got, want, bytes) == 0, "sliced pack (%s) differs, count %zu", dt_rep_name(rep), count);
        /* unpack in random slices */
        ref_buf_alloc(&out, &x->r, count, 99);
        for (size_t off = 0; off < bytes; off += done) {
            size_t len = 1 + rn(g, bytes / 2 + 2);
            cr_assert_eq(dt_unpack_range_rep(want + off, len, off, out.base, count, x->t, &done, rep),
                         HINT_SUCCESS);
        }
        cr_assert(memcmp(out.mem, expect.mem, out.bytes) == 0, "unpack (%s) differs, count %zu", dt_rep_name(rep),
                  count);
        free(out.mem);
    }
    /* typed copy to the same type elsewhere: what unpack(pack()) gives */
    ref_buf_alloc(&out, &x->r, count, 99);
    cr_assert_eq(dt_copy_typed(in.base, count, x->t, out.base, count, x->t, &done), HINT_SUCCESS);
    cr_assert(done == bytes && memcmp(out.mem, expect.mem, out.bytes) == 0, "typed copy differs");
    free(out.mem);
    /* the public calls */
    pos = 1;
    cr_assert_eq(hint_pack(in.base, count, x->t, got, bytes + 1, &pos), HINT_SUCCESS);
    cr_assert(pos == bytes + 1 && memcmp(got + 1, want, bytes) == 0);
    free(in.mem);
    free(expect.mem);
    free(want);
    free(got);
}

Test(random, against_reference, .timeout = 120)
{
    /* HINT_TEST_DT_SEED / HINT_TEST_DT_TYPES widen the search by hand; the suite uses the default */
    const char *seed = getenv("HINT_TEST_DT_SEED"), *ntypes = getenv("HINT_TEST_DT_TYPES");
    struct rng g = {seed ? (strtoull(seed, NULL, 0) * 0x9e3779b97f4a7c15ull) | 1 : 0x9e3779b97f4a7c15ull};
    long n = ntypes ? atol(ntypes) : NTYPES;
    size_t total_entries = 0, with_loops = 0;
    for (long i = 0; i < n; i++) {
        struct rt x;
        gen(&g, 0, &x);
        if (rn(&g, 4) == 0) { /* same layout, one more level of construction */
            hint_type d;
            cr_assert_eq(hint_type_contiguous(1, x.t, &d), HINT_SUCCESS);
            (void)hint_type_free(&x.t);
            x.t = d;
        }
        check_layout(&x);
        cr_assert_eq(hint_type_commit(&x.t), HINT_SUCCESS);
        if (rn(&g, 3) == 0)
            (void)dt_set_segment(x.t, 1 + rn(&g, 3)); /* HINT_ERR_TYPE for a predefined type */
        check_canonical(&x);
        char d[4096];
        dt_describe(x.t, d, sizeof d);
        with_loops += strstr(d, "LOOP") != NULL;
        check_pack(&g, &x, 0);
        check_pack(&g, &x, 1);
        check_pack(&g, &x, 2 + rn(&g, 4));
        total_entries += x.r.n;
        rt_free(&x);
    }
    cr_log_info("%ld random types, %zu typemap entries, %zu with loops in their description", n, total_entries,
                with_loops);
}
