/*
 * collectives/order/order.h — copy orders over the P x P block matrix of an alltoall, as pure
 * index arithmetic (no processes, unit-tested alone).
 *
 * Block (src, dst) is the block rank src sends to rank dst: it lives at src's send buffer +
 * dst * block and goes to dst's receive buffer + src * block. An order numbers all P*P blocks
 * (seq, 1-based, the traversal order) and gives each rank the list of blocks it copies, sorted
 * by seq (the HINT paper's Alg. 1 and 2; Fig. 5 for P = 4 is reproduced by the tests):
 *   row      rank r fills its own receive buffer: blocks (0..P-1, r), seq = r*P + src + 1
 *   column   rank r pushes its own send buffer: blocks (r, 0..P-1), seq = r*P + dst + 1
 *   hilbert  seq = 1 + the Hilbert index of (src, dst) (row = src, column = dst); for P a power
 *            of two, rank r takes sub-grid r of Alg. 1 (rows next_pof2(sqrt P), columns P/rows,
 *            numbered row-major); for any other P the generalised Hilbert curve of a P x P
 *            rectangle ("gilbert") is cut into P consecutive segments of P blocks.
 */
#ifndef HINT_COLL_ORDER_H
#define HINT_COLL_ORDER_H

#include <stdint.h>

enum order_kind { ORDER_ROW = 0, ORDER_COLUMN = 1, ORDER_HILBERT = 2, ORDER_NKINDS };

struct order_tuple {
    uint32_t seq;  /* position in the traversal, 1-based */
    uint32_t src;  /* the block's sender (row of the matrix) */
    uint32_t dst;  /* the block's receiver (column) */
};

/* The sequence number of every block: grid[src * P + dst] (1-based). HINT_ERR_ARG for P < 1. */
int order_grid(int kind, int P, uint32_t *grid);
/* The blocks rank copies, sorted by seq: exactly P of them. */
int order_tuples(int kind, int P, int rank, struct order_tuple *out);
const char *order_name(int kind);

/* (x, y) of position d on the Hilbert curve of an n x n grid, n a power of two. */
void hilbert_d2xy(uint32_t n, uint32_t d, uint32_t *x, uint32_t *y);
/* Visit the cells of a w x h rectangle along a generalised Hilbert curve (any w, h >= 1):
   fn(x, y, arg) for each cell in curve order. */
void gilbert_walk(int w, int h, void (*fn)(int x, int y, void *arg), void *arg);

#endif
