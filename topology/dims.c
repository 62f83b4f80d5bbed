/*
 * topology/dims.c — hint_dims_create, as MPI_Dims_create: fill the zero entries of dims so that
 * the product of all entries is nnodes and the filled entries are as close to each other as
 * possible, in non-increasing order. Positive entries are kept as given. Pure: no hint_init.
 *
 * "As close as possible" is made exact: among the non-increasing factorisations of the free
 * part, the one with the smallest (largest - smallest) entry, ties broken by the smallest
 * largest entry. This gives the answers users know from MPI (6,2 -> 3x2; 24,3 -> 4x3x2;
 * 16,3 -> 4x2x2; 7,2 -> 7x1). The search runs over the divisors of the free part (at most 1536
 * of them for an int) with pruning, so it is fast for any realistic ndims.
 *
 * Errors: HINT_ERR_ARG for nnodes < 1, ndims < 0, dims NULL with ndims > 0 or a negative entry;
 * HINT_ERR_TOPOLOGY when the given entries do not divide nnodes (or ndims is 0 and nnodes > 1).
 */
#include <math.h>
#include <stdlib.h>

#include "hint.h"

struct topo_dims_search {
    const int *div;   /* divisors of the free part, ascending */
    int ndiv;
    int k;            /* free entries to fill */
    int cur[64];      /* factorisation being built, non-increasing */
    int best[64];     /* best one found */
    long long best_spread, best_max; /* its (largest - smallest) and largest; -1 before any */
};

/* r^k, or cap + 1 as soon as it exceeds cap (no overflow: both factors stay below 2^32). */
static long long topo_pow_capped(long long r, int k, long long cap)
{
    long long p = 1;
    for (int j = 0; j < k; j++)
        if ((p *= r) > cap)
            return cap + 1;
    return p;
}

/* floor(x^(1/k)) for x >= 1, k >= 1, exactly (pow() is only a first guess). */
static long long topo_iroot(long long x, int k)
{
    long long r = (long long)pow((double)x, 1.0 / k);
    if (r < 1)
        r = 1;
    while (r > 1 && topo_pow_capped(r, k, x) > x)
        r--;
    while (topo_pow_capped(r + 1, k, x) <= x)
        r++;
    return r;
}

/* Is a completion of cur[0..i-1] with left entries of product rest worse than the best? The
   smallest remaining entry is at most rest^(1/left), so the spread is at least cur0 - that. */
static int topo_dims_hopeless(const struct topo_dims_search *s, long long cur0, long long rest, int left)
{
    if (s->best_spread < 0)
        return 0;
    long long lb = cur0 - topo_iroot(rest, left);
    return lb > s->best_spread || (lb == s->best_spread && cur0 >= s->best_max);
}

/* Place entries i .. k-1 of a non-increasing factorisation of rest, none above cap. */
static void topo_dims_search(struct topo_dims_search *s, int i, int rest, int cap)
{
    if (i == s->k) {
        if (rest != 1)
            return;
        long long spread = (long long)s->cur[0] - s->cur[s->k - 1];
        if (s->best_spread < 0 || spread < s->best_spread ||
            (spread == s->best_spread && s->cur[0] < s->best_max)) {
            s->best_spread = spread;
            s->best_max = s->cur[0];
            for (int j = 0; j < s->k; j++)
                s->best[j] = s->cur[j];
        }
        return;
    }
    int left = s->k - i;
    if (i > 0 && topo_dims_hopeless(s, s->cur[0], rest, left))
        return;
    if (i == 0) {
        /* the largest entry, smallest first: balanced answers come early and prune the rest;
           it is at least rest^(1/k), and the bound above only grows with it */
        for (int d = 0; d < s->ndiv; d++) {
            int v = s->div[d];
            long long p = 1;
            for (int j = 0; j < left && p < rest; j++)
                p *= v;
            if (p < rest)
                continue;
            if (left > 1 && topo_dims_hopeless(s, v, rest / v, left - 1))
                break;
            s->cur[0] = v;
            topo_dims_search(s, 1, rest / v, v);
        }
        return;
    }
    for (int d = s->ndiv - 1; d >= 0; d--) {
        int v = s->div[d];
        if (v > cap || rest % v)
            continue;
        /* entries only shrink from here: v is the largest remaining, so v^left >= rest */
        long long p = 1;
        for (int j = 0; j < left && p < rest; j++)
            p *= v;
        if (p < rest)
            break; /* smaller v cannot reach rest either */
        s->cur[i] = v;
        topo_dims_search(s, i + 1, rest / v, v);
    }
}

/* Ascending divisors of m (m >= 1) into a fresh array; NULL when out of memory. */
static int *topo_divisors(int m, int *count)
{
    int small = 0, cap = 64;
    int *d = malloc((size_t)cap * sizeof *d);
    int *large = malloc((size_t)cap * sizeof *large);
    int nl = 0;
    if (!d || !large)
        goto fail;
    for (long long x = 1; x * x <= m; x++) {
        if (m % x)
            continue;
        if (small == cap || nl == cap) {
            cap *= 2;
            int *nd = realloc(d, (size_t)cap * sizeof *d);
            if (!nd)
                goto fail;
            d = nd;
            int *nlg = realloc(large, (size_t)cap * sizeof *large);
            if (!nlg)
                goto fail;
            large = nlg;
        }
        d[small++] = (int)x;
        if (x * x != m)
            large[nl++] = (int)(m / x);
    }
    int *all = realloc(d, (size_t)(small + nl) * sizeof *d);
    if (!all)
        goto fail;
    d = all;
    for (int j = nl - 1; j >= 0; j--)
        d[small++] = large[j];
    free(large);
    *count = small;
    return d;
fail:
    free(d);
    free(large);
    return NULL;
}

int hint_dims_create(int nnodes, int ndims, int dims[])
{
    int st = HINT_SUCCESS;
    int *div = NULL;
    if (nnodes < 1 || ndims < 0 || (ndims > 0 && !dims))
        return HINT_ERR_ARG;
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return HINT_ERR_ARG;
        if (dims[i] > 0)
            fixed *= dims[i];
        else
            nfree++;
        if (fixed > nnodes)
            return HINT_ERR_TOPOLOGY;
    }
    if (nnodes % fixed || (nfree == 0 && fixed != nnodes))
        return HINT_ERR_TOPOLOGY;
    if (nfree == 0)
        return HINT_SUCCESS;
    int m = (int)(nnodes / fixed);
    struct topo_dims_search s = {.k = nfree, .best_spread = -1};
    /* With more free entries than m has prime factors (counted with multiplicity), the extra
       ones are 1 whatever the choice: searching with one 1 at the end is the same problem. */
    int omega = 0;
    for (int x = m, p = 2; x > 1; p++) {
        if ((long long)p * p > x) {
            omega++;
            break;
        }
        while (x % p == 0) {
            x /= p;
            omega++;
        }
    }
    int k_eff = nfree < omega + 1 ? nfree : omega + 1;
    s.k = k_eff;
    div = topo_divisors(m, &s.ndiv);
    if (!div) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    s.div = div;
    topo_dims_search(&s, 0, m, m);
    for (int i = 0, j = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = j < k_eff ? s.best[j++] : 1;
out:
    free(div);
    return st;
}
