/*
 * tests/datatype/test_construct.c — each constructor and nestings of them: size, lb/extent,
 * true extent, packed contents on hand-checked layouts, zero counts, error cases, reference
 * counting of building blocks, and commit normalisation (the MARs paper's indexed-gap pair).
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "datatype/datatype.h"

static void layout(hint_type t, size_t size, ptrdiff_t lb, ptrdiff_t ext, ptrdiff_t tlb, ptrdiff_t text)
{
    size_t s;
    ptrdiff_t a, b;
    cr_assert_eq(hint_type_size(t, &s), HINT_SUCCESS);
    cr_expect_eq(s, size, "size %zu, want %zu", s, size);
    cr_assert_eq(hint_type_extent(t, &a, &b), HINT_SUCCESS);
    cr_expect(a == lb && b == ext, "lb/extent %td/%td, want %td/%td", a, b, lb, ext);
    cr_assert_eq(hint_type_true_extent(t, &a, &b), HINT_SUCCESS);
    cr_expect(a == tlb && b == text, "true lb/extent %td/%td, want %td/%td", a, b, tlb, text);
}

/* Packs count elements of t from base and compares with the ints listed. */
static void packs_ints(const void *base, size_t count, hint_type t, const int *want, size_t n)
{
    int got[64] = {0};
    size_t pos = 0;
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_assert_eq(hint_pack(base, count, t, got, sizeof got, &pos), HINT_SUCCESS);
    cr_assert_eq(pos, n * sizeof(int));
    for (size_t i = 0; i < n; i++)
        cr_expect_eq(got[i], want[i], "packed[%zu] = %d, want %d", i, got[i], want[i]);
}

static int arr[64];

static void fill(void)
{
    for (int i = 0; i < 64; i++)
        arr[i] = i;
}

TestSuite(construct, .init = fill);

Test(construct, predefined)
{
    hint_type t = HINT_DOUBLE;
    layout(HINT_BYTE, 1, 0, 1, 0, 1);
    layout(HINT_INT32, 4, 0, 4, 0, 4);
    layout(HINT_COMPLEX_DOUBLE, 16, 0, 16, 0, 16);
    cr_expect_eq(hint_type_free(&t), HINT_ERR_TYPE);
    cr_expect_eq(t, HINT_DOUBLE);
    layout(HINT_DOUBLE, 8, 0, 8, 0, 8);
    cr_expect_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_expect_eq(dt_basic(HINT_FLOAT), DT_FLOAT);
    cr_expect(dt_is_contig(HINT_FLOAT));
}

Test(construct, contiguous)
{
    hint_type t;
    cr_assert_eq(hint_type_contiguous(4, HINT_DOUBLE, &t), HINT_SUCCESS);
    layout(t, 32, 0, 32, 0, 32);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_expect_eq(dt_basic(t), DT_DOUBLE);
    cr_expect(dt_is_contig(t));
    hint_type_free(&t);
    cr_expect_eq(t, HINT_TYPE_NULL);
}

Test(construct, vector)
{
    hint_type t;
    cr_assert_eq(hint_type_vector(3, 2, 4, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 24, 0, 40, 0, 40);
    packs_ints(arr, 1, t, (int[]){0, 1, 4, 5, 8, 9}, 6);
    cr_expect_eq(dt_basic(t), DT_NONE);
    cr_expect_eq(dt_sig_basic(t), DT_INT);
    cr_expect(!dt_is_contig(t));
    packs_ints(arr, 2, t, (int[]){0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19}, 12);
    hint_type_free(&t);
}

Test(construct, vector_negative_stride)
{
    hint_type t;
    cr_assert_eq(hint_type_vector(3, 1, -2, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 12, -16, 20, -16, 20);
    packs_ints(arr + 20, 1, t, (int[]){20, 18, 16}, 3);
    /* the next element starts one extent (5 ints) further */
    packs_ints(arr + 20, 2, t, (int[]){20, 18, 16, 25, 23, 21}, 6);
    hint_type_free(&t);
}

Test(construct, hvector)
{
    hint_type t;
    cr_assert_eq(hint_type_hvector(2, 3, 20, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 24, 0, 32, 0, 32);
    packs_ints(arr, 1, t, (int[]){0, 1, 2, 5, 6, 7}, 6);
    hint_type_free(&t);
}

Test(construct, indexed_family)
{
    hint_type t;
    cr_assert_eq(hint_type_indexed(3, (size_t[]){2, 1, 3}, (ptrdiff_t[]){5, 0, 9}, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 24, 0, 48, 0, 48);
    packs_ints(arr, 1, t, (int[]){5, 6, 0, 9, 10, 11}, 6);
    hint_type_free(&t);
    cr_assert_eq(hint_type_hindexed(2, (size_t[]){1, 2}, (ptrdiff_t[]){-8, 12}, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 12, -8, 28, -8, 28);
    packs_ints(arr + 10, 1, t, (int[]){8, 13, 14}, 3);
    hint_type_free(&t);
    cr_assert_eq(hint_type_indexed_block(3, 2, (ptrdiff_t[]){6, 0, 3}, HINT_INT, &t), HINT_SUCCESS);
    layout(t, 24, 0, 32, 0, 32);
    packs_ints(arr, 1, t, (int[]){6, 7, 0, 1, 3, 4}, 6);
    hint_type_free(&t);
}

Test(construct, struct_no_padding)
{
    hint_type t;
    hint_type types[2] = {HINT_INT, HINT_DOUBLE};
    cr_assert_eq(hint_type_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 4}, types, &t), HINT_SUCCESS);
    layout(t, 12, 0, 12, 0, 12); /* the user's layout as given: no alignment padding to 16 */
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_expect(dt_is_contig(t));
    cr_expect_eq(dt_basic(t), DT_NONE);
    cr_expect_eq(dt_sig_basic(t), DT_NONE);
    hint_type_free(&t);
    types[1] = HINT_INT;
    cr_assert_eq(hint_type_struct(2, (size_t[]){1, 2}, (ptrdiff_t[]){0, 4}, types, &t), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_expect_eq(dt_basic(t), DT_INT);
    hint_type_free(&t);
}

Test(construct, resized_and_nesting)
{
    hint_type r, c, v;
    cr_assert_eq(hint_type_resized(HINT_INT, -4, 16, &r), HINT_SUCCESS);
    layout(r, 4, -4, 16, 0, 4);
    cr_assert_eq(hint_type_contiguous(2, r, &c), HINT_SUCCESS);
    layout(c, 8, -4, 32, 0, 20);
    packs_ints(arr, 1, c, (int[]){0, 4}, 2);
    /* a vector of a resized type: the lb marker sticks */
    cr_assert_eq(hint_type_vector(2, 1, 3, c, &v), HINT_SUCCESS);
    layout(v, 16, -4, 128, 0, 116);
    packs_ints(arr, 1, v, (int[]){0, 4, 24, 28}, 4);
    hint_type_free(&r);
    hint_type_free(&c);
    hint_type_free(&v);
}

Test(construct, subarray_orders)
{
    hint_type c, f;
    size_t sizes[2] = {4, 5}, subs[2] = {2, 3}, starts[2] = {1, 1};
    cr_assert_eq(hint_type_subarray(2, sizes, subs, starts, HINT_ORDER_C, HINT_INT, &c), HINT_SUCCESS);
    layout(c, 24, 0, 80, 24, 32);
    packs_ints(arr, 1, c, (int[]){6, 7, 8, 11, 12, 13}, 6);
    packs_ints(arr, 2, c, (int[]){6, 7, 8, 11, 12, 13, 26, 27, 28, 31, 32, 33}, 12);
    cr_assert_eq(hint_type_subarray(2, sizes, subs, starts, HINT_ORDER_FORTRAN, HINT_INT, &f), HINT_SUCCESS);
    /* dimension 0 (size 4) is the fastest: element (i, j) is at i + 4 j */
    layout(f, 24, 0, 80, 20, 40);
    packs_ints(arr, 1, f, (int[]){5, 6, 9, 10, 13, 14}, 6);
    hint_type_free(&c);
    hint_type_free(&f);
    size_t s3[3] = {3, 3, 3}, u3[3] = {2, 1, 2}, o3[3] = {1, 2, 0};
    cr_assert_eq(hint_type_subarray(3, s3, u3, o3, HINT_ORDER_C, HINT_INT, &c), HINT_SUCCESS);
    layout(c, 16, 0, 108, 60, 44);
    packs_ints(arr, 1, c, (int[]){15, 16, 24, 25}, 4);
    hint_type_free(&c);
}

Test(construct, zero_counts)
{
    hint_type t[7];
    size_t sz, one = 1, zero = 0;
    int buf[4] = {0};
    cr_assert_eq(hint_type_contiguous(0, HINT_DOUBLE, &t[0]), HINT_SUCCESS);
    cr_assert_eq(hint_type_vector(0, 3, 4, HINT_DOUBLE, &t[1]), HINT_SUCCESS);
    cr_assert_eq(hint_type_vector(3, 0, 4, HINT_DOUBLE, &t[2]), HINT_SUCCESS);
    cr_assert_eq(hint_type_indexed(0, NULL, NULL, HINT_INT, &t[3]), HINT_SUCCESS);
    cr_assert_eq(hint_type_struct(0, NULL, NULL, NULL, &t[4]), HINT_SUCCESS);
    cr_assert_eq(hint_type_hindexed(1, &zero, &(ptrdiff_t){64}, HINT_INT, &t[5]), HINT_SUCCESS);
    cr_assert_eq(hint_type_subarray(1, (size_t[]){5}, &zero, &one, HINT_ORDER_C, HINT_INT, &t[6]), HINT_SUCCESS);
    for (int i = 0; i < 7; i++) {
        size_t pos = 3, done = 9;
        if (i < 6)
            layout(t[i], 0, 0, 0, 0, 0);
        else
            layout(t[i], 0, 0, 20, 0, 0); /* a subarray keeps the full array's extent */
        cr_assert_eq(hint_type_commit(&t[i]), HINT_SUCCESS);
        cr_expect_eq(hint_pack_size(10, t[i], &sz), HINT_SUCCESS);
        cr_expect_eq(sz, 0);
        cr_expect_eq(hint_pack(buf, 10, t[i], buf, 0, &(size_t){0}), HINT_SUCCESS);
        cr_expect_eq(hint_pack(buf, 10, t[i], buf, sizeof buf, &pos), HINT_SUCCESS);
        cr_expect_eq(pos, 3);
        cr_expect_eq(hint_pack_range(buf, 10, t[i], 0, buf, 8, &done), HINT_SUCCESS);
        cr_expect_eq(done, 0);
        cr_expect_eq(dt_nblocks(t[i]), 0);
        hint_type_free(&t[i]);
    }
    /* count 0 of a real type */
    size_t pos = 0;
    cr_expect_eq(hint_pack(NULL, 0, HINT_DOUBLE, NULL, 0, &pos), HINT_SUCCESS);
    cr_expect_eq(hint_unpack(NULL, 0, &pos, NULL, 0, HINT_DOUBLE), HINT_SUCCESS);
    cr_expect_eq(pos, 0);
}

Test(construct, errors)
{
    hint_type t = NULL, u;
    size_t sz, pos = 0;
    ptrdiff_t lb, ext;
    double d[4] = {0};
    /* NULL out pointers */
    cr_expect_eq(hint_type_contiguous(2, HINT_INT, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_vector(2, 1, 2, HINT_INT, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_resized(HINT_INT, 0, 4, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_size(HINT_INT, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_extent(HINT_INT, &lb, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_true_extent(HINT_INT, NULL, &ext), HINT_ERR_ARG);
    cr_expect_eq(hint_pack_size(1, HINT_INT, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_commit(NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_type_free(NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_pack(d, 1, HINT_DOUBLE, d, 8, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_pack_range(d, 1, HINT_DOUBLE, 0, d, 8, NULL), HINT_ERR_ARG);
    /* NULL arrays with a non-zero count */
    cr_expect_eq(hint_type_indexed(2, NULL, (ptrdiff_t[]){0, 1}, HINT_INT, &u), HINT_ERR_ARG);
    cr_expect_eq(hint_type_hindexed(2, (size_t[]){1, 1}, NULL, HINT_INT, &u), HINT_ERR_ARG);
    cr_expect_eq(hint_type_struct(1, (size_t[]){1}, (ptrdiff_t[]){0}, NULL, &u), HINT_ERR_ARG);
    /* NULL, freed and uncommitted types */
    cr_expect_eq(hint_type_contiguous(2, NULL, &u), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_struct(1, (size_t[]){1}, (ptrdiff_t[]){0}, (hint_type[]){NULL}, &u), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_size(NULL, &sz), HINT_ERR_TYPE);
    cr_expect_eq(hint_type_commit(&t), HINT_ERR_TYPE);
    cr_assert_eq(hint_type_contiguous(2, HINT_DOUBLE, &t), HINT_SUCCESS);
    cr_expect_eq(hint_pack(d, 1, t, d + 2, 16, &pos), HINT_ERR_TYPE); /* not committed */
    cr_expect_eq(hint_pack_size(1, t, &sz), HINT_SUCCESS);             /* a query is fine */
    cr_expect_eq(dt_check(t), HINT_ERR_TYPE);
    cr_assert_eq(hint_type_commit(&t), HINT_SUCCESS);
    cr_expect_eq(dt_check(t), HINT_SUCCESS);
    u = t;
    cr_assert_eq(hint_type_free(&t), HINT_SUCCESS);
    cr_expect_eq(hint_type_free(&t), HINT_ERR_TYPE); /* already NULL */
    (void)u;
    /* overflow of count x extent and friends */
    cr_expect_eq(hint_type_contiguous(SIZE_MAX / 4, HINT_DOUBLE, &u), HINT_ERR_COUNT);
    cr_expect_eq(hint_type_vector(3, 1, PTRDIFF_MAX / 8, HINT_DOUBLE, &u), HINT_ERR_COUNT);
    cr_expect_eq(hint_type_hvector(3, 1, PTRDIFF_MAX / 2 + 1, HINT_DOUBLE, &u), HINT_ERR_COUNT);
    cr_expect_eq(hint_type_indexed(1, (size_t[]){1}, (ptrdiff_t[]){PTRDIFF_MAX / 4}, HINT_DOUBLE, &u),
                 HINT_ERR_COUNT);
    cr_expect_eq(hint_type_resized(HINT_INT, PTRDIFF_MAX, 8, &u), HINT_ERR_COUNT);
    /* each displacement fits, the extent between them does not */
    cr_expect_eq(hint_type_hindexed(2, (size_t[]){1, 1}, (ptrdiff_t[]){-PTRDIFF_MAX / 2 - 8, PTRDIFF_MAX / 2 + 8},
                                    HINT_BYTE, &u),
                 HINT_ERR_COUNT);
    cr_expect_eq(hint_pack_size(SIZE_MAX / 2, HINT_DOUBLE, &sz), HINT_ERR_COUNT);
    cr_expect_eq(hint_pack(d, SIZE_MAX / 2, HINT_DOUBLE, d, 8, &pos), HINT_ERR_COUNT);
    cr_assert_eq(hint_type_resized(HINT_DOUBLE, 0, PTRDIFF_MAX / 2, &u), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&u), HINT_SUCCESS);
    cr_expect_eq(hint_pack_range(d, 4, u, 0, d, 8, &sz), HINT_ERR_COUNT); /* 4 extents overflow */
    hint_type_free(&u);
    /* subarray arguments */
    size_t s[2] = {4, 4}, sub[2] = {2, 2}, st[2] = {3, 0};
    cr_expect_eq(hint_type_subarray(2, s, sub, st, HINT_ORDER_C, HINT_INT, &u), HINT_ERR_ARG);
    st[0] = 0;
    cr_expect_eq(hint_type_subarray(0, s, sub, st, HINT_ORDER_C, HINT_INT, &u), HINT_ERR_ARG);
    cr_expect_eq(hint_type_subarray(2, s, sub, st, 7, HINT_INT, &u), HINT_ERR_ARG);
    cr_expect_eq(hint_type_subarray(2, s, NULL, st, HINT_ORDER_C, HINT_INT, &u), HINT_ERR_ARG);
    sub[1] = 5;
    cr_expect_eq(hint_type_subarray(2, s, sub, st, HINT_ORDER_C, HINT_INT, &u), HINT_ERR_ARG);
    /* buffers and truncation */
    pos = 4;
    cr_expect_eq(hint_pack(d, 2, HINT_DOUBLE, d, 16, &pos), HINT_ERR_TRUNCATE);
    cr_expect_eq(pos, 4);
    pos = 17;
    cr_expect_eq(hint_pack(d, 0, HINT_DOUBLE, d, 16, &pos), HINT_ERR_TRUNCATE);
    pos = 0;
    cr_expect_eq(hint_unpack(d, 8, &pos, d + 2, 2, HINT_DOUBLE), HINT_ERR_TRUNCATE);
    cr_expect_eq(hint_pack(NULL, 1, HINT_DOUBLE, d, 8, &pos), HINT_ERR_BUFFER);
    cr_expect_eq(hint_pack(d, 1, HINT_DOUBLE, NULL, 8, &pos), HINT_ERR_BUFFER);
    cr_expect_eq(hint_pack_range(d, 1, HINT_DOUBLE, 0, NULL, 8, &sz), HINT_ERR_BUFFER);
    /* a slice past the end of the stream is empty, not an error */
    cr_expect_eq(hint_pack_range(d, 1, HINT_DOUBLE, 100, d, 8, &sz), HINT_SUCCESS);
    cr_expect_eq(sz, 0);
}

Test(construct, building_blocks_outlive_free)
{
    hint_type c, v;
    int out[8] = {0};
    size_t pos = 0;
    cr_assert_eq(hint_type_contiguous(2, HINT_INT, &c), HINT_SUCCESS);
    cr_assert_eq(hint_type_vector(2, 1, 3, c, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_free(&c), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&v), HINT_SUCCESS);
    cr_assert_eq(hint_pack(arr, 1, v, out, sizeof out, &pos), HINT_SUCCESS);
    cr_expect(out[0] == 0 && out[1] == 1 && out[2] == 6 && out[3] == 7);
    hint_type_free(&v);
}

/* The MARs paper's Fig. 1 and Fig. 2: one layout built two ways. */
static hint_type indexed_gap(void)
{
    hint_type pair, trio, outer, all;
    hint_type t2[2] = {HINT_INT, HINT_FLOAT};
    cr_assert_eq(hint_type_struct(2, (size_t[]){2, 1}, (ptrdiff_t[]){8, 16}, t2, &pair), HINT_SUCCESS);
    cr_assert_eq(hint_type_contiguous(3, pair, &trio), HINT_SUCCESS);
    hint_type t3[2] = {HINT_INT, trio};
    cr_assert_eq(hint_type_struct(2, (size_t[]){1, 1}, (ptrdiff_t[]){0, 0}, t3, &outer), HINT_SUCCESS);
    cr_assert_eq(hint_type_contiguous(10, outer, &all), HINT_SUCCESS);
    hint_type_free(&pair);
    hint_type_free(&trio);
    hint_type_free(&outer);
    cr_assert_eq(hint_type_commit(&all), HINT_SUCCESS);
    return all;
}

static hint_type optimized_indexed_gap(void)
{
    hint_type mid, all;
    cr_assert_eq(hint_type_hvector(9, 40, 44, HINT_BYTE, &mid), HINT_SUCCESS);
    hint_type t3[3] = {HINT_BYTE, mid, HINT_BYTE};
    cr_assert_eq(hint_type_struct(3, (size_t[]){4, 1, 36}, (ptrdiff_t[]){0, 8, 404}, t3, &all), HINT_SUCCESS);
    hint_type_free(&mid);
    cr_assert_eq(hint_type_commit(&all), HINT_SUCCESS);
    return all;
}

Test(construct, indexed_gap_normalised)
{
    hint_type a = indexed_gap(), b = optimized_indexed_gap();
    char da[1024], db[1024];
    dt_describe(a, da, sizeof da);
    dt_describe(b, db, sizeof db);
    cr_expect_str_eq(da, db);
    cr_expect_str_eq(da, "size 400 lb 0 extent 440 true_lb 0 true_extent 440\n"
                         "DATA disp 0 count 1 blocklen 4 stride 0\n"
                         "DATA disp 8 count 9 blocklen 40 stride 44\n"
                         "DATA disp 404 count 1 blocklen 36 stride 0\n");
    cr_expect_eq(dt_nblocks(a), 11);
    cr_expect_eq(dt_loop_visits(a), 3);
    hint_type_free(&a);
    hint_type_free(&b);
}

Test(construct, regular_patterns_merge)
{
    hint_type v, r, s, c, sub;
    char d[1024];
    /* one double per cache line: one vector-like item */
    cr_assert_eq(hint_type_vector(8, 1, 8, HINT_DOUBLE, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_resized(v, 0, 512, &r), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&r), HINT_SUCCESS);
    dt_describe(r, d, sizeof d);
    cr_expect_str_eq(d, "size 64 lb 0 extent 512 true_lb 0 true_extent 456\n"
                        "DATA disp 0 count 8 blocklen 8 stride 64\n");
    /* a 2-D block of a 3-D array: a loop of vectors, however built */
    size_t sz[3] = {4, 6, 8}, ss[3] = {2, 3, 4}, st[3] = {1, 2, 3};
    cr_assert_eq(hint_type_subarray(3, sz, ss, st, HINT_ORDER_C, HINT_INT, &sub), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&sub), HINT_SUCCESS);
    dt_describe(sub, d, sizeof d);
    cr_expect_str_eq(d, "size 96 lb 0 extent 768 true_lb 268 true_extent 272\n"
                        "LOOP disp 268 count 2 stride 192 size 48\n"
                        "  DATA disp 0 count 3 blocklen 16 stride 32\n");
    /* the same as vector of contiguous of ints built by hand */
    cr_assert_eq(hint_type_contiguous(4, HINT_INT, &c), HINT_SUCCESS);
    cr_assert_eq(hint_type_hvector(3, 1, 32, c, &s), HINT_SUCCESS);
    hint_type_free(&c);
    cr_assert_eq(hint_type_hvector(2, 1, 192, s, &c), HINT_SUCCESS);
    hint_type_free(&s);
    cr_assert_eq(hint_type_hindexed(1, (size_t[]){1}, (ptrdiff_t[]){268}, c, &s), HINT_SUCCESS);
    hint_type_free(&c);
    cr_assert_eq(hint_type_resized(s, 0, 768, &c), HINT_SUCCESS);
    hint_type_free(&s);
    cr_assert_eq(hint_type_commit(&c), HINT_SUCCESS);
    char d2[1024];
    dt_describe(c, d2, sizeof d2);
    cr_expect_str_eq(d, d2);
    hint_type_free(&c);
    hint_type_free(&sub);
    hint_type_free(&v);
    hint_type_free(&r);
}

Test(construct, retained_type_outlives_user_free)
{
    hint_type v, held;
    int out[2] = {0};
    size_t done;
    cr_assert_eq(hint_type_vector(2, 1, 3, HINT_INT, &v), HINT_SUCCESS);
    cr_assert_eq(hint_type_commit(&v), HINT_SUCCESS);
    held = v;
    dt_retain(held); /* as a pending isend would */
    cr_assert_eq(hint_type_free(&v), HINT_SUCCESS);
    cr_expect_eq(hint_pack_range(arr, 1, held, 0, out, sizeof out, &done), HINT_ERR_TYPE); /* the user's view */
    cr_assert_eq(dt_pack_range_rep(arr, 1, held, 0, out, sizeof out, &done, DT_REP_AUTO), HINT_SUCCESS);
    cr_expect(done == 8 && out[0] == 0 && out[1] == 3);
    dt_release(held);
}

Test(construct, span_of_count_elements)
{
    hint_type v, r;
    ptrdiff_t lo, hi;
    cr_assert_eq(hint_type_vector(3, 1, -2, HINT_INT, &v), HINT_SUCCESS); /* data at -16 .. 4 */
    cr_assert_eq(dt_span(v, 0, &lo, &hi), HINT_SUCCESS);
    cr_expect(lo == 0 && hi == 0);
    cr_assert_eq(dt_span(v, 1, &lo, &hi), HINT_SUCCESS);
    cr_expect(lo == -16 && hi == 4);
    cr_assert_eq(dt_span(v, 3, &lo, &hi), HINT_SUCCESS); /* extent 20: the last element ends at 44 */
    cr_expect(lo == -16 && hi == 44, "%td %td", lo, hi);
    cr_assert_eq(hint_type_resized(v, 0, -24, &r), HINT_SUCCESS); /* elements walk backwards */
    cr_assert_eq(dt_span(r, 3, &lo, &hi), HINT_SUCCESS);
    cr_expect(lo == -64 && hi == 4, "%td %td", lo, hi);
    cr_expect_eq(dt_span(HINT_DOUBLE, SIZE_MAX / 2, &lo, &hi), HINT_ERR_COUNT);
    hint_type_free(&v);
    hint_type_free(&r);
}
