/*
 * bench/adapter_hint.c — the benchmark adapter for hint.
 */
#include <stdio.h>
#include <stdlib.h>

#include "bench/adapter.h"
#include "hint.h"

static char library[64];
/* hint's datatype of each block layout (bench/adapter.h); only the strided one is made here */
static hint_type layout_type[BK_NLAYOUTS];

static int make_layout_types(void)
{
    layout_type[BK_CONTIG] = HINT_BYTE;
    int st = hint_type_resized(HINT_DOUBLE, 0, (ptrdiff_t)bk_layout_extent(BK_STRIDED), &layout_type[BK_STRIDED]);
    if (st == HINT_SUCCESS)
        st = hint_type_commit(&layout_type[BK_STRIDED]);
    if (st != HINT_SUCCESS)
        fprintf(stderr, "hint-bench (%s): cannot make the strided layout's datatype: %s\n", library,
                hint_strerror(st));
    return st;
}

int bk_init(int *argc, char ***argv)
{
    snprintf(library, sizeof library, "hint %s", HINT_VERSION_STRING);
    int st = hint_init(argc, argv);
    if (st == HINT_SUCCESS && (st = make_layout_types()) != HINT_SUCCESS)
        bk_finalize(); /* bench.c does not finalize after a failed bk_init */
    return st;
}
static hint_group topo = HINT_GROUP_NULL; /* the neighbourhood collectives' group */

void bk_finalize(void)
{
    if (topo != HINT_GROUP_NULL)
        hint_group_free(&topo);
    hint_type_free(&layout_type[BK_STRIDED]); /* not made (HINT_TYPE_NULL): refused, harmless */
    hint_finalize();
}
void bk_abort(int code) { hint_abort(code); }
const char *bk_library(void) { return library; }
const char *bk_strerror(int status) { return hint_strerror(status); }
int bk_rank(void)
{
    int r;
    hint_group_rank(HINT_WORLD, &r);
    return r;
}
int bk_size(void)
{
    int n;
    hint_group_size(HINT_WORLD, &n);
    return n;
}
double bk_wtime(void) { return hint_wtime(); }
void *bk_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }
void bk_free(void *p) { free(p); }

int bk_set_algorithm(const char *op, const char *name)
{
    return hint_coll_set(op, name ? name : "auto") == HINT_SUCCESS ? 0 : -1;
}

const char *bk_last_algorithm(const char *op)
{
    const char *name = NULL;
    if (hint_coll_last(op, &name) != HINT_SUCCESS || name == NULL)
        return "-";
    return name;
}

int bk_barrier(void) { return hint_barrier(HINT_WORLD); }
int bk_bcast(void *buf, size_t bytes, int root) { return hint_bcast(buf, bytes, HINT_BYTE, root, HINT_WORLD); }
int bk_reduce(const double *s, double *r, size_t count, int root)
{
    return hint_reduce(s, r, count, HINT_DOUBLE, HINT_SUM, root, HINT_WORLD);
}
int bk_allreduce(const double *s, double *r, size_t count)
{
    return hint_allreduce(s, r, count, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
}
int bk_reduce_scatter_block(const double *s, double *r, size_t count)
{
    return hint_reduce_scatter_block(s, r, count, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
}
int bk_gather(const void *s, void *r, size_t block, int root)
{
    return hint_gather(s, block, HINT_BYTE, r, block, HINT_BYTE, root, HINT_WORLD);
}
int bk_scatter(const void *s, void *r, size_t block, int root)
{
    return hint_scatter(s, block, HINT_BYTE, r, block, HINT_BYTE, root, HINT_WORLD);
}
int bk_allgather(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl)
{
    return hint_allgather(s, scount, layout_type[sl], r, rcount, layout_type[rl], HINT_WORLD);
}
int bk_alltoall(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl)
{
    return hint_alltoall(s, scount, layout_type[sl], r, rcount, layout_type[rl], HINT_WORLD);
}
int bk_gatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs, int root)
{
    return hint_gatherv(s, sbytes, HINT_BYTE, r, counts, displs, HINT_BYTE, root, HINT_WORLD);
}
int bk_scatterv(const void *s, const size_t *counts, const size_t *displs, void *r, size_t rbytes, int root)
{
    return hint_scatterv(s, counts, displs, HINT_BYTE, r, rbytes, HINT_BYTE, root, HINT_WORLD);
}
int bk_allgatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs)
{
    return hint_allgatherv(s, sbytes, HINT_BYTE, r, counts, displs, HINT_BYTE, HINT_WORLD);
}
int bk_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc, const size_t *rd)
{
    return hint_alltoallv(s, sc, sd, HINT_BYTE, r, rc, rd, HINT_BYTE, HINT_WORLD);
}
int bk_send(const void *buf, size_t bytes, int dest, int tag)
{
    return hint_send(buf, bytes, HINT_BYTE, dest, tag, HINT_WORLD);
}
int bk_recv(void *buf, size_t bytes, int src, int tag)
{
    return hint_recv(buf, bytes, HINT_BYTE, src, tag, HINT_WORLD, HINT_STATUS_IGNORE);
}

#define BK_WINDOW_MAX 256

int bk_send_window(const void *buf, size_t bytes, int dest, int n)
{
    hint_request r[BK_WINDOW_MAX];
    for (int i = 0; i < n && i < BK_WINDOW_MAX; i++)
        if (hint_isend(buf, bytes, HINT_BYTE, dest, 1, HINT_WORLD, &r[i]) != HINT_SUCCESS)
            return -1;
    return hint_waitall((size_t)(n < BK_WINDOW_MAX ? n : BK_WINDOW_MAX), r, HINT_STATUSES_IGNORE);
}

int bk_recv_window(void *buf, size_t bytes, int src, int n)
{
    hint_request r[BK_WINDOW_MAX];
    for (int i = 0; i < n && i < BK_WINDOW_MAX; i++)
        if (hint_irecv(buf, bytes, HINT_BYTE, src, 1, HINT_WORLD, &r[i]) != HINT_SUCCESS)
            return -1;
    return hint_waitall((size_t)(n < BK_WINDOW_MAX ? n : BK_WINDOW_MAX), r, HINT_STATUSES_IGNORE);
}

int bk_reduce_time(double in, double *min, double *max, double *sum)
{
    int st = hint_allreduce(&in, min, 1, HINT_DOUBLE, HINT_MIN, HINT_WORLD);
    if (st == HINT_SUCCESS)
        st = hint_allreduce(&in, max, 1, HINT_DOUBLE, HINT_MAX, HINT_WORLD);
    if (st == HINT_SUCCESS)
        st = hint_allreduce(&in, sum, 1, HINT_DOUBLE, HINT_SUM, HINT_WORLD);
    return st;
}

/* ---- neighbourhood collectives ---- */

static int topo_reset(void) { return topo != HINT_GROUP_NULL ? hint_group_free(&topo) : HINT_SUCCESS; }

int bk_topo_cart2d(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1}, st = topo_reset();
    if (st == HINT_SUCCESS)
        st = hint_dims_create(bk_size(), 2, dims);
    return st == HINT_SUCCESS ? hint_cart_create(HINT_WORLD, 2, dims, periods, 0, &topo) : st;
}

int bk_topo_graph(int nin, const int *in, int nout, const int *out)
{
    int st = topo_reset();
    return st == HINT_SUCCESS ? hint_graph_create_adjacent(HINT_WORLD, nin, in, nout, out, 0, &topo) : st;
}

int bk_topo_counts(int *nin, int *nout) { return hint_neighbors_count(topo, nin, nout); }

int bk_topo_lists(int *in, int *out)
{
    int nin, nout, kind, st = hint_neighbors_count(topo, &nin, &nout);
    if (st == HINT_SUCCESS)
        st = hint_topo_test(topo, &kind);
    if (st != HINT_SUCCESS || kind != HINT_CART)
        return st == HINT_SUCCESS ? hint_neighbors(topo, nin, in, nout, out) : st;
    for (int d = 0; d < nin / 2 && st == HINT_SUCCESS; d++) {
        st = hint_cart_shift(topo, d, 1, &in[2 * d], &in[2 * d + 1]);
        out[2 * d] = in[2 * d];
        out[2 * d + 1] = in[2 * d + 1];
    }
    return st;
}

int bk_neighbor_allgather(const void *s, size_t bytes, void *r)
{
    return hint_neighbor_allgather(s, bytes, HINT_BYTE, r, bytes, HINT_BYTE, topo);
}

int bk_neighbor_alltoall(const void *s, size_t bytes, void *r)
{
    return hint_neighbor_alltoall(s, bytes, HINT_BYTE, r, bytes, HINT_BYTE, topo);
}

int bk_neighbor_allgatherv(const void *s, size_t sbytes, void *r, const size_t *rc, const size_t *rd)
{
    return hint_neighbor_allgatherv(s, sbytes, HINT_BYTE, r, rc, rd, HINT_BYTE, topo);
}

int bk_neighbor_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc,
                          const size_t *rd)
{
    return hint_neighbor_alltoallv(s, sc, sd, HINT_BYTE, r, rc, rd, HINT_BYTE, topo);
}
