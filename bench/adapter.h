/*
 * bench/adapter.h — the thin layer the benchmark is written against, so one source
 * (bench/bench.c) builds against hint (adapter_hint.c) and against MPI libraries
 * (bench/mpi/adapter_mpi.c) and all measure exactly the same thing.
 *
 * Buffers are bytes; reductions are sums of doubles. Every call returns 0 on success.
 */
#ifndef HINT_BENCH_ADAPTER_H
#define HINT_BENCH_ADAPTER_H

#include <stddef.h>

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
int bk_allgather(const void *s, void *r, size_t block);
int bk_alltoall(const void *s, void *r, size_t block);
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

#endif
