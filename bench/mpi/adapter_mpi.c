/*
 * bench/mpi/adapter_mpi.c — the benchmark adapter (bench/adapter.h) against MPI, so that
 * bench/bench.c builds, unchanged, as hint-bench-openmpi and hint-bench-mpich: the peers that
 * bench/compare runs beside hint. MPI is only ever a benchmark peer; nothing else links it.
 *
 * Mapping: buffers are MPI_BYTE, reductions MPI_DOUBLE with MPI_SUM (MPI_MIN/MPI_MAX for the
 * timing reduction), the world is MPI_COMM_WORLD. MPI counts and displacements are int: a size
 * above INT_MAX is refused with a message (the call returns -1 and bench.c stops the job)
 * rather than truncated. The strided block layout of allgather and alltoall is MPI_DOUBLE
 * resized to its extent (made at init, freed at finalize). Strided on one side and MPI_BYTE on
 * the other is, strictly, a type-signature mismatch in the MPI standard; Open MPI and MPICH
 * match by size on one node, as hint does by design (bytes match anything). Algorithm choice is
 * left to each library's own default selection: bk_set_algorithm accepts only NULL/"auto", and
 * bk_last_algorithm says "-".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "bench/adapter.h"

static char library[64];
static int world_rank, world_size;
/* int copies of the size_t counts/displacements of the v-collectives, sized P at init */
static int *icounts, *idispls, *icounts2, *idispls2;
/* MPI datatype of each block layout (bench/adapter.h); only the strided one is made here */
static MPI_Datatype layout_type[BK_NLAYOUTS];

/* Shorten MPI_Get_library_version's text to "Open MPI 4.1.4" or "MPICH 4.0.2". */
static void name_library(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    const char *p;
    unsigned a, b, c;
    MPI_Get_library_version(v, &len);
    if ((p = strstr(v, "Open MPI v")) && sscanf(p, "Open MPI v%u.%u.%u", &a, &b, &c) == 3)
        snprintf(library, sizeof library, "Open MPI %u.%u.%u", a, b, c);
    else if ((p = strstr(v, "MPICH Version:")) && sscanf(p, "MPICH Version: %u.%u.%u", &a, &b, &c) == 3)
        snprintf(library, sizeof library, "MPICH %u.%u.%u", a, b, c);
    else if ((p = strstr(v, "MPICH Version:")) && sscanf(p, "MPICH Version: %u.%u", &a, &b) == 2)
        snprintf(library, sizeof library, "MPICH %u.%u", a, b);
    else {
        /* some other MPI: its first line, without commas (the CSV separator) */
        snprintf(library, sizeof library, "%.*s", (int)strcspn(v, "\n,"), v);
        if (library[0] == '\0')
            snprintf(library, sizeof library, "MPI");
    }
}

/* A count for MPI, or -1 (with a message) when it does not fit an int. */
static int icount(size_t n, const char *what)
{
    if (n > (size_t)INT_MAX) {
        fprintf(stderr,
                "hint-bench (%s): %s of %zu exceeds INT_MAX (%d); MPI counts are int in this benchmark, "
                "so this size is refused\n",
                library, what, n, INT_MAX);
        return -1;
    }
    return (int)n;
}

static int ok(int mpi_status) { return mpi_status == MPI_SUCCESS ? 0 : -1; }

/* Copy P size_t counts and displacements to int arrays; -1 if any does not fit. */
static int to_int_arrays(const size_t *c, const size_t *d, int *ic, int *id)
{
    for (int p = 0; p < world_size; p++) {
        if ((ic[p] = icount(c[p], "a count")) < 0 || (id[p] = icount(d[p], "a displacement")) < 0)
            return -1;
    }
    return 0;
}

static int make_layout_types(void)
{
    layout_type[BK_CONTIG] = MPI_BYTE;
    int st = MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)bk_layout_extent(BK_STRIDED), &layout_type[BK_STRIDED]);
    if (st == MPI_SUCCESS)
        st = MPI_Type_commit(&layout_type[BK_STRIDED]);
    if (st != MPI_SUCCESS) {
        fprintf(stderr, "hint-bench (%s): cannot make the strided layout's datatype\n", library);
        return -1;
    }
    return 0;
}

int bk_init(int *argc, char ***argv)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return -1;
    /* errors come back as statuses, as they do from hint, instead of aborting inside MPI */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    name_library();
    icounts = malloc(4 * sizeof(int) * (size_t)world_size);
    if (!icounts) {
        fprintf(stderr, "hint-bench (%s): out of memory at start\n", library);
        return -1;
    }
    idispls = icounts + world_size;
    icounts2 = idispls + world_size;
    idispls2 = icounts2 + world_size;
    return make_layout_types();
}

static MPI_Comm topo = MPI_COMM_NULL; /* the neighbourhood collectives' communicator */
static int *nbr_ints;                 /* int counts and displacements of the neighbour v variants */

void bk_finalize(void)
{
    if (topo != MPI_COMM_NULL)
        MPI_Comm_free(&topo);
    free(nbr_ints);
    nbr_ints = NULL;
    free(icounts);
    icounts = NULL;
    MPI_Type_free(&layout_type[BK_STRIDED]);
    MPI_Finalize();
}
void bk_abort(int code) { MPI_Abort(MPI_COMM_WORLD, code); }
const char *bk_library(void) { return library; }
int bk_rank(void) { return world_rank; }
int bk_size(void) { return world_size; }
double bk_wtime(void) { return MPI_Wtime(); }
/* plain malloc, as hint's adapter: the benchmark measures ordinary heap buffers */
void *bk_alloc(size_t bytes) { return malloc(bytes ? bytes : 1); }
void bk_free(void *p) { free(p); }

/* The peers run their own default algorithm selection; only "auto" is accepted. */
int bk_set_algorithm(const char *op, const char *name)
{
    (void)op;
    return name == NULL || strcmp(name, "auto") == 0 ? 0 : -1;
}

const char *bk_strerror(int status)
{
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(status, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", status);
    return text;
}

const char *bk_last_algorithm(const char *op)
{
    (void)op;
    return "-";
}

int bk_barrier(void) { return ok(MPI_Barrier(MPI_COMM_WORLD)); }

int bk_bcast(void *buf, size_t bytes, int root)
{
    int n = icount(bytes, "bcast bytes");
    return n < 0 ? -1 : ok(MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD));
}

int bk_reduce(const double *s, double *r, size_t count, int root)
{
    int n = icount(count, "reduce count");
    return n < 0 ? -1 : ok(MPI_Reduce(s, r, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD));
}

int bk_allreduce(const double *s, double *r, size_t count)
{
    int n = icount(count, "allreduce count");
    return n < 0 ? -1 : ok(MPI_Allreduce(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
}

int bk_reduce_scatter_block(const double *s, double *r, size_t count)
{
    int n = icount(count, "reduce_scatter_block count");
    return n < 0 ? -1 : ok(MPI_Reduce_scatter_block(s, r, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
}

int bk_gather(const void *s, void *r, size_t block, int root)
{
    int n = icount(block, "gather block");
    return n < 0 ? -1 : ok(MPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, MPI_COMM_WORLD));
}

int bk_scatter(const void *s, void *r, size_t block, int root)
{
    int n = icount(block, "scatter block");
    return n < 0 ? -1 : ok(MPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, MPI_COMM_WORLD));
}

int bk_allgather(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl)
{
    int sn = icount(scount, "allgather send count"), rn = icount(rcount, "allgather receive count");
    if (sn < 0 || rn < 0)
        return -1;
    return ok(MPI_Allgather(s, sn, layout_type[sl], r, rn, layout_type[rl], MPI_COMM_WORLD));
}

int bk_alltoall(const void *s, size_t scount, enum bk_layout sl, void *r, size_t rcount, enum bk_layout rl)
{
    int sn = icount(scount, "alltoall send count"), rn = icount(rcount, "alltoall receive count");
    if (sn < 0 || rn < 0)
        return -1;
    return ok(MPI_Alltoall(s, sn, layout_type[sl], r, rn, layout_type[rl], MPI_COMM_WORLD));
}

int bk_gatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs, int root)
{
    int n = icount(sbytes, "gatherv bytes");
    if (n < 0 || to_int_arrays(counts, displs, icounts, idispls) != 0)
        return -1;
    return ok(MPI_Gatherv(s, n, MPI_BYTE, r, icounts, idispls, MPI_BYTE, root, MPI_COMM_WORLD));
}

int bk_scatterv(const void *s, const size_t *counts, const size_t *displs, void *r, size_t rbytes, int root)
{
    int n = icount(rbytes, "scatterv bytes");
    if (n < 0 || to_int_arrays(counts, displs, icounts, idispls) != 0)
        return -1;
    return ok(MPI_Scatterv(s, icounts, idispls, MPI_BYTE, r, n, MPI_BYTE, root, MPI_COMM_WORLD));
}

int bk_allgatherv(const void *s, size_t sbytes, void *r, const size_t *counts, const size_t *displs)
{
    int n = icount(sbytes, "allgatherv bytes");
    if (n < 0 || to_int_arrays(counts, displs, icounts, idispls) != 0)
        return -1;
    return ok(MPI_Allgatherv(s, n, MPI_BYTE, r, icounts, idispls, MPI_BYTE, MPI_COMM_WORLD));
}

int bk_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc, const size_t *rd)
{
    if (to_int_arrays(sc, sd, icounts, idispls) != 0 || to_int_arrays(rc, rd, icounts2, idispls2) != 0)
        return -1;
    return ok(MPI_Alltoallv(s, icounts, idispls, MPI_BYTE, r, icounts2, idispls2, MPI_BYTE, MPI_COMM_WORLD));
}

int bk_send(const void *buf, size_t bytes, int dest, int tag)
{
    int n = icount(bytes, "send bytes");
    return n < 0 ? -1 : ok(MPI_Send(buf, n, MPI_BYTE, dest, tag, MPI_COMM_WORLD));
}

int bk_recv(void *buf, size_t bytes, int src, int tag)
{
    int n = icount(bytes, "receive bytes");
    return n < 0 ? -1 : ok(MPI_Recv(buf, n, MPI_BYTE, src, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
}

/* Same window rule as adapter_hint.c: at most BK_WINDOW_MAX requests, tag 1. */
#define BK_WINDOW_MAX 256

/* MPICH defines MPI_STATUSES_IGNORE as (MPI_Status *)1, which gcc 12 takes for a zero-sized
   array passed to MPI_Waitall (-Wstringop-overflow, a known false positive). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif

int bk_send_window(const void *buf, size_t bytes, int dest, int n)
{
    MPI_Request r[BK_WINDOW_MAX];
    int c = icount(bytes, "send bytes"), k = n < BK_WINDOW_MAX ? n : BK_WINDOW_MAX;
    if (c < 0)
        return -1;
    for (int i = 0; i < k; i++)
        if (MPI_Isend(buf, c, MPI_BYTE, dest, 1, MPI_COMM_WORLD, &r[i]) != MPI_SUCCESS)
            return -1;
    return ok(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
}

int bk_recv_window(void *buf, size_t bytes, int src, int n)
{
    MPI_Request r[BK_WINDOW_MAX];
    int c = icount(bytes, "receive bytes"), k = n < BK_WINDOW_MAX ? n : BK_WINDOW_MAX;
    if (c < 0)
        return -1;
    for (int i = 0; i < k; i++)
        if (MPI_Irecv(buf, c, MPI_BYTE, src, 1, MPI_COMM_WORLD, &r[i]) != MPI_SUCCESS)
            return -1;
    return ok(MPI_Waitall(k, r, MPI_STATUSES_IGNORE));
}

int bk_reduce_time(double in, double *min, double *max, double *sum)
{
    int st = MPI_Allreduce(&in, min, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    if (st == MPI_SUCCESS)
        st = MPI_Allreduce(&in, max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (st == MPI_SUCCESS)
        st = MPI_Allreduce(&in, sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return ok(st);
}

/* ---- neighbourhood collectives: MPI_Cart_create / MPI_Dist_graph_create_adjacent ---- */

/* Room for the v variants' int counts of the topology just made: 4 arrays of max(indegree, outdegree) + 1. */
static int topo_ready(void)
{
    int nin, nout, st = bk_topo_counts(&nin, &nout);
    size_t n = (size_t)(nin > nout ? nin : nout) + 1;
    free(nbr_ints);
    nbr_ints = st == 0 ? malloc(4 * n * sizeof(int)) : NULL;
    return nbr_ints ? 0 : -1;
}

/* MPI_UNWEIGHTED through a volatile: Open MPI's is a small constant address, which GCC's
   -Wstringop-overread takes for an array of no bytes. */
static int *unweighted(void)
{
    int *volatile w = MPI_UNWEIGHTED;
    return w;
}

static void topo_reset(void)
{
    if (topo != MPI_COMM_NULL)
        MPI_Comm_free(&topo);
}

int bk_topo_cart2d(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    topo_reset();
    if (ok(MPI_Dims_create(world_size, 2, dims)) != 0 ||
        ok(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &topo)) != 0)
        return -1;
    MPI_Comm_set_errhandler(topo, MPI_ERRORS_RETURN);
    return topo_ready();
}

int bk_topo_graph(int nin, const int *in, int nout, const int *out)
{
    topo_reset();
    if (ok(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, nin, in, unweighted(), nout, out, unweighted(),
                                          MPI_INFO_NULL, 0, &topo)) != 0)
        return -1;
    MPI_Comm_set_errhandler(topo, MPI_ERRORS_RETURN);
    return topo_ready();
}

int bk_topo_counts(int *nin, int *nout)
{
    int kind, weighted;
    if (ok(MPI_Topo_test(topo, &kind)) != 0)
        return -1;
    if (kind == MPI_CART) {
        int nd;
        if (ok(MPI_Cartdim_get(topo, &nd)) != 0)
            return -1;
        *nin = *nout = 2 * nd;
        return 0;
    }
    return ok(MPI_Dist_graph_neighbors_count(topo, nin, nout, &weighted));
}

int bk_topo_lists(int *in, int *out)
{
    int kind, nin, nout;
    if (ok(MPI_Topo_test(topo, &kind)) != 0 || bk_topo_counts(&nin, &nout) != 0)
        return -1;
    if (kind != MPI_CART)
        return ok(MPI_Dist_graph_neighbors(topo, nin, in, unweighted(), nout, out, unweighted()));
    for (int d = 0; d < nin / 2; d++) {
        if (ok(MPI_Cart_shift(topo, d, 1, &in[2 * d], &in[2 * d + 1])) != 0)
            return -1;
        out[2 * d] = in[2 * d];
        out[2 * d + 1] = in[2 * d + 1];
    }
    return 0;
}

/* n size_t counts and displacements as ints in pair `which` (0 or 1) of nbr_ints; -1 if one does not fit. */
static int nbr_int_arrays(int n, const size_t *c, const size_t *d, int which, int **ic, int **id)
{
    int nin, nout;
    if (bk_topo_counts(&nin, &nout) != 0)
        return -1;
    size_t stride = (size_t)(nin > nout ? nin : nout) + 1;
    *ic = nbr_ints + (size_t)(2 * which) * stride;
    *id = *ic + stride;
    for (int k = 0; k < n; k++)
        if (((*ic)[k] = icount(c[k], "a count")) < 0 || ((*id)[k] = icount(d[k], "a displacement")) < 0)
            return -1;
    return 0;
}

int bk_neighbor_allgather(const void *s, size_t bytes, void *r)
{
    int n = icount(bytes, "neighbor_allgather block");
    return n < 0 ? -1 : ok(MPI_Neighbor_allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, topo));
}

int bk_neighbor_alltoall(const void *s, size_t bytes, void *r)
{
    int n = icount(bytes, "neighbor_alltoall block");
    return n < 0 ? -1 : ok(MPI_Neighbor_alltoall(s, n, MPI_BYTE, r, n, MPI_BYTE, topo));
}

int bk_neighbor_allgatherv(const void *s, size_t sbytes, void *r, const size_t *rc, const size_t *rd)
{
    int nin, nout, *ic, *id, n = icount(sbytes, "neighbor_allgatherv bytes");
    if (n < 0 || bk_topo_counts(&nin, &nout) != 0 || nbr_int_arrays(nin, rc, rd, 0, &ic, &id) != 0)
        return -1;
    return ok(MPI_Neighbor_allgatherv(s, n, MPI_BYTE, r, ic, id, MPI_BYTE, topo));
}

int bk_neighbor_alltoallv(const void *s, const size_t *sc, const size_t *sd, void *r, const size_t *rc,
                          const size_t *rd)
{
    int nin, nout, *isc, *isd, *irc, *ird;
    if (bk_topo_counts(&nin, &nout) != 0 || nbr_int_arrays(nout, sc, sd, 0, &isc, &isd) != 0 ||
        nbr_int_arrays(nin, rc, rd, 1, &irc, &ird) != 0)
        return -1;
    return ok(MPI_Neighbor_alltoallv(s, isc, isd, MPI_BYTE, r, irc, ird, MPI_BYTE, topo));
}
