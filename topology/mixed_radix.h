/*
 * topology/mixed_radix.h — the mixed-radix arithmetic of the placement paper
 * (Swartvagher, Hunold, Träff, Vardas, SC-W 2023, §3.1), header-only and pure: no allocation,
 * no global state, no hint_init needed. Everything placement does (rank reordering, core lists,
 * ring cost, pairs per level, hint-topo) is built on these few functions.
 *
 * Conventions (pinned by the paper's Table 1 and tested in tests/topology):
 *   - A hierarchy h has n levels, OUTERMOST FIRST: h[0] is the slowest-varying level of the
 *     natural numbering (nodes), h[n-1] the fastest (cores of the lowest group). Rank 10 of
 *     [2,2,4] has coordinates [1,0,2]: node 1, socket 0, core 2 (Alg. 1).
 *   - An order (the paper's permutation sigma) lists levels FASTEST FIRST in the new numbering:
 *     order[0] is the level that varies fastest, order[n-1] the slowest (Alg. 2 / Eq. 2):
 *         new = sum_i coords[order[i]] * prod_{j<i} h[order[j]].
 *     So the natural numbering is the reversed order [n-1, ..., 1, 0], and the six orders of
 *     [2,2,4] in lexicographic order [0,1,2] [0,2,1] [1,0,2] [1,2,0] [2,0,1] [2,1,0] send rank 10
 *     to 9, 5, 10, 12, 6, 10 (Table 1).
 *   - "Old" ranks are positions in the natural numbering (Alg. 1's input: the core a process
 *     sits on, enumerated node-major); "new" ranks are what Alg. 2 makes of them.
 *
 * Sizes of 1 are accepted (their coordinate is always 0): a discovered hierarchy keeps its node
 * level even on one node. Products must fit in an int.
 */
#ifndef HINT_TOPOLOGY_MIXED_RADIX_H
#define HINT_TOPOLOGY_MIXED_RADIX_H

#include <limits.h>

#include "hint.h"

/* Enough for any real machine plus fake levels; a bound keeps every array on the stack. */
#define TOPO_MAX_LEVELS 32

/* A hierarchy and an order, prepared once so that each conversion is a few divisions. */
struct topo_mr {
    int n;                           /* number of levels, 1 .. TOPO_MAX_LEVELS */
    int size;                        /* prod h[]: number of positions (ranks or cores) */
    int h[TOPO_MAX_LEVELS];          /* level sizes, outermost first (h[0] = nodes) */
    int order[TOPO_MAX_LEVELS];      /* sigma: order[i] = level varying i-th fastest in the new numbering */
    int old_stride[TOPO_MAX_LEVELS]; /* weight of level l in the natural numbering: prod h[l+1 .. n-1] */
    int new_stride[TOPO_MAX_LEVELS]; /* weight of level l in the new numbering: prod of h[order[j]]
                                        over the j that come before l in order */
};

/* Status of a hierarchy: HINT_ERR_ARG for a bad n or NULL, HINT_ERR_TOPOLOGY for a size <= 0
   or a product that overflows an int. *size (may be NULL) receives the product. */
static inline int topo_mr_check_hier(int n, const int h[], int *size)
{
    long long prod = 1;
    if (n < 1 || n > TOPO_MAX_LEVELS || !h)
        return HINT_ERR_ARG;
    for (int l = 0; l < n; l++) {
        if (h[l] <= 0)
            return HINT_ERR_TOPOLOGY;
        prod *= h[l];
        if (prod > INT_MAX)
            return HINT_ERR_TOPOLOGY;
    }
    if (size)
        *size = (int)prod;
    return HINT_SUCCESS;
}

/* HINT_SUCCESS when order is a permutation of 0 .. n-1, HINT_ERR_TOPOLOGY otherwise
   (HINT_ERR_ARG for NULL or a bad n). */
static inline int topo_mr_check_order(int n, const int order[])
{
    unsigned char seen[TOPO_MAX_LEVELS] = {0};
    if (n < 1 || n > TOPO_MAX_LEVELS || !order)
        return HINT_ERR_ARG;
    for (int i = 0; i < n; i++) {
        if (order[i] < 0 || order[i] >= n || seen[order[i]])
            return HINT_ERR_TOPOLOGY;
        seen[order[i]] = 1;
    }
    return HINT_SUCCESS;
}

/* Validate h and order and precompute the strides. order may be NULL: the natural order
   [n-1, ..., 0], for which new == old. */
static inline int topo_mr_setup(struct topo_mr *mr, int n, const int h[], const int order[])
{
    if (!mr)
        return HINT_ERR_ARG;
    int st = topo_mr_check_hier(n, h, &mr->size);
    if (st != HINT_SUCCESS)
        return st;
    if (order && (st = topo_mr_check_order(n, order)) != HINT_SUCCESS)
        return st;
    mr->n = n;
    for (int l = 0; l < n; l++) {
        mr->h[l] = h[l];
        mr->order[l] = order ? order[l] : n - 1 - l;
    }
    int f = 1;
    for (int l = n - 1; l >= 0; l--) { /* innermost level has weight 1 */
        mr->old_stride[l] = f;
        f *= h[l];
    }
    f = 1;
    for (int i = 0; i < n; i++) { /* Alg. 2's running factor f */
        mr->new_stride[mr->order[i]] = f;
        f *= h[mr->order[i]];
    }
    return HINT_SUCCESS;
}

/* Coordinate of position r (natural numbering) on level l: Alg. 1 for one level. */
static inline int topo_mr_digit(const struct topo_mr *mr, int r, int l)
{
    return (r / mr->old_stride[l]) % mr->h[l];
}

/* Alg. 1: coordinates of position r, outermost first. r must be in [0, size). */
static inline void topo_mr_coords(const struct topo_mr *mr, int r, int coords[])
{
    for (int l = mr->n - 1; l >= 0; l--) {
        coords[l] = r % mr->h[l];
        r /= mr->h[l];
    }
}

/* Alg. 2: the new rank of the position with these coordinates (each in [0, h[l])). */
static inline int topo_mr_rank_of(const struct topo_mr *mr, const int coords[])
{
    int r = 0;
    for (int l = 0; l < mr->n; l++)
        r += coords[l] * mr->new_stride[l];
    return r;
}

/* Alg. 1 then Alg. 2: the new rank of the process at old position r. */
static inline int topo_mr_new_of_old(const struct topo_mr *mr, int r)
{
    int s = 0;
    for (int l = 0; l < mr->n; l++)
        s += topo_mr_digit(mr, r, l) * mr->new_stride[l];
    return s;
}

/* The inverse: the old position of the process that gets new rank s. */
static inline int topo_mr_old_of_new(const struct topo_mr *mr, int s)
{
    int r = 0;
    for (int l = 0; l < mr->n; l++)
        r += ((s / mr->new_stride[l]) % mr->h[l]) * mr->old_stride[l];
    return r;
}

/* The outermost level on which old positions a and b differ; n when a == b. Two positions
   share every group of the levels above it. */
static inline int topo_mr_first_diff(const struct topo_mr *mr, int a, int b)
{
    for (int l = 0; l < mr->n; l++)
        if (topo_mr_digit(mr, a, l) != topo_mr_digit(mr, b, l))
            return l;
    return mr->n;
}

/* The paper's communication cost between old positions a and b (§3.3): 1 inside the lowest
   level, plus 1 for every level crossed, i.e. n - first_diff; 0 for a == b. */
static inline int topo_mr_distance(const struct topo_mr *mr, int a, int b)
{
    return mr->n - topo_mr_first_diff(mr, a, b);
}

#endif /* HINT_TOPOLOGY_MIXED_RADIX_H */
