/*
 * tests/unit/test_morton.c — Morton (Z) order (collectives/order/morton.c) for P = 5, checked
 * against values derived here from the Morton paper's text, not read off its figures (Fig. 4 is
 * a picture; its numbers are not in the text):
 *   - the balanced curve of sec. 2.2's binary recursion, under one reading of the two choices
 *     the text leaves open: on a square (sub)matrix the rows are split ("the longer dimension"
 *     says nothing on a tie), and the top / left half M0 takes floor(n / 2) of an odd n. Another
 *     reading gives another, equally balanced, curve, which would fail this test;
 *   - the plain bit interleave (x in the even bits, y in the odd ones), which has the long right
 *     and bottom border lines the text describes for Fig. 4(a), and the text's worked example;
 * and, independent of those choices: BMI2 and portable paths equal, the balanced curve equal to
 * the interleave for powers of two, every block in exactly one rank's segment.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "collectives/order/order.h"
#include "hint.h"

/* The balanced Z curve for P = 5 (the curve Fig. 4(b) draws), Z value of each block, row y
   (receiver) by column x (sender). Derived by hand from sec. 2.2's recursion under this file's
   reading: split the longer dimension, rows on a tie, the top / left half M0 taking floor(n / 2).
   Not compared with the figure's drawing. */
static const unsigned rec22[5][5] = {
    {0, 1, 4, 6, 7},
    {2, 3, 5, 8, 9},
    {10, 11, 16, 17, 18},
    {12, 13, 19, 21, 22},
    {14, 15, 20, 23, 24},
};

/* The plain interleave (x in the even bits) on the same 5 x 5 blocks: the curve of Fig. 4(a),
   with the long vertical line in the right border (x = 4: 16, 18, 24, 26) and long horizontal
   line in the bottom border (y = 4) that the text describes. */
static const unsigned interleave5[5][5] = {
    {0, 1, 4, 5, 16},
    {2, 3, 6, 7, 18},
    {8, 9, 12, 13, 24},
    {10, 11, 14, 15, 26},
    {32, 33, 36, 37, 48},
};

Test(morton, p5_sec2_2_recursion_rows_on_tie_floor_half_first_and_interleave)
{
    for (uint32_t y = 0; y < 5; y++)
        for (uint32_t x = 0; x < 5; x++) {
            cr_expect_eq(morton_zvalue(5, 5, x, y), rec22[y][x], "balanced Z(%u,%u) = %u, sec. 2.2 recursion (rows on tie, floor first) gives %u", x, y,
                         morton_zvalue(5, 5, x, y), rec22[y][x]);
            cr_expect_eq(morton_encode(x, y), interleave5[y][x], "interleave (%u,%u) = %u, want %u", x, y,
                         morton_encode(x, y), interleave5[y][x]);
            uint32_t cx, cy;
            morton_coords(5, 5, rec22[y][x], &cx, &cy);
            cr_expect(cx == x && cy == y, "coords(%u) = (%u,%u), want (%u,%u)", rec22[y][x], cx, cy, x, y);
        }
    /* the text's worked example: x = 2 = 010b, y = 1 = 001b gives 000110b = 6 */
    cr_expect_eq(morton_encode(2, 1), 6u);
    /* and the order module numbers the blocks the same way: grid[src * P + dst], src = x */
    uint32_t grid[25];
    cr_assert_eq(order_grid(ORDER_MORTON, 5, grid), HINT_SUCCESS);
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++)
            cr_expect_eq(grid[x * 5 + y], rec22[y][x] + 1);
    /* rank 1's segment is Z values 5..9: (2,1), (3,0), (4,0), (3,1), (4,1) */
    struct order_tuple t[5];
    cr_assert_eq(order_tuples(ORDER_MORTON, 5, 1, t), HINT_SUCCESS);
    const unsigned want[5][3] = {{6, 2, 1}, {7, 3, 0}, {8, 4, 0}, {9, 3, 1}, {10, 4, 1}};
    for (int i = 0; i < 5; i++)
        cr_expect(t[i].seq == want[i][0] && t[i].src == want[i][1] && t[i].dst == want[i][2],
                  "rank 1 tuple %d is (%u,%u,%u), want (%u,%u,%u)", i, t[i].seq, t[i].src, t[i].dst, want[i][0],
                  want[i][1], want[i][2]);
}

Test(morton, bmi2_and_portable_paths_agree)
{
    if (!morton_have_bmi2())
        cr_log_warn("this CPU has no BMI2: only the portable path runs (the BMI2 one is checked to decline)");
    uint32_t state = 12345;
    for (uint32_t i = 0; i < (1u << 20) + 4096; i++) {
        /* every code below 2^20, then pseudo-random 32-bit codes */
        uint32_t code = i < (1u << 20) ? i : (state = state * 1664525u + 1013904223u);
        uint32_t x0, y0, x1 = 0, y1 = 0, c1 = 0;
        morton_decode_loop(code, &x0, &y0);
        cr_assert_eq(morton_encode_loop(x0, y0), code, "portable round trip of %#x", code);
        int have = morton_decode_bmi2(code, &x1, &y1);
        cr_assert_eq(have, morton_have_bmi2());
        if (have) {
            cr_assert(x0 == x1 && y0 == y1, "decode %#x: portable (%u,%u), pext (%u,%u)", code, x0, y0, x1, y1);
            cr_assert_eq(morton_encode_bmi2(x0, y0, &c1), 1);
            cr_assert_eq(c1, code, "encode (%u,%u): pdep %#x, want %#x", x0, y0, c1, code);
        }
        uint32_t x2, y2;
        morton_decode(code, &x2, &y2);
        cr_assert(x2 == x0 && y2 == y0);
        cr_assert_eq(morton_encode(x0, y0), code);
    }
}

Test(morton, balanced_curve_is_the_interleave_for_powers_of_two)
{
    for (uint32_t P = 1; P <= 256; P *= 2)
        for (uint32_t y = 0; y < P; y++)
            for (uint32_t x = 0; x < P; x++)
                cr_assert_eq(morton_zvalue(P, P, x, y), morton_encode(x, y), "P=%u (%u,%u)", P, x, y);
    /* pext on a rank's code range, as the paper does it: P = 8, rank 3 takes codes 24..31 */
    struct order_tuple t[8];
    cr_assert_eq(morton_segment(8, 3, t), HINT_SUCCESS);
    for (uint32_t i = 0; i < 8; i++) {
        uint32_t x, y;
        morton_decode(24 + i, &x, &y);
        cr_expect(t[i].seq == 25 + i && t[i].src == x && t[i].dst == y);
    }
}

Test(morton, every_block_exactly_once_and_coords_invert_zvalue)
{
    for (int P = 1; P <= 40; P++) {
        int *seen = calloc((size_t)P * P, sizeof *seen);
        uint32_t *grid = malloc((size_t)P * P * sizeof *grid);
        struct order_tuple *t = malloc((size_t)P * sizeof *t);
        cr_assert_eq(order_grid(ORDER_MORTON, P, grid), HINT_SUCCESS);
        for (int r = 0; r < P; r++) {
            cr_assert_eq(order_tuples(ORDER_MORTON, P, r, t), HINT_SUCCESS, "P=%d rank %d", P, r);
            for (int i = 0; i < P; i++) {
                cr_assert(t[i].src < (unsigned)P && t[i].dst < (unsigned)P, "P=%d rank %d", P, r);
                cr_expect_eq(t[i].seq, (unsigned)(r * P + i + 1), "P=%d rank %d: segment not consecutive", P, r);
                cr_expect_eq(grid[t[i].src * P + t[i].dst], t[i].seq, "P=%d: grid and tuples disagree", P);
                cr_expect_eq(morton_zvalue((unsigned)P, (unsigned)P, t[i].src, t[i].dst) + 1, t[i].seq);
                seen[t[i].src * P + t[i].dst]++;
            }
        }
        for (int k = 0; k < P * P; k++)
            cr_expect_eq(seen[k], 1, "P=%d block (%d,%d) in %d segments", P, k / P, k % P, seen[k]);
        free(seen);
        free(grid);
        free(t);
    }
    /* rectangles too (the recursion meets them halfway down): a bijection onto 0..w*h-1 */
    for (uint32_t w = 1; w <= 12; w++)
        for (uint32_t h = 1; h <= 12; h++)
            for (uint32_t z = 0; z < w * h; z++) {
                uint32_t x, y;
                morton_coords(w, h, z, &x, &y);
                cr_assert(x < w && y < h);
                cr_assert_eq(morton_zvalue(w, h, x, y), z, "%ux%u z=%u", w, h, z);
            }
}

/* The balanced curve keeps each rank's P blocks together: they touch O(sqrt P) receive buffers
   (rows) and send buffers (columns), where row or column order touch P + 1. (A segment may
   straddle two subtrees, so its bounding box can still be wide; the count of buffers is what
   the cache sees.) Measured: at most 3.6 sqrt(P) for P <= 200. */
Test(morton, segments_touch_few_buffers)
{
    for (int P = 2; P <= 40; P++) {
        struct order_tuple *t = malloc((size_t)P * sizeof *t);
        for (int r = 0; r < P; r++) {
            order_tuples(ORDER_MORTON, P, r, t);
            char rows[40] = {0}, cols[40] = {0};
            int n = 0;
            for (int i = 0; i < P; i++) {
                n += !rows[t[i].dst]++;
                n += !cols[t[i].src]++;
            }
            cr_expect(n * n <= 16 * P, "P=%d rank %d: segment touches %d buffers (> 4 sqrt P)", P, r, n);
        }
        free(t);
    }
}

Test(morton, bad_arguments)
{
    struct order_tuple t[4];
    cr_expect_eq(morton_segment(0, 0, t), HINT_ERR_ARG);
    cr_expect_eq(morton_segment(4, 4, t), HINT_ERR_ARG);
    cr_expect_eq(morton_segment(4, -1, t), HINT_ERR_ARG);
    cr_expect_eq(morton_segment(4, 0, NULL), HINT_ERR_ARG);
    cr_expect_eq(morton_segment(70000, 0, t), HINT_ERR_ARG);
    cr_expect_eq(order_tuples(ORDER_MORTON, 4, 4, t), HINT_ERR_ARG);
    cr_expect_str_eq(order_name(ORDER_MORTON), "morton");
}
