/*
 * topology/mixed_radix.c — the public placement calls of hint.h (hint_mr_*): argument checks
 * around the pure arithmetic of mixed_radix.h, and the two metrics of the paper's §3.3.
 * None of them needs hint_init: launchers and tools call them before (or without) a job.
 *
 * Status codes: HINT_ERR_ARG for NULL pointers, a bad nlevels, a bad group size or coordinate;
 * HINT_ERR_TOPOLOGY for a bad hierarchy (a size <= 0, a product above INT_MAX), an order that
 * is not a permutation of 0 .. nlevels-1, or more cores asked than the hierarchy has;
 * HINT_ERR_RANK for a rank outside [0, product); HINT_ERR_NOMEM when a metric's scratch array
 * cannot be allocated.
 */
#include <stdlib.h>

#include "hint.h"
#include "topology/mixed_radix.h"
#include "topology/topology.h"

int hint_mr_coords(int nlevels, const int h[], int rank, int coords[])
{
    struct topo_mr mr;
    int st = topo_mr_setup(&mr, nlevels, h, NULL);
    if (st != HINT_SUCCESS)
        return st;
    if (!coords)
        return HINT_ERR_ARG;
    if (rank < 0 || rank >= mr.size)
        return HINT_ERR_RANK;
    topo_mr_coords(&mr, rank, coords);
    return HINT_SUCCESS;
}

int hint_mr_rank(int nlevels, const int h[], const int coords[], const int order[], int *rank)
{
    struct topo_mr mr;
    if (!order)
        return HINT_ERR_ARG;
    int st = topo_mr_setup(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (!coords || !rank)
        return HINT_ERR_ARG;
    for (int l = 0; l < nlevels; l++)
        if (coords[l] < 0 || coords[l] >= h[l])
            return HINT_ERR_ARG;
    *rank = topo_mr_rank_of(&mr, coords);
    return HINT_SUCCESS;
}

int hint_mr_cores(int nlevels, const int h[], const int order[], int n, int cores[])
{
    struct topo_mr mr;
    if (!order)
        return HINT_ERR_ARG;
    int st = topo_mr_setup(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (n < 0 || (n > 0 && !cores))
        return HINT_ERR_ARG;
    if (n > mr.size)
        return HINT_ERR_TOPOLOGY; /* more cores asked than the hierarchy describes */
    /* Alg. 3 walks every core c and keeps those whose new rank is below n. Walking the new
       ranks 0 .. n-1 and inverting gives the same list in O(n) instead of O(N). */
    for (int r = 0; r < n; r++)
        cores[r] = topo_mr_old_of_new(&mr, r);
    return HINT_SUCCESS;
}

long topo_mr_ring_cost(const struct topo_mr *mr, int group_size)
{
    long cost = 0;
    int prev = topo_mr_old_of_new(mr, 0);
    /* the paper's ring: rank 0 -> 1 -> ... -> K-1, no wrap-around (cost 9 for [0,1,2], K=4) */
    for (int s = 1; s < group_size; s++) {
        int cur = topo_mr_old_of_new(mr, s);
        cost += topo_mr_distance(mr, prev, cur);
        prev = cur;
    }
    return cost;
}

int hint_mr_ring_cost(int nlevels, const int h[], const int order[], int group_size, long *cost)
{
    struct topo_mr mr;
    if (!order)
        return HINT_ERR_ARG;
    int st = topo_mr_setup(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (!cost || group_size < 1 || group_size > mr.size)
        return HINT_ERR_ARG;
    *cost = topo_mr_ring_cost(&mr, group_size);
    return HINT_SUCCESS;
}

static int topo_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Pairs of old positions in sorted a[0..k-1] that share their group on level l (and so on
   every level above it): runs of equal a[i] / old_stride[l]. */
static long long topo_pairs_sharing(const struct topo_mr *mr, const int *a, int k, int l)
{
    long long pairs = 0, run = 1;
    for (int i = 1; i <= k; i++) {
        if (i < k && a[i] / mr->old_stride[l] == a[i - 1] / mr->old_stride[l]) {
            run++;
            continue;
        }
        pairs += run * (run - 1) / 2;
        run = 1;
    }
    return pairs;
}

int topo_mr_pairs_per_level(const struct topo_mr *mr, int group_size, double pct[])
{
    int st = HINT_SUCCESS;
    int *a = malloc((size_t)group_size * sizeof *a);
    if (!a) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    for (int s = 0; s < group_size; s++)
        a[s] = topo_mr_old_of_new(mr, s);
    qsort(a, (size_t)group_size, sizeof *a, topo_cmp_int); /* groups become runs */
    long long total = (long long)group_size * (group_size - 1) / 2;
    long long above = total; /* pairs sharing every level above l: all of them for l = 0 */
    for (int l = 0; l < mr->n; l++) {
        long long sharing = topo_pairs_sharing(mr, a, group_size, l);
        /* pct[0] is the lowest level: pairs that differ first on level l cross n-1-l levels */
        pct[mr->n - 1 - l] = total ? 100.0 * (double)(above - sharing) / (double)total : 0.0;
        above = sharing;
    }
out:
    free(a);
    return st;
}

int hint_mr_pairs_per_level(int nlevels, const int h[], const int order[], int group_size, double pct[])
{
    struct topo_mr mr;
    if (!order)
        return HINT_ERR_ARG;
    int st = topo_mr_setup(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (!pct || group_size < 1 || group_size > mr.size)
        return HINT_ERR_ARG;
    return topo_mr_pairs_per_level(&mr, group_size, pct);
}
