/*
 * tests/topology/test_mixed_radix.c — the public placement calls (hint_mr_*, hint_dims_create)
 * against the paper's own numbers (Table 1, §3.3, Fig. 9's core sets) and their defining
 * properties, without hint_init (they must work before it).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/mixed_radix.h"

static const int H224[3] = {2, 2, 4};

/* Table 1: rank 10 of [2,2,4] is [1,0,2]; the six orders, lexicographic, give 9 5 10 12 6 10. */
Test(mixed_radix, table1)
{
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    static const int expect[6] = {9, 5, 10, 12, 6, 10};
    int c[3];
    cr_assert_eq(hint_mr_coords(3, H224, 10, c), HINT_SUCCESS);
    cr_assert(c[0] == 1 && c[1] == 0 && c[2] == 2, "coords of 10: [%d,%d,%d]", c[0], c[1], c[2]);
    for (int i = 0; i < 6; i++) {
        int r = -1;
        cr_assert_eq(hint_mr_rank(3, H224, c, orders[i], &r), HINT_SUCCESS);
        cr_expect_eq(r, expect[i], "order [%d,%d,%d]: rank %d, Table 1 says %d", orders[i][0], orders[i][1],
                     orders[i][2], r, expect[i]);
    }
}

/* Launchers and tools call these before (or without) hint_init. */
Test(mixed_radix, before_init)
{
    int flag = -1, c[3], r = -1, d[2] = {0, 0};
    cr_assert_eq(hint_initialized(&flag), HINT_SUCCESS);
    cr_assert_eq(flag, 0);
    cr_expect_eq(hint_mr_coords(3, H224, 5, c), HINT_SUCCESS);
    cr_expect_eq(hint_mr_rank(3, H224, c, (int[]){2, 1, 0}, &r), HINT_SUCCESS);
    cr_expect_eq(r, 5);
    cr_expect_eq(hint_dims_create(4, 2, d), HINT_SUCCESS);
}

/* §3.3: with sub-groups of 4, ring cost 9 for [0,1,2] and 7 for [1,0,2]. */
Test(mixed_radix, ring_cost_paper)
{
    long cost = -1;
    cr_assert_eq(hint_mr_ring_cost(3, H224, (int[]){0, 1, 2}, 4, &cost), HINT_SUCCESS);
    cr_expect_eq(cost, 9);
    cr_assert_eq(hint_mr_ring_cost(3, H224, (int[]){1, 0, 2}, 4, &cost), HINT_SUCCESS);
    cr_expect_eq(cost, 7);
    /* packed natural order: 3 hops inside the lowest level */
    cr_assert_eq(hint_mr_ring_cost(3, H224, (int[]){2, 1, 0}, 4, &cost), HINT_SUCCESS);
    cr_expect_eq(cost, 3);
    cr_assert_eq(hint_mr_ring_cost(3, H224, (int[]){2, 1, 0}, 1, &cost), HINT_SUCCESS);
    cr_expect_eq(cost, 0);
}

/* §3.3: pairs per level [100,0,0] for [2,1,0] and [0,33.3,66.7] for [1,0,2], sub-groups of 4. */
Test(mixed_radix, pairs_per_level_paper)
{
    double p[3];
    cr_assert_eq(hint_mr_pairs_per_level(3, H224, (int[]){2, 1, 0}, 4, p), HINT_SUCCESS);
    cr_expect(fabs(p[0] - 100.0) < 1e-9 && p[1] == 0.0 && p[2] == 0.0, "[%g,%g,%g]", p[0], p[1], p[2]);
    cr_assert_eq(hint_mr_pairs_per_level(3, H224, (int[]){1, 0, 2}, 4, p), HINT_SUCCESS);
    cr_expect(p[0] == 0.0 && fabs(p[1] - 33.3) < 0.05 && fabs(p[2] - 66.7) < 0.05, "[%g,%g,%g]", p[0], p[1],
              p[2]);
    /* a group of one has no pairs */
    cr_assert_eq(hint_mr_pairs_per_level(3, H224, (int[]){1, 0, 2}, 1, p), HINT_SUCCESS);
    cr_expect(p[0] == 0.0 && p[1] == 0.0 && p[2] == 0.0);
}

/* Percentages always sum to 100 and agree with a brute-force pair count. */
Test(mixed_radix, pairs_brute_force)
{
    srand(4242);
    for (int iter = 0; iter < 200; iter++) {
        int n = 1 + rand() % 4, h[4], order[4];
        for (int l = 0; l < n; l++) {
            h[l] = 1 + rand() % 4;
            order[l] = l;
        }
        for (int l = n - 1; l > 0; l--) {
            int j = rand() % (l + 1), t = order[l];
            order[l] = order[j];
            order[j] = t;
        }
        struct topo_mr mr;
        cr_assert_eq(topo_mr_setup(&mr, n, h, order), HINT_SUCCESS);
        int k = 1 + rand() % mr.size;
        double p[4], sum = 0;
        long long cnt[4] = {0}, total = 0;
        cr_assert_eq(hint_mr_pairs_per_level(n, h, order, k, p), HINT_SUCCESS);
        for (int a = 0; a < k; a++)
            for (int b = a + 1; b < k; b++) {
                cnt[topo_mr_distance(&mr, topo_mr_old_of_new(&mr, a), topo_mr_old_of_new(&mr, b)) - 1]++;
                total++;
            }
        for (int l = 0; l < n; l++) {
            double want = total ? 100.0 * (double)cnt[l] / (double)total : 0.0;
            cr_expect(fabs(p[l] - want) < 1e-9, "iter %d level %d: %g vs %g", iter, l, p[l], want);
            sum += p[l];
        }
        cr_expect(total == 0 || fabs(sum - 100.0) < 1e-9);
    }
}

/* §3.1: Alg. 2 with the reversed order [n-1,...,0] inverts Alg. 1, for random hierarchies. */
Test(mixed_radix, reversed_order_is_identity)
{
    srand(20231112);
    for (int iter = 0; iter < 500; iter++) {
        int n = 1 + rand() % 6, h[6], rev[6], c[6];
        long long size = 1;
        for (int l = 0; l < n; l++) {
            h[l] = 1 + rand() % 5;
            size *= h[l];
            rev[l] = n - 1 - l;
        }
        for (int r = 0; r < size; r++) {
            int back = -1;
            cr_assert_eq(hint_mr_coords(n, h, r, c), HINT_SUCCESS);
            cr_assert_eq(hint_mr_rank(n, h, c, rev, &back), HINT_SUCCESS);
            cr_assert_eq(back, r, "iter %d: %d -> %d", iter, r, back);
        }
    }
}

/* Any order is a bijection, and old_of_new inverts new_of_old (= Alg. 1 then Alg. 2). */
Test(mixed_radix, orders_are_bijections)
{
    srand(7);
    for (int iter = 0; iter < 300; iter++) {
        int n = 1 + rand() % 5, h[5], order[5], c[5];
        for (int l = 0; l < n; l++) {
            h[l] = 1 + rand() % 4;
            order[l] = l;
        }
        for (int l = n - 1; l > 0; l--) {
            int j = rand() % (l + 1), t = order[l];
            order[l] = order[j];
            order[j] = t;
        }
        struct topo_mr mr;
        cr_assert_eq(topo_mr_setup(&mr, n, h, order), HINT_SUCCESS);
        unsigned char seen[1024] = {0};
        for (int r = 0; r < mr.size; r++) {
            int s = -1;
            hint_mr_coords(n, h, r, c);
            cr_assert_eq(hint_mr_rank(n, h, c, order, &s), HINT_SUCCESS);
            cr_assert_eq(s, topo_mr_new_of_old(&mr, r));
            cr_assert(s >= 0 && s < mr.size && !seen[s]);
            seen[s] = 1;
            cr_assert_eq(topo_mr_old_of_new(&mr, s), r);
        }
    }
}

/* Alg. 3 exactly as the paper writes it: every core, keep those whose new rank is below n. */
static void alg3_literal(int nl, const int *h, const int *order, int n, int *cores)
{
    int N = 1, c[8];
    for (int i = 0; i < nl; i++)
        N *= h[i];
    for (int core = 0; core < N; core++) {
        int r;
        hint_mr_coords(nl, h, core, c);
        hint_mr_rank(nl, h, c, order, &r);
        if (r < n)
            cores[r] = core;
    }
}

/* Fig. 9 (LUMI node [2,4,2,8]): 2 processes with [0,1,2,3] take the first core of each
   socket; 8 with [0,1,2,3] or [1,0,2,3] the first core of each NUMA node. */
Test(mixed_radix, cores_fewer_than_node)
{
    static const int lumi[4] = {2, 4, 2, 8};
    int cores[128];
    cr_assert_eq(hint_mr_cores(4, lumi, (int[]){0, 1, 2, 3}, 2, cores), HINT_SUCCESS);
    cr_expect(cores[0] == 0 && cores[1] == 64, "[%d,%d]", cores[0], cores[1]);
    for (int v = 0; v < 2; v++) {
        const int *order = v ? (int[]){1, 0, 2, 3} : (int[]){0, 1, 2, 3};
        int seen[8] = {0};
        cr_assert_eq(hint_mr_cores(4, lumi, order, 8, cores), HINT_SUCCESS);
        for (int r = 0; r < 8; r++) {
            cr_expect_eq(cores[r] % 16, 0, "core %d is not the first of a NUMA node", cores[r]);
            seen[cores[r] / 16]++;
        }
        for (int i = 0; i < 8; i++)
            cr_expect_eq(seen[i], 1);
    }
    /* and the literal Alg. 3 agrees for every order and every n */
    static const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    for (int o = 0; o < 6; o++)
        for (int n = 0; n <= 16; n++) {
            int want[16], got[16];
            alg3_literal(3, H224, orders[o], n, want);
            cr_assert_eq(hint_mr_cores(3, H224, orders[o], n, got), HINT_SUCCESS);
            cr_assert(memcmp(want, got, (size_t)n * sizeof *got) == 0, "order %d n %d", o, n);
        }
    /* more cores than the hierarchy has */
    cr_expect_eq(hint_mr_cores(3, H224, (int[]){2, 1, 0}, 17, cores), HINT_ERR_TOPOLOGY);
}

Test(mixed_radix, errors_never_ub)
{
    int c[3], r, cores[4];
    long cost;
    double p[3];
    const int *ord = (int[]){2, 1, 0};
    cr_expect_eq(hint_mr_coords(3, NULL, 0, c), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_coords(3, H224, 0, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_coords(0, H224, 0, c), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_coords(-1, H224, 0, c), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_coords(TOPO_MAX_LEVELS + 1, H224, 0, c), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_coords(3, (int[]){2, 0, 4}, 0, c), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_mr_coords(3, (int[]){2, -2, 4}, 0, c), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_mr_coords(3, (int[]){65536, 65536, 2}, 0, c), HINT_ERR_TOPOLOGY); /* overflow */
    cr_expect_eq(hint_mr_coords(3, H224, -1, c), HINT_ERR_RANK);
    cr_expect_eq(hint_mr_coords(3, H224, 16, c), HINT_ERR_RANK);
    cr_expect_eq(hint_mr_coords(3, H224, 15, c), HINT_SUCCESS);

    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, 0, 2}, (int[]){0, 0, 2}, &r), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, 0, 2}, (int[]){0, 1, 3}, &r), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, 0, 2}, (int[]){0, 1, -1}, &r), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, 0, 4}, ord, &r), HINT_ERR_ARG); /* coordinate >= h */
    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, -1, 0}, ord, &r), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_rank(3, H224, NULL, ord, &r), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_rank(3, H224, c, NULL, &r), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_rank(3, H224, (int[]){1, 0, 2}, ord, NULL), HINT_ERR_ARG);

    cr_expect_eq(hint_mr_cores(3, H224, ord, -1, cores), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_cores(3, H224, ord, 2, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_cores(3, H224, ord, 0, NULL), HINT_SUCCESS);
    cr_expect_eq(hint_mr_cores(3, H224, (int[]){1, 1, 0}, 2, cores), HINT_ERR_TOPOLOGY);

    cr_expect_eq(hint_mr_ring_cost(3, H224, ord, 0, &cost), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_ring_cost(3, H224, ord, 17, &cost), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_ring_cost(3, H224, ord, 4, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_pairs_per_level(3, H224, ord, 0, p), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_pairs_per_level(3, H224, ord, 4, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_mr_pairs_per_level(3, H224, (int[]){0, 1, 1}, 4, p), HINT_ERR_TOPOLOGY);
}

static void dims_expect(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, (size_t)ndims * sizeof *d);
    cr_assert_eq(hint_dims_create(nnodes, ndims, d), HINT_SUCCESS, "dims_create(%d, %d)", nnodes, ndims);
    for (int i = 0; i < ndims; i++)
        cr_expect_eq(d[i], want[i], "dims_create(%d, %d): dims[%d] = %d, want %d", nnodes, ndims, i, d[i], want[i]);
}

Test(dims, like_mpi)
{
    dims_expect(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_expect(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_expect(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims_expect(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_expect(36, 3, (int[]){0, 0, 0}, (int[]){4, 3, 3});
    dims_expect(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    dims_expect(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_expect(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims_expect(12, 2, (int[]){4, 3}, (int[]){4, 3});
    dims_expect(1024, 2, (int[]){0, 0}, (int[]){32, 32});
    dims_expect(2147483647, 2, (int[]){0, 0}, (int[]){2147483647, 1}); /* a prime */
    dims_expect(720720, 6, (int[]){0, 0, 0, 0, 0, 0}, (int[]){13, 11, 10, 9, 8, 7});
    dims_expect(96, 4, (int[]){0, 0, 0, 0}, (int[]){4, 4, 3, 2});
    dims_expect(30, 3, (int[]){0, 0, 0}, (int[]){5, 3, 2});
}

/* Exhaustive reference: every non-increasing factorisation of m into k entries; the best is
   the smallest (largest - smallest), then the smallest largest. */
#define DIMS_REF_MAX 5
static void dims_ref(int m, int k, int i, int cap, int *cur, long long best[2])
{
    /* The bound lets GCC's -O3 -Warray-bounds see that cur[] stays inside its 5 entries. */
    if (k < 1 || k > DIMS_REF_MAX || i > k)
        return;
    if (i == k) {
        if (m != 1)
            return;
        long long spread = cur[0] - cur[k - 1];
        if (best[0] < 0 || spread < best[0] || (spread == best[0] && cur[0] < best[1])) {
            best[0] = spread;
            best[1] = cur[0];
        }
        return;
    }
    for (int v = cap; v >= 1; v--)
        if (m % v == 0) {
            cur[i] = v;
            dims_ref(m / v, k, i + 1, v, cur, best);
        }
}

Test(dims, against_exhaustive_search)
{
    srand(99);
    for (int iter = 0; iter < 300; iter++) {
        int m = 1 + rand() % 2000, k = 1 + rand() % DIMS_REF_MAX, d[DIMS_REF_MAX] = {0}, cur[DIMS_REF_MAX];
        long long best[2] = {-1, -1}, prod = 1;
        cr_assert_eq(hint_dims_create(m, k, d), HINT_SUCCESS);
        dims_ref(m, k, 0, m, cur, best);
        for (int i = 0; i < k; i++) {
            prod *= d[i];
            cr_assert(i == 0 || d[i] <= d[i - 1], "m %d k %d: not non-increasing", m, k);
        }
        cr_assert_eq(prod, m);
        cr_expect(d[0] - d[k - 1] == best[0] && d[0] == best[1], "m %d k %d: spread %d max %d, best %lld %lld", m, k,
                  d[0] - d[k - 1], d[0], best[0], best[1]);
    }
}

Test(dims, errors)
{
    int d[3] = {0, 0, 0};
    cr_expect_eq(hint_dims_create(0, 2, d), HINT_ERR_ARG);
    cr_expect_eq(hint_dims_create(4, -1, d), HINT_ERR_ARG);
    cr_expect_eq(hint_dims_create(4, 2, NULL), HINT_ERR_ARG);
    cr_expect_eq(hint_dims_create(4, 2, (int[]){-1, 0}), HINT_ERR_ARG);
    cr_expect_eq(hint_dims_create(7, 2, (int[]){2, 0}), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_dims_create(6, 2, (int[]){2, 2}), HINT_ERR_TOPOLOGY);
    cr_expect_eq(hint_dims_create(1, 0, NULL), HINT_SUCCESS);
    cr_expect_eq(hint_dims_create(2, 0, NULL), HINT_ERR_TOPOLOGY);
}
