/*
 * bench/mpi/hint_on_mpi.h — the hint calls examples/fft3d.c uses, on top of MPI, so that the
 * example's one source builds against Open MPI and MPICH (bench/fft3d/meson.build, with
 * -DHINT_ON_MPI) and a side-by-side run times exactly the same program. Only what the example
 * calls is here; it is not a general hint-to-MPI layer.
 *
 * Mapping: a hint_group is an MPI_Comm (errors returned, not fatal), a hint_type an MPI_Datatype,
 * statuses are MPI error codes (HINT_SUCCESS is MPI_SUCCESS). size_t counts, displacements and
 * subarray shapes become int: a value above INT_MAX fails the call with MPI_ERR_COUNT and a
 * message instead of being truncated. hint_coll_last has no MPI counterpart: it says nothing.
 * MPI is only ever a benchmark peer: libhint never includes this.
 */
#ifndef HINT_BENCH_HINT_ON_MPI_H
#define HINT_BENCH_HINT_ON_MPI_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

typedef MPI_Comm hint_group;
typedef MPI_Datatype hint_type;
typedef MPI_Op hint_op;

#define HINT_SUCCESS MPI_SUCCESS
#define HINT_ERR_NOMEM MPI_ERR_NO_MEM
#define HINT_ERR_INTERNAL MPI_ERR_INTERN
#define HINT_WORLD MPI_COMM_WORLD
#define HINT_GROUP_NULL MPI_COMM_NULL
#define HINT_TYPE_NULL MPI_DATATYPE_NULL
#define HINT_INT MPI_INT
#define HINT_DOUBLE MPI_DOUBLE
#define HINT_COMPLEX_DOUBLE MPI_C_DOUBLE_COMPLEX
#define HINT_MIN MPI_MIN
#define HINT_MAX MPI_MAX
#define HINT_ORDER_C MPI_ORDER_C

/* "Open MPI 4.1.4" or "MPICH 4.0.2", from MPI_Get_library_version */
static inline const char *hint_on_mpi_library(void)
{
    static char name[64];
    char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    unsigned a, b, c;
    const char *p;
    MPI_Get_library_version(v, &len);
    if ((p = strstr(v, "Open MPI v")) && sscanf(p, "Open MPI v%u.%u.%u", &a, &b, &c) == 3)
        snprintf(name, sizeof name, "Open MPI %u.%u.%u", a, b, c);
    else if ((p = strstr(v, "MPICH Version:")) && sscanf(p, "MPICH Version: %u.%u.%u", &a, &b, &c) == 3)
        snprintf(name, sizeof name, "MPICH %u.%u.%u", a, b, c);
    else
        snprintf(name, sizeof name, "%.*s", (int)strcspn(v, "\n,"), v);
    return name;
}

/* n as an int for MPI, or -1 with a message */
static inline int hint_on_mpi_int(size_t n)
{
    if (n > (size_t)INT_MAX) {
        fprintf(stderr, "fft3d (%s): %zu exceeds INT_MAX, MPI's counts are int\n", hint_on_mpi_library(), n);
        return -1;
    }
    return (int)n;
}

/* Copies k size_t values to the int array slot `which` (grown as needed); NULL when one does not fit. */
static inline int *hint_on_mpi_ints(const size_t *v, int k, int which)
{
    static int *slot[4];
    static int cap[4];
    if (!v)
        return NULL;
    if (cap[which] < k) {
        int *p = realloc(slot[which], (size_t)k * sizeof(int));
        if (!p)
            return NULL;
        slot[which] = p, cap[which] = k;
    }
    for (int i = 0; i < k; i++)
        if ((slot[which][i] = hint_on_mpi_int(v[i])) < 0)
            return NULL;
    return slot[which];
}

static inline int hint_on_mpi_size(MPI_Comm g)
{
    int n = 0;
    MPI_Comm_size(g, &n);
    return n;
}

static inline int hint_init(int *argc, char ***argv)
{
    int st = MPI_Init(argc, argv);
    if (st == MPI_SUCCESS)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    return st;
}
static inline int hint_finalize(void) { return MPI_Finalize(); }
static inline const char *hint_strerror(int st)
{
    static char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(st, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error %d", st);
    return text;
}
static inline double hint_wtime(void) { return MPI_Wtime(); }
static inline int hint_group_rank(hint_group g, int *r) { return MPI_Comm_rank(g, r); }
static inline int hint_group_size(hint_group g, int *n) { return MPI_Comm_size(g, n); }
static inline int hint_group_split(hint_group g, int color, int key, hint_group *out)
{
    return MPI_Comm_split(g, color, key, out);
}
static inline int hint_group_free(hint_group *g) { return MPI_Comm_free(g); }
static inline int hint_dims_create(int n, int nd, int dims[]) { return MPI_Dims_create(n, nd, dims); }
static inline int hint_cart_create(hint_group g, int nd, const int dims[], const int periods[], int reorder,
                                   hint_group *out)
{
    return MPI_Cart_create(g, nd, dims, periods, reorder, out);
}
static inline int hint_cart_coords(hint_group g, int rank, int nd, int coords[])
{
    return MPI_Cart_coords(g, rank, nd, coords);
}
static inline int hint_coll_last(const char *op, const char **alg)
{
    (void)op, (void)alg;
    return MPI_ERR_OTHER; /* MPI does not say which algorithm it ran */
}

static inline int hint_type_subarray(int nd, const size_t sizes[], const size_t subsizes[], const size_t starts[],
                                     int order, hint_type old, hint_type *out)
{
    int s[8], sub[8], st[8];
    if (nd < 1 || nd > 8)
        return MPI_ERR_DIMS;
    for (int i = 0; i < nd; i++)
        if ((s[i] = hint_on_mpi_int(sizes[i])) < 0 || (sub[i] = hint_on_mpi_int(subsizes[i])) < 0 ||
            (st[i] = hint_on_mpi_int(starts[i])) < 0)
            return MPI_ERR_COUNT;
    return MPI_Type_create_subarray(nd, s, sub, st, order, old, out);
}
static inline int hint_type_resized(hint_type old, ptrdiff_t lb, ptrdiff_t extent, hint_type *out)
{
    return MPI_Type_create_resized(old, (MPI_Aint)lb, (MPI_Aint)extent, out);
}
static inline int hint_type_commit(hint_type *t) { return MPI_Type_commit(t); }
static inline int hint_type_free(hint_type *t) { return MPI_Type_free(t); }

static inline int hint_barrier(hint_group g) { return MPI_Barrier(g); }
static inline int hint_bcast(void *buf, size_t n, hint_type t, int root, hint_group g)
{
    int c = hint_on_mpi_int(n);
    return c < 0 ? MPI_ERR_COUNT : MPI_Bcast(buf, c, t, root, g);
}
static inline int hint_allreduce(const void *s, void *r, size_t n, hint_type t, hint_op op, hint_group g)
{
    int c = hint_on_mpi_int(n);
    return c < 0 ? MPI_ERR_COUNT : MPI_Allreduce(s, r, c, t, op, g);
}
static inline int hint_alltoall(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                                hint_group g)
{
    int a = hint_on_mpi_int(sc), b = hint_on_mpi_int(rc);
    return a < 0 || b < 0 ? MPI_ERR_COUNT : MPI_Alltoall(s, a, st, r, b, rt, g);
}
static inline int hint_alltoallv(const void *s, const size_t sc[], const size_t sd[], hint_type st, void *r,
                                 const size_t rc[], const size_t rd[], hint_type rt, hint_group g)
{
    int P = hint_on_mpi_size(g);
    int *a = hint_on_mpi_ints(sc, P, 0), *b = hint_on_mpi_ints(sd, P, 1), *c = hint_on_mpi_ints(rc, P, 2),
        *d = hint_on_mpi_ints(rd, P, 3);
    return !a || !b || !c || !d ? MPI_ERR_COUNT : MPI_Alltoallv(s, a, b, st, r, c, d, rt, g);
}
static inline int hint_gatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rc[],
                               const size_t rd[], hint_type rt, int root, hint_group g)
{
    int P = hint_on_mpi_size(g), n = hint_on_mpi_int(sc);
    int *c = hint_on_mpi_ints(rc, P, 0), *d = hint_on_mpi_ints(rd, P, 1);
    return n < 0 || !c || !d ? MPI_ERR_COUNT : MPI_Gatherv(s, n, st, r, c, d, rt, root, g);
}

#endif
