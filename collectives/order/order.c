/*
 * collectives/order/order.c — the copy orders of the HINT alltoall (see order.h): sequence
 * numbers over the block matrix, the split of blocks among ranks, and each rank's sorted list.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/order/order.h"
#include "hint.h"

static const char *const names[ORDER_NKINDS] = {"row", "column", "hilbert", "morton"};

const char *order_name(int kind) { return kind >= 0 && kind < ORDER_NKINDS ? names[kind] : "?"; }

static int is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

struct walk {
    uint32_t *grid;
    int P;
    uint32_t next;
};

/* gilbert_walk over a P x P rectangle: x = src (row), y = dst (column) */
static void number_cell(int x, int y, void *arg)
{
    struct walk *w = arg;
    w->grid[(size_t)x * (size_t)w->P + (size_t)y] = ++w->next;
}

int order_grid(int kind, int P, uint32_t *grid)
{
    if (P < 1 || grid == NULL || kind < 0 || kind >= ORDER_NKINDS)
        return HINT_ERR_ARG;
    uint32_t n = (uint32_t)P;
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t d = 0; d < n; d++) {
            if (kind == ORDER_ROW)
                grid[s * n + d] = d * n + s + 1;
            else if (kind == ORDER_COLUMN)
                grid[s * n + d] = s * n + d + 1;
        }
    if (kind == ORDER_MORTON) {
        if (P > 65535)
            return HINT_ERR_ARG;
        for (uint32_t z = 0; z < n * n; z++) {
            uint32_t x, y;
            morton_coords(n, n, z, &x, &y); /* the interleave itself when P is a power of two */
            grid[(size_t)x * n + y] = z + 1;
        }
        return HINT_SUCCESS;
    }
    if (kind != ORDER_HILBERT)
        return HINT_SUCCESS;
    if (is_pow2(P)) {
        /* the classic curve's first step alternates axis with the grid's order; take the one
           whose first step goes along a row (to the next destination), as Fig. 5 does */
        uint32_t x1 = 0, y1 = 0;
        if (n > 1)
            hilbert_d2xy(n, 1, &x1, &y1);
        bool transpose = x1 == 1;
        for (uint32_t d = 0; d < n * n; d++) {
            uint32_t x, y;
            hilbert_d2xy(n, d, &x, &y);
            grid[transpose ? y * n + x : x * n + y] = d + 1;
        }
    } else {
        struct walk w = {grid, P, 0};
        gilbert_walk(P, P, number_cell, &w);
    }
    return HINT_SUCCESS;
}

static int by_seq(const void *a, const void *b)
{
    const struct order_tuple *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Alg. 1's sub-grid of rank for P a power of two: rows [r0, r0 + rows), columns [c0, c0 + cols). */
static void hilbert_bounds(int P, int rank, int *r0, int *rows, int *c0, int *cols)
{
    int sq = 1;
    while (sq * sq < P)
        sq++;
    int nr = 1;
    while (nr < sq)
        nr *= 2; /* next power of two >= sqrt(P) */
    *rows = nr;
    *cols = P / nr;
    int per_band = P / *cols; /* sub-grids across one band of rows */
    *r0 = (rank / per_band) * nr;
    *c0 = (rank % per_band) * *cols;
}

int order_tuples(int kind, int P, int rank, struct order_tuple *out)
{
    if (P < 1 || rank < 0 || rank >= P || out == NULL || kind < 0 || kind >= ORDER_NKINDS)
        return HINT_ERR_ARG;
    if (kind == ORDER_MORTON)
        return morton_segment(P, rank, out); /* already in curve order, no P x P grid */
    uint32_t *grid = malloc((size_t)P * (size_t)P * sizeof *grid);
    if (grid == NULL)
        return HINT_ERR_NOMEM;
    order_grid(kind, P, grid);
    int n = 0;
    if (kind == ORDER_ROW || kind == ORDER_COLUMN) {
        for (int i = 0; i < P; i++) {
            int s = kind == ORDER_ROW ? i : rank, d = kind == ORDER_ROW ? rank : i;
            out[n++] = (struct order_tuple){grid[(size_t)s * P + d], (uint32_t)s, (uint32_t)d};
        }
    } else if (is_pow2(P)) {
        int r0, rows, c0, cols;
        hilbert_bounds(P, rank, &r0, &rows, &c0, &cols);
        for (int s = r0; s < r0 + rows; s++)
            for (int d = c0; d < c0 + cols; d++)
                out[n++] = (struct order_tuple){grid[(size_t)s * P + d], (uint32_t)s, (uint32_t)d};
    } else {
        /* segment rank of the curve: seq in (rank*P, (rank+1)*P] */
        for (int s = 0; s < P; s++)
            for (int d = 0; d < P; d++) {
                uint32_t q = grid[(size_t)s * P + d];
                if (q > (uint32_t)rank * (uint32_t)P && q <= (uint32_t)(rank + 1) * (uint32_t)P)
                    out[n++] = (struct order_tuple){q, (uint32_t)s, (uint32_t)d};
            }
    }
    free(grid);
    qsort(out, (size_t)n, sizeof *out, by_seq);
    return n == P ? HINT_SUCCESS : HINT_ERR_INTERNAL;
}

static int by_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

int order_numa_tuples(int P, const int sock[], int rank, struct order_tuple *out)
{
    if (P < 1 || sock == NULL || rank < 0 || rank >= P || out == NULL)
        return HINT_ERR_ARG;
    int st = HINT_ERR_NOMEM;
    int *ids = malloc((size_t)P * sizeof *ids), *idx = malloc((size_t)P * sizeof *idx);
    int *members = malloc((size_t)P * sizeof *members), *cnt = calloc((size_t)P, sizeof *cnt);
    int *start = calloc((size_t)P + 1, sizeof *start);
    if (!ids || !idx || !members || !cnt || !start)
        goto out;
    memcpy(ids, sock, (size_t)P * sizeof *ids);
    qsort(ids, (size_t)P, sizeof *ids, by_int);
    int s = 0;
    for (int p = 0; p < P; p++)
        if (p == 0 || ids[p] != ids[p - 1])
            ids[s++] = ids[p]; /* distinct sockets, sorted */
    for (int p = 0; p < P; p++) {
        int k = 0;
        while (ids[k] != sock[p])
            k++;
        idx[p] = k;
        cnt[k]++;
    }
    for (int k = 0; k < s; k++)
        start[k + 1] = start[k] + cnt[k];
    int *fill = ids; /* the socket ids are no longer needed */
    memset(fill, 0, (size_t)P * sizeof *fill);
    for (int p = 0; p < P; p++)
        members[start[idx[p]] + fill[idx[p]]++] = p; /* socket k's ranks, in rank order */
    int k = idx[rank], i = 0, qk = cnt[k];
    while (members[start[k] + i] != rank)
        i++;
    /* step j: the qf x qk bunch from socket k + j; its Morton curve cut into qk equal segments
       of qf blocks, segment i this rank's (sum of qf over the steps: P tuples) */
    int n = 0;
    uint32_t base = 0;
    for (int j = 0; j < s; j++) {
        int from = (k + j) % s, qf = cnt[from];
        for (int z = i * qf; z < (i + 1) * qf; z++) {
            uint32_t x, y;
            morton_coords((uint32_t)qf, (uint32_t)qk, (uint32_t)z, &x, &y);
            out[n++] = (struct order_tuple){base + (uint32_t)z + 1, (uint32_t)members[start[from] + (int)x],
                                            (uint32_t)members[start[k] + (int)y]};
        }
        base += (uint32_t)(qf * qk);
    }
    st = n == P ? HINT_SUCCESS : HINT_ERR_INTERNAL;
out:
    free(ids);
    free(idx);
    free(members);
    free(cnt);
    free(start);
    return st;
}
