/*
 * tests/unit/test_order.c — the copy orders of the HINT alltoall: the paper's Fig. 5 for N = 4
 * (two misprinted Hilbert tuples corrected, see fig5), every block copied exactly once for many
 * P, Hilbert neighbours adjacent.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>

#include "collectives/copy.h"
#include "collectives/order/order.h"
#include "hint.h"

/* Fig. 5: each rank's tuples (seq, src, dst) after sorting, for the three orders at N = 4, as the
   paper's text prints the grid, except two Hilbert tuples: its grid's last row (src 3) reads
   (6, 2, 0) and (7, 2, 1), which would copy blocks (2,0) and (2,1) twice and (3,0), (3,1) never;
   taken here as (6, 3, 0) and (7, 3, 1), the only reading that is a permutation and a walk. */
static const unsigned fig5[3][4][4][3] = {
    [ORDER_HILBERT] = {{{1, 0, 0}, {2, 0, 1}, {3, 1, 1}, {4, 1, 0}},
                       {{13, 1, 3}, {14, 1, 2}, {15, 0, 2}, {16, 0, 3}},
                       {{5, 2, 0}, {6, 3, 0}, {7, 3, 1}, {8, 2, 1}},
                       {{9, 2, 2}, {10, 3, 2}, {11, 3, 3}, {12, 2, 3}}},
    [ORDER_COLUMN] = {{{1, 0, 0}, {2, 0, 1}, {3, 0, 2}, {4, 0, 3}},
                      {{5, 1, 0}, {6, 1, 1}, {7, 1, 2}, {8, 1, 3}},
                      {{9, 2, 0}, {10, 2, 1}, {11, 2, 2}, {12, 2, 3}},
                      {{13, 3, 0}, {14, 3, 1}, {15, 3, 2}, {16, 3, 3}}},
    [ORDER_ROW] = {{{1, 0, 0}, {2, 1, 0}, {3, 2, 0}, {4, 3, 0}},
                   {{5, 0, 1}, {6, 1, 1}, {7, 2, 1}, {8, 3, 1}},
                   {{9, 0, 2}, {10, 1, 2}, {11, 2, 2}, {12, 3, 2}},
                   {{13, 0, 3}, {14, 1, 3}, {15, 2, 3}, {16, 3, 3}}},
};

Test(order, figure5_metadata_for_4_ranks)
{
    for (int kind = 0; kind <= ORDER_HILBERT; kind++) /* Fig. 5 has three orders */
        for (int r = 0; r < 4; r++) {
            struct order_tuple t[4];
            cr_assert_eq(order_tuples(kind, 4, r, t), HINT_SUCCESS);
            for (int i = 0; i < 4; i++)
                cr_expect(t[i].seq == fig5[kind][r][i][0] && t[i].src == fig5[kind][r][i][1] &&
                              t[i].dst == fig5[kind][r][i][2],
                          "%s rank %d tuple %d is (%u,%u,%u), Fig. 5 has (%u,%u,%u)", order_name(kind), r, i, t[i].seq,
                          t[i].src, t[i].dst, fig5[kind][r][i][0], fig5[kind][r][i][1], fig5[kind][r][i][2]);
        }
}

Test(order, every_block_exactly_once_and_hilbert_is_a_walk)
{
    for (int P = 1; P <= 40; P++) {
        for (int kind = 0; kind < ORDER_NKINDS; kind++) {
            int *seen = calloc((size_t)P * P, sizeof *seen);
            struct order_tuple *t = malloc((size_t)P * sizeof *t);
            for (int r = 0; r < P; r++) {
                cr_assert_eq(order_tuples(kind, P, r, t), HINT_SUCCESS, "%s P=%d rank %d", order_name(kind), P, r);
                for (int i = 0; i < P; i++) {
                    cr_assert(t[i].src < (unsigned)P && t[i].dst < (unsigned)P);
                    seen[t[i].src * P + t[i].dst]++;
                    if (i)
                        cr_expect(t[i].seq > t[i - 1].seq);
                }
            }
            for (int k = 0; k < P * P; k++)
                cr_expect_eq(seen[k], 1, "%s P=%d block (%d,%d) copied %d times", order_name(kind), P, k / P, k % P,
                             seen[k]);
            free(seen);
            free(t);
        }
        /* consecutive Hilbert positions are neighbouring blocks (a continuous curve); the
           generalised curve may take one diagonal step on odd sides */
        uint32_t *grid = malloc((size_t)P * P * sizeof *grid);
        int *where = malloc((size_t)P * P * sizeof *where);
        order_grid(ORDER_HILBERT, P, grid);
        for (int k = 0; k < P * P; k++)
            where[grid[k] - 1] = k;
        int diagonal = 0;
        for (int q = 1; q < P * P; q++) {
            int a = where[q - 1], b = where[q];
            int dx = abs(a / P - b / P), dy = abs(a % P - b % P);
            cr_expect(dx <= 1 && dy <= 1 && dx + dy >= 1, "P=%d: step %d jumps from (%d,%d) to (%d,%d)", P, q, a / P,
                      a % P, b / P, b % P);
            diagonal += dx + dy == 2;
        }
        cr_expect(diagonal <= 1, "P=%d: %d diagonal steps", P, diagonal);
        free(grid);
        free(where);
    }
}

Test(order, bad_arguments)
{
    struct order_tuple t[4];
    cr_expect_eq(order_tuples(ORDER_ROW, 0, 0, t), HINT_ERR_ARG);
    cr_expect_eq(order_tuples(ORDER_ROW, 4, 4, t), HINT_ERR_ARG);
    cr_expect_eq(order_tuples(7, 4, 0, t), HINT_ERR_ARG);
}

/* The non-temporal and hybrid kernels against memcpy, for every alignment and tail length. */
Test(copy, kernels_match_memcpy)
{
    size_t cap = 5000;
    unsigned char *src = malloc(cap + 64), *dst = malloc(cap + 128), *ref = malloc(cap + 128);
    for (size_t i = 0; i < cap + 64; i++)
        src[i] = (unsigned char)(i * 7 + 3);
    size_t lens[] = {0, 1, 15, 16, 63, 64, 65, 127, 128, 255, 256, 257, 1000, 4096, 4999};
    for (size_t so = 0; so < 8; so++)
        for (size_t dof = 0; dof < 8; dof++)
            for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
                size_t n = lens[k];
                memset(dst, 0xAA, cap + 128);
                memset(ref, 0xAA, cap + 128);
                memcpy(ref + dof, src + so, n);
                copy_nt(dst + dof, src + so, n);
                copy_fence();
                cr_assert(memcmp(dst, ref, cap + 128) == 0, "nt (%s) n=%zu src+%zu dst+%zu", copy_nt_kernel(), n, so,
                          dof);
                memset(dst, 0xAA, cap + 128);
                copy_hybrid(dst + dof, src + so, n, 100, 40);
                copy_fence();
                cr_assert(memcmp(dst, ref, cap + 128) == 0, "hybrid n=%zu", n);
            }
    free(src);
    free(dst);
    free(ref);
}

/* The NUMA-aware schedule: every block exactly once, P tuples per rank, each rank writing only
   into its own socket, for contiguous, interleaved and unequal socket layouts (issue 23: unequal
   sockets used to fall back to one socket); with equal sockets, step 0 of each rank is the plain
   Morton segment of its socket's q x q bunch. */
Test(order, numa_schedule_stays_in_its_socket)
{
    int layouts[][8] = {{0, 0, 0, 0, 1, 1, 1, 1}, {0, 1, 0, 1, 0, 1, 0, 1}, {3, 3, 7, 7, 5, 5, 9, 9},
                        {0, 0, 0, 1, 1, 1, 1, 1}, {0, 1, 1, 2, 2, 2, 0, 1}, {4, 4, 4, 4, 4, 4, 4, 9},
                        {2, 0, 0, 0, 0, 0, 1, 1}};
    int nl = sizeof layouts / sizeof layouts[0];
    for (int l = 0; l < nl; l++) {
        int P = 8, seen[64] = {0};
        for (int r = 0; r < P; r++) {
            struct order_tuple t[8];
            cr_assert_eq(order_numa_tuples(P, layouts[l], r, t), HINT_SUCCESS);
            for (int i = 0; i < P; i++) {
                cr_assert(t[i].src < 8 && t[i].dst < 8, "layout %d rank %d tuple %d out of range", l, r, i);
                seen[t[i].src * P + t[i].dst]++;
                cr_expect_eq(layouts[l][t[i].dst], layouts[l][r], "layout %d rank %d writes into socket %d", l, r,
                             layouts[l][t[i].dst]);
                if (i)
                    cr_expect_gt(t[i].seq, t[i - 1].seq, "layout %d rank %d: tuples not in step order", l, r);
            }
        }
        for (int k = 0; k < P * P; k++)
            cr_expect_eq(seen[k], 1, "layout %d block (%d,%d) copied %d times", l, k / P, k % P, seen[k]);
    }
    /* equal sockets of 4 (layout 0): rank r's first 4 tuples are Morton segment r % 4 of 4 x 4 */
    for (int r = 0; r < 8; r++) {
        struct order_tuple t[8], m[4];
        cr_assert_eq(order_numa_tuples(8, layouts[0], r, t), HINT_SUCCESS);
        cr_assert_eq(order_tuples(ORDER_MORTON, 4, r % 4, m), HINT_SUCCESS);
        int base = r / 4 * 4;
        for (int i = 0; i < 4; i++)
            cr_expect(t[i].seq == m[i].seq && (int)t[i].src == base + (int)m[i].src &&
                          (int)t[i].dst == base + (int)m[i].dst,
                      "rank %d tuple %d", r, i);
    }
}
