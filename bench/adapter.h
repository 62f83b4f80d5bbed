/*
 * bench/adapter.h — the thin layer the benchmark is written against, so one source
 * (bench/bench.c) builds against hint (adapter_hint.c) and against MPI libraries
 * (bench/mpi/adapter_mpi.c) and all measure exactly the same thing.
 *
 * Buffers are bytes; reductions are sums of doubles. Every call returns 0 on success.
 * allgather and alltoall also take a block layout per side (enum bk_layout), so that the same
 * benchmark measures derived datatypes: the geometry of each layout is defined here, once, and
 * each adapter maps a layout to its library's datatype, made at bk_init and freed at bk_finalize.
 */
#ifndef HINT_BENCH_ADAPTER_H
#define HINT_BENCH_ADAPTER_H

#include <stddef.h>

/* How a block of B data bytes lies in a buffer: `B / bk_layout_size` elements, each spanning
   `bk_layout_extent` bytes, so block d of a buffer starts at byte d * bk_block_span(layout, B). */
enum bk_layout {
    BK_CONTIG,  /* B bytes back to back: B elements of a byte (HINT_BYTE, MPI_BYTE) */
    BK_STRIDED, /* B/8 doubles each followed by an 8-byte hole: a double resized to extent 16 */
    BK_NLAYOUTS
};

/* data bytes of one element of a layout; block sizes must be multiples of it */
static inline size_t bk_layout_size(enum bk_layout l) { return l == BK_STRIDED ? 8 : 1; }
/* bytes from one element to the next; those past its data bytes are a hole the library must not touch */
static inline size_t bk_layout_extent(enum bk_layout l) { return l == BK_STRIDED ? 16 : 1; }
/* elements in a block of `bytes` data bytes: the count the collectives are called with */
static inline size_t bk_block_count(enum bk_layout l, size_t bytes) { return bytes / bk_layout_size(l); }
/* bytes a block of `bytes` data bytes spans in its buffer, holes included */
static inline size_t bk_block_span(enum bk_layout l, size_t bytes)
{
    return bk_block_count(l, bytes) * bk_layout_extent(l);
}

int bk_init(int *argc, char ***argv);
void bk_finalize(void);
void bk_abort(int code);
const char *bk_library(void); /* "hint 0.1.0", "Open MPI 4.1.4", ... */
const char *bk_strerror(int status); /* what a failed call's status means */
int bk_rank(void);
int bk_size(void);
double bk_wtime(void);
void *bk_alloc(size_t bytes);
void bk_free(void *p);

/* algorithm control where the library has it: NULL/"auto" = default; -1 if unknown name */
int bk_set_algorithm(const char *op, const char *name);
const char *bk_last_algorithm(const char *op); /* "-" when the library does not say */

int bk_barrier(void);
int bk_bcast(void *buf, size_t bytes, int root);
int bk_reduce(const double *s, double *r, size_t count, int root);
int bk_allreduce(const double *s, double *r, size_t count);
int bk_reduce_scatter_block(const double *s, double *r, size_t count);
int bk_gather(const void *s, void *r, size_t block, int root);
int bk_scatter(const void *s, void *r, size_t block, int root);
/* scount elements of layout sl per send block, rcount of rl per receive block (both BK_CONTIG:
   blocks of plain bytes); the data bytes of a block must agree on both sides */
int bk_allgather(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl);
int bk_alltoall(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl);
int bk_gatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs, int root);
int bk_scatterv(const void *s, const size_t *counts, const size_t *displs, void *r, size_t rbytes, int root);
int bk_allgatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs);
int bk_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc, const size_t *rd);
int bk_send(const void *buf, size_t bytes, int dest, int tag);
int bk_recv(void *buf, size_t bytes, int src, int tag);
/* post `n` sends (or receives) of bytes each to/from peer and wait for all */
int bk_send_window(const void *buf, size_t bytes, int dest, int n);
int bk_recv_window(void *buf, size_t bytes, int src, int n);
/* min, max and sum of one double over all ranks, on every rank */
int bk_reduce_time(double in, double *min, double *max, double *sum);

/* Neighbourhood collectives (hint-bench's neighbor_* operations) run on the topology made last
   by bk_topo_cart2d (a 2-D periodic cart, dims from the library's dims_create(P, 2)) or
   bk_topo_graph (a distributed graph from this rank's adjacent lists); bk_topo_lists gives the
   lists in the order the library's neighbourhood collectives use them (a cart: per dimension the
   -1 neighbour, then the +1 one). Blocks are bytes; the v variants' counts and displacements are
   bytes too, one per neighbour. The topology is freed by the next bk_topo_* or bk_finalize. */
int bk_topo_cart2d(void);
int bk_topo_graph(int nin, const int *in, int nout, const int *out);
int bk_topo_counts(int *nin, int *nout);
int bk_topo_lists(int *in, int *out);
int bk_neighbor_allgather(const void *s, size_t bytes, void *r);
int bk_neighbor_alltoall(const void *s, size_t bytes, void *r);
int bk_neighbor_allgatherv(const void *s, size_t sbytes, void *r, const size_t *rc, const size_t *rd);
int bk_neighbor_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc,
                          const size_t *rd);

#endif
