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
 *   morton   seq = 1 + the Z value of (x = src, y = dst) (the Morton paper, sec. 2.1-2.2): the
 *            recv-buffer matrix has one row per receiver (y = dst) and one column per sender
 *            (x = src), so the Z curve's fast axis walks along one receive buffer. Rank r takes
 *            segment r of the curve, Z values [r*P, r*P + P). For P a power of two the Z value
 *            is the bit interleave (x in the even bits, y in the odd bits; decoded with pext
 *            when the CPU has BMI2); for any other P it is the balanced Z curve of sec. 2.2
 *            (morton_zvalue below), which equals the interleave when P is a power of two.
 */
#ifndef HINT_COLL_ORDER_H
#define HINT_COLL_ORDER_H

#include <stdint.h>

enum order_kind { ORDER_ROW = 0, ORDER_COLUMN = 1, ORDER_HILBERT = 2, ORDER_MORTON = 3, ORDER_NKINDS };

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
/* The Morton paper's NUMA-aware schedule (§2.4) for rank, given every rank's socket: with s
   sockets, step j copies the blocks from socket k + j (mod s) into rank's own socket k, and each
   bunch (q_from senders x q_k receivers) is cut along its Morton curve into q_k equal segments,
   one per rank of the socket (in rank order). So every rank writes only receive buffers of its
   own socket, also when sockets hold unequal numbers of ranks (then the bunches are rectangles:
   segment i of step j is q_from blocks, P over all steps). P tuples, in step order. */
int order_numa_tuples(int P, const int sock[], int rank, struct order_tuple *out);

/* (x, y) of position d on the Hilbert curve of an n x n grid, n a power of two. */
void hilbert_d2xy(uint32_t n, uint32_t d, uint32_t *x, uint32_t *y);
/* Visit the cells of a w x h rectangle along a generalised Hilbert curve (any w, h >= 1):
   fn(x, y, arg) for each cell in curve order. */
void gilbert_walk(int w, int h, void (*fn)(int x, int y, void *arg), void *arg);

/* Morton (Z) order, morton.c. Coordinates are below 2^16 and codes below 2^32 (P <= 65535).
   The interleave: bit 2i of the code is bit i of x, bit 2i+1 is bit i of y (the paper's
   x = pext(code, 0x55555555), y = pext(code, 0xAAAAAAAA); its example x = 2, y = 1 gives 6).
   The plain functions pick BMI2 pdep/pext at run time (__builtin_cpu_supports) and the
   portable shift-and-mask code elsewhere; the _loop and _bmi2 variants are each path alone
   (the _bmi2 ones return 0 and leave the outputs alone when the build or the CPU lacks BMI2). */
uint32_t morton_encode(uint32_t x, uint32_t y);
void morton_decode(uint32_t code, uint32_t *x, uint32_t *y);
uint32_t morton_encode_loop(uint32_t x, uint32_t y);
void morton_decode_loop(uint32_t code, uint32_t *x, uint32_t *y);
int morton_encode_bmi2(uint32_t x, uint32_t y, uint32_t *code);
int morton_decode_bmi2(uint32_t code, uint32_t *x, uint32_t *y);
int morton_have_bmi2(void);
/* The balanced Z curve of sec. 2.2 over a matrix of w columns (x) and h rows (y), w, h >= 1:
   split the longer dimension in two, rows on a tie (so that a 2^k square gives the interleave),
   the top / left part M0 taking floor(n / 2); Z(M, x, y) = Z(M0, x, y) inside M0, else
   |M0| + Z(M1, x, y). morton_coords is the inverse (the paper's "binary search" from a Z value,
   2 log2 P steps). Both are O(log w + log h). */
uint32_t morton_zvalue(uint32_t w, uint32_t h, uint32_t x, uint32_t y);
void morton_coords(uint32_t w, uint32_t h, uint32_t z, uint32_t *x, uint32_t *y);
/* Rank's segment of the P x P Z curve: the P blocks with Z values [rank*P, rank*P + P), in
   curve order, as tuples (seq = Z + 1, src = x, dst = y); computed without the P^2 grid
   (interleave decode for P a power of two, morton_coords otherwise). HINT_ERR_ARG for bad
   arguments or P > 65535. */
int morton_segment(int P, int rank, struct order_tuple *out);

#endif
