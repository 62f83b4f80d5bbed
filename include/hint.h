/*
 * hint.h — the one public C API of hint, a message-passing and collectives runtime.
 *
 * Shapes follow MPI's so HPC users feel at home, with size_t counts and int status returns.
 * Every function returns HINT_SUCCESS (0) or a HINT_ERR_* code (> 0) that hint_strerror()
 * explains. Calls made before hint_init() or after hint_finalize() return
 * HINT_ERR_NOT_INITIALIZED. Threads: HINT_THREAD_SERIALIZED (see hint_init_thread): any thread
 * of a rank may call, one call at a time, the program ordering the calls (say, with a mutex).
 */
#ifndef HINT_H
#define HINT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(HINT_BUILDING) && defined(__GNUC__)
#define HINT_API __attribute__((visibility("default")))
#else
#define HINT_API
#endif

#define HINT_VERSION_MAJOR 0
#define HINT_VERSION_MINOR 1
#define HINT_VERSION_PATCH 0
#define HINT_VERSION_STRING "0.1.0"

/* ---- status codes: one list gives the enum and hint_strerror's texts ---- */
#define HINT_STATUS_MAP(XX)                                                         \
    XX(SUCCESS, 0, "success")                                                        \
    XX(ERR_ARG, 1, "invalid argument")                                               \
    XX(ERR_COUNT, 2, "invalid count")                                                \
    XX(ERR_TYPE, 3, "invalid datatype or datatype mismatch")                         \
    XX(ERR_RANK, 4, "invalid rank")                                                  \
    XX(ERR_GROUP, 5, "invalid group")                                                \
    XX(ERR_ROOT, 6, "invalid root")                                                  \
    XX(ERR_OP, 7, "invalid reduction operation for this datatype")                  \
    XX(ERR_TRUNCATE, 8, "message truncated: receive buffer too small")              \
    XX(ERR_NOMEM, 9, "out of memory")                                                \
    XX(ERR_NOT_INITIALIZED, 10, "hint is not initialized (call hint_init first)")    \
    XX(ERR_TOPOLOGY, 11, "invalid or unsupported topology")                          \
    XX(ERR_UNSUPPORTED, 12, "operation or algorithm not supported for these arguments") \
    XX(ERR_TRANSPORT, 13, "transport failure")                                       \
    XX(ERR_INTERNAL, 14, "internal error")                                           \
    XX(ERR_TAG, 15, "invalid tag")                                                   \
    XX(ERR_REQUEST, 16, "invalid request")                                           \
    XX(ERR_BUFFER, 17, "invalid buffer (NULL with a non-zero count, or HINT_IN_PLACE where it is not allowed)") \
    XX(ERR_BOOTSTRAP, 18, "bootstrap store failure (is the job started by hintrun?)") \
    XX(ERR_MISMATCH, 19, "collective arguments differ across the group (operation, root, sizes or op)")

enum hint_status_code {
#define HINT_XX_ENUM(name, value, text) HINT_##name = value,
    HINT_STATUS_MAP(HINT_XX_ENUM)
#undef HINT_XX_ENUM
    HINT_ERR_LASTCODE
};

HINT_API const char *hint_strerror(int status);

/* ---- life cycle ---- */
HINT_API int hint_init(int *argc, char ***argv); /* without hintrun: a world of one */
HINT_API int hint_finalize(void);
HINT_API int hint_initialized(int *flag);        /* 1 between init and finalize */
HINT_API int hint_finalized(int *flag);
HINT_API void hint_abort(int code);              /* ends every rank of the job */
HINT_API double hint_wtime(void);                /* seconds, monotonic */
HINT_API double hint_wtick(void);
/* Thread levels as MPI's. hint provides HINT_THREAD_SERIALIZED whatever is required: the runtime
   takes no locks, and keeps no state tied to the thread that calls it, so calls from several
   threads are safe when the program makes them one at a time (a mutex around them is enough). */
enum { HINT_THREAD_SINGLE = 0, HINT_THREAD_FUNNELED = 1, HINT_THREAD_SERIALIZED = 2, HINT_THREAD_MULTIPLE = 3 };
HINT_API int hint_init_thread(int *argc, char ***argv, int required, int *provided);
HINT_API int hint_query_thread(int *provided);
HINT_API int hint_is_thread_main(int *flag); /* 1 in the thread that called hint_init(_thread) */
/* the library's version at run time (HINT_VERSION_* are the header's, at compile time) */
HINT_API int hint_get_version(int *major, int *minor, int *patch);
#define HINT_MAX_PROCESSOR_NAME 256
HINT_API int hint_get_processor_name(char name[HINT_MAX_PROCESSOR_NAME], int *len); /* host name */

/* ---- groups ---- */
typedef struct hint_group_s *hint_group;
HINT_API hint_group hint_world(void);
#define HINT_WORLD (hint_world())
#define HINT_GROUP_NULL ((hint_group)0)
#define HINT_UNDEFINED (-32766)

enum { HINT_SPLIT_NODE = 1, HINT_SPLIT_SOCKET = 2, HINT_SPLIT_NUMA = 3 };

HINT_API int hint_group_rank(hint_group g, int *rank);
HINT_API int hint_group_size(hint_group g, int *size);
/* collective over g; color HINT_UNDEFINED gives *out == HINT_GROUP_NULL */
HINT_API int hint_group_split(hint_group g, int color, int key, hint_group *out);
HINT_API int hint_group_split_type(hint_group g, int type, int key, hint_group *out);
/* called by the listed ranks only (like MPI_Comm_create_group) */
HINT_API int hint_group_create(hint_group g, int n, const int ranks[], hint_group *out);
HINT_API int hint_group_dup(hint_group g, hint_group *out);
HINT_API int hint_group_free(hint_group *g); /* sets *g to HINT_GROUP_NULL; the world cannot be freed */
/* ranks of a in b's numbering; HINT_UNDEFINED where a rank is not in b */
HINT_API int hint_group_translate(hint_group a, int n, const int ranks_a[], hint_group b, int ranks_b[]);
/* Error handlers, per group: what a call on g does when it fails. HINT_ERRORS_RETURN (the default,
   or HINT_ERRORS=return): it returns the code. HINT_ERRORS_ARE_FATAL (HINT_ERRORS=fatal): it prints
   the call, the group, the rank and the message and ends the job (hint_abort with the code). A new
   group takes its parent's handler; a call on one request (wait, test, start) uses the request's
   group's, calls without a group (waitall, datatypes) the world's. */
enum { HINT_ERRORS_ARE_FATAL = 1, HINT_ERRORS_RETURN = 2 };
HINT_API int hint_group_set_errhandler(hint_group g, int handler);
HINT_API int hint_group_get_errhandler(hint_group g, int *handler);

/* ---- datatypes ---- */
typedef struct hint_type_s *hint_type;
#define HINT_TYPE_NULL ((hint_type)0)
HINT_API extern struct hint_type_s hint_type_byte_, hint_type_char_, hint_type_int_, hint_type_long_,
    hint_type_int32_, hint_type_int64_, hint_type_uint32_, hint_type_uint64_, hint_type_float_,
    hint_type_double_, hint_type_complex_float_, hint_type_complex_double_;
#define HINT_BYTE (&hint_type_byte_)
#define HINT_CHAR (&hint_type_char_)
#define HINT_INT (&hint_type_int_)
#define HINT_LONG (&hint_type_long_)
#define HINT_INT32 (&hint_type_int32_)
#define HINT_INT64 (&hint_type_int64_)
#define HINT_UINT32 (&hint_type_uint32_)
#define HINT_UINT64 (&hint_type_uint64_)
#define HINT_FLOAT (&hint_type_float_)
#define HINT_DOUBLE (&hint_type_double_)
#define HINT_COMPLEX_FLOAT (&hint_type_complex_float_)
#define HINT_COMPLEX_DOUBLE (&hint_type_complex_double_)
/* MPI's pairs for HINT_MINLOC / HINT_MAXLOC, laid out as the C structs {float v; int i;},
   {double v; int i;}, {long v; int i;}, {int v; int i;}: size the value plus the int (12 for
   the double and long pairs), extent the struct's (16) */
HINT_API extern struct hint_type_s hint_type_float_int_, hint_type_double_int_, hint_type_long_int_, hint_type_2int_;
#define HINT_FLOAT_INT (&hint_type_float_int_)
#define HINT_DOUBLE_INT (&hint_type_double_int_)
#define HINT_LONG_INT (&hint_type_long_int_)
#define HINT_2INT (&hint_type_2int_)

enum { HINT_ORDER_C = 0, HINT_ORDER_FORTRAN = 1 };

HINT_API int hint_type_contiguous(size_t count, hint_type old, hint_type *out);
HINT_API int hint_type_vector(size_t count, size_t blocklen, ptrdiff_t stride, hint_type old, hint_type *out);
HINT_API int hint_type_hvector(size_t count, size_t blocklen, ptrdiff_t stride_bytes, hint_type old,
                               hint_type *out);
HINT_API int hint_type_indexed(size_t count, const size_t blocklens[], const ptrdiff_t displs[], hint_type old,
                               hint_type *out);
HINT_API int hint_type_hindexed(size_t count, const size_t blocklens[], const ptrdiff_t displs_bytes[],
                                hint_type old, hint_type *out);
HINT_API int hint_type_indexed_block(size_t count, size_t blocklen, const ptrdiff_t displs[], hint_type old,
                                     hint_type *out);
HINT_API int hint_type_struct(size_t count, const size_t blocklens[], const ptrdiff_t displs_bytes[],
                              const hint_type types[], hint_type *out);
HINT_API int hint_type_resized(hint_type old, ptrdiff_t lb, ptrdiff_t extent, hint_type *out);
HINT_API int hint_type_subarray(int ndims, const size_t sizes[], const size_t subsizes[], const size_t starts[],
                                int order, hint_type old, hint_type *out);
HINT_API int hint_type_commit(hint_type *t);
HINT_API int hint_type_free(hint_type *t); /* a predefined type: HINT_ERR_TYPE, nothing changes */
HINT_API int hint_type_size(hint_type t, size_t *size);
HINT_API int hint_type_extent(hint_type t, ptrdiff_t *lb, ptrdiff_t *extent);
HINT_API int hint_type_true_extent(hint_type t, ptrdiff_t *true_lb, ptrdiff_t *true_extent);
HINT_API int hint_pack_size(size_t count, hint_type t, size_t *size); /* exact, not an upper bound */
/* as MPI_Pack/MPI_Unpack: the whole count at out + *position (in + *position);
   HINT_ERR_TRUNCATE if it does not fit */
HINT_API int hint_pack(const void *in, size_t count, hint_type t, void *out, size_t outsize, size_t *position);
HINT_API int hint_unpack(const void *in, size_t insize, size_t *position, void *out, size_t count, hint_type t);
/* any slice [offset, offset+len) of the packed stream, for pipelining; *done = bytes handled
   (less than len only at the end of the stream) */
HINT_API int hint_pack_range(const void *in, size_t count, hint_type t, size_t offset, void *out, size_t len,
                             size_t *done);
HINT_API int hint_unpack_range(const void *in, size_t len, size_t offset, void *out, size_t count, hint_type t,
                               size_t *done);

/* ---- reduction operations ---- */
typedef struct hint_op_s *hint_op;
HINT_API extern struct hint_op_s hint_op_sum_, hint_op_prod_, hint_op_min_, hint_op_max_, hint_op_land_,
    hint_op_lor_, hint_op_band_, hint_op_bor_, hint_op_bxor_;
#define HINT_SUM (&hint_op_sum_)
#define HINT_PROD (&hint_op_prod_)
#define HINT_MIN (&hint_op_min_)
#define HINT_MAX (&hint_op_max_)
#define HINT_LAND (&hint_op_land_)
#define HINT_LOR (&hint_op_lor_)
#define HINT_BAND (&hint_op_band_)
#define HINT_BOR (&hint_op_bor_)
#define HINT_BXOR (&hint_op_bxor_)
/* on the pair types: the smallest (largest) value and its index; equal values: the lowest index */
HINT_API extern struct hint_op_s hint_op_minloc_, hint_op_maxloc_;
#define HINT_MINLOC (&hint_op_minloc_)
#define HINT_MAXLOC (&hint_op_maxloc_)
#define HINT_OP_NULL ((hint_op)0)
/* A user-defined op: inout[i] = in[i] op inout[i] for count elements of t (the call's datatype,
   elements in its layout), as MPI_User_function. commute = 0: every reduction combines the
   ranks' contributions in rank order (x0 op x1 op ... op xP-1), never reordered. */
typedef void hint_user_fn(const void *in, void *inout, size_t count, hint_type t);
HINT_API int hint_op_create(hint_user_fn *fn, int commute, hint_op *op);
HINT_API int hint_op_free(hint_op *op); /* sets *op to HINT_OP_NULL; a predefined op: HINT_ERR_OP */

/* ---- point to point ---- */
typedef struct hint_request_s *hint_request;
typedef struct {
    int source, tag, error;
    size_t bytes;
} hint_status;
#define HINT_ANY_SOURCE (-1)
#define HINT_ANY_TAG (-1)
#define HINT_PROC_NULL (-2)
#define HINT_TAG_UB 0x3fffffff /* user tags are 0 .. HINT_TAG_UB */
#define HINT_REQUEST_NULL ((hint_request)0)
#define HINT_STATUS_IGNORE ((hint_status *)0)
#define HINT_STATUSES_IGNORE ((hint_status *)0)

HINT_API int hint_send(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g);
HINT_API int hint_recv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_status *st);
HINT_API int hint_isend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g,
                        hint_request *r);
HINT_API int hint_irecv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, hint_request *r);
HINT_API int hint_sendrecv(const void *sbuf, size_t scount, hint_type st, int dest, int stag, void *rbuf,
                           size_t rcount, hint_type rt, int source, int rtag, hint_group g, hint_status *s);
HINT_API int hint_wait(hint_request *r, hint_status *st);
HINT_API int hint_waitall(size_t n, hint_request r[], hint_status st[]);
HINT_API int hint_test(hint_request *r, int *done, hint_status *st);

/* synchronous sends: complete only once a receive has matched the message */
HINT_API int hint_ssend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g);
HINT_API int hint_issend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g,
                         hint_request *r);
/* probes: the oldest message a receive posted now would match (status: source, tag, bytes) */
HINT_API int hint_probe(int source, int tag, hint_group g, hint_status *st);
HINT_API int hint_iprobe(int source, int tag, hint_group g, int *flag, hint_status *st);
/* matched probes: the message is taken so that only hint_mrecv / hint_imrecv can receive it */
typedef struct hint_message_s *hint_message;
HINT_API extern struct hint_message_s hint_message_no_proc_;
#define HINT_MESSAGE_NULL ((hint_message)0)
#define HINT_MESSAGE_NO_PROC (&hint_message_no_proc_) /* hint_mprobe from HINT_PROC_NULL */
HINT_API int hint_mprobe(int source, int tag, hint_group g, hint_message *m, hint_status *st);
HINT_API int hint_improbe(int source, int tag, hint_group g, int *flag, hint_message *m, hint_status *st);
HINT_API int hint_mrecv(void *buf, size_t count, hint_type t, hint_message *m, hint_status *st);
HINT_API int hint_imrecv(void *buf, size_t count, hint_type t, hint_message *m, hint_request *r);
/* completion of several requests; HINT_REQUEST_NULL and inactive persistent requests are skipped,
   and when every one is such, *index / *outcount is HINT_UNDEFINED_INDEX */
#define HINT_UNDEFINED_INDEX ((size_t)-1)
HINT_API int hint_waitany(size_t n, hint_request r[], size_t *index, hint_status *st);
HINT_API int hint_waitsome(size_t n, hint_request r[], size_t *outcount, size_t indices[], hint_status st[]);
HINT_API int hint_testall(size_t n, hint_request r[], int *done, hint_status st[]);
HINT_API int hint_testany(size_t n, hint_request r[], size_t *index, int *done, hint_status *st);
HINT_API int hint_testsome(size_t n, hint_request r[], size_t *outcount, size_t indices[], hint_status st[]);
/* cancel a receive not matched yet (a send: HINT_ERR_UNSUPPORTED); complete it with wait or test */
HINT_API int hint_cancel(hint_request *r);
HINT_API int hint_test_cancelled(const hint_status *st, int *flag);
/* persistent requests: made once, started and completed many times, freed by hint_request_free */
HINT_API int hint_send_init(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g,
                            hint_request *r);
HINT_API int hint_recv_init(void *buf, size_t count, hint_type t, int source, int tag, hint_group g,
                            hint_request *r);
HINT_API int hint_start(hint_request *r);
HINT_API int hint_startall(size_t n, hint_request r[]);
/* sets *r to HINT_REQUEST_NULL; a request still in flight completes on its own */
HINT_API int hint_request_free(hint_request *r);

/* ---- collectives ---- */
#define HINT_IN_PLACE ((void *)1)
HINT_API int hint_barrier(hint_group g);
HINT_API int hint_bcast(void *buf, size_t count, hint_type t, int root, hint_group g);
HINT_API int hint_reduce(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g);
HINT_API int hint_allreduce(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g);
HINT_API int hint_gather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt, int root,
                         hint_group g);
HINT_API int hint_scatter(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt, int root,
                          hint_group g);
HINT_API int hint_allgather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                            hint_group g);
HINT_API int hint_alltoall(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                           hint_group g);
HINT_API int hint_allgatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                             const size_t rdispls[], hint_type rt, hint_group g);
HINT_API int hint_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st, void *r,
                            const size_t rcounts[], const size_t rdispls[], hint_type rt, hint_group g);
HINT_API int hint_gatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                          const size_t rdispls[], hint_type rt, int root, hint_group g);
HINT_API int hint_scatterv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st, void *r,
                           size_t rc, hint_type rt, int root, hint_group g);
HINT_API int hint_reduce_scatter_block(const void *s, void *r, size_t rcount, hint_type t, hint_op op,
                                       hint_group g);
/* prefix reductions: rank i gets x0 op ... op xi (scan) or x0 op ... op xi-1 (exscan; rank 0's r
   is left as it was) */
HINT_API int hint_scan(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g);
HINT_API int hint_exscan(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g);
/* rank i gets rcounts[i] elements of the reduction of sum(rcounts) elements, from offset
   rcounts[0] + ... + rcounts[i-1] */
HINT_API int hint_reduce_scatter(const void *s, void *r, const size_t rcounts[], hint_type t, hint_op op,
                                 hint_group g);
/* per peer: counts in elements of that peer's type, displacements in bytes */
HINT_API int hint_alltoallw(const void *s, const size_t sc[], const size_t sdispls_bytes[], const hint_type st[],
                            void *r, const size_t rc[], const size_t rdispls_bytes[], const hint_type rt[],
                            hint_group g);

/* nonblocking collectives: the blocking call's arguments and rules, plus the request that
   hint_wait / hint_test (and the other completion calls) complete; the buffers belong to the
   call until then. Started by every member in the same order as its other collectives on g;
   several may be in flight on one group and on several. They progress inside any wait or test. */
HINT_API int hint_ibarrier(hint_group g, hint_request *req);
HINT_API int hint_ibcast(void *buf, size_t count, hint_type t, int root, hint_group g, hint_request *req);
HINT_API int hint_ireduce(const void *s, void *r, size_t count, hint_type t, hint_op op, int root, hint_group g,
                          hint_request *req);
HINT_API int hint_iallreduce(const void *s, void *r, size_t count, hint_type t, hint_op op, hint_group g,
                             hint_request *req);
HINT_API int hint_igather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt, int root,
                          hint_group g, hint_request *req);
HINT_API int hint_iscatter(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt, int root,
                           hint_group g, hint_request *req);
HINT_API int hint_iallgather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                             hint_group g, hint_request *req);
HINT_API int hint_ialltoall(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                            hint_group g, hint_request *req);
HINT_API int hint_iallgatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                              const size_t rdispls[], hint_type rt, hint_group g, hint_request *req);
HINT_API int hint_ialltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st,
                             void *r, const size_t rcounts[], const size_t rdispls[], hint_type rt, hint_group g,
                             hint_request *req);
HINT_API int hint_igatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                           const size_t rdispls[], hint_type rt, int root, hint_group g, hint_request *req);
HINT_API int hint_iscatterv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st,
                            void *r, size_t rc, hint_type rt, int root, hint_group g, hint_request *req);
HINT_API int hint_ireduce_scatter_block(const void *s, void *r, size_t rcount, hint_type t, hint_op op,
                                        hint_group g, hint_request *req);

/* algorithm choice: env HINT_<OP>=<name> (e.g. HINT_ALLTOALL=hilbert) or this call; "auto" restores.
   An unknown name: HINT_ERR_ARG. A forced algorithm that cannot run for a call returns
   HINT_ERR_UNSUPPORTED from that call rather than silently running another (HINT_COLL_FALLBACK=warn
   or silent may allow a fallback); P=1 and 0-byte calls may take a trivial path. */
HINT_API int hint_coll_set(const char *op, const char *algorithm);
HINT_API int hint_coll_last(const char *op, const char **algorithm); /* what the last call of op ran */

/* ---- memory ---- */
HINT_API void *hint_malloc(size_t bytes); /* always on the node's shared heap, or NULL */
HINT_API void hint_free(void *p);
HINT_API int hint_mem_shared(const void *p); /* 1 if p lies on the shared heap */

/* ---- placement (mixed radix) and virtual topologies ---- */
HINT_API int hint_mr_coords(int nlevels, const int h[], int rank, int coords[]);                       /* Alg. 1 */
HINT_API int hint_mr_rank(int nlevels, const int h[], const int coords[], const int order[], int *rank); /* Alg. 2 */
HINT_API int hint_mr_cores(int nlevels, const int h[], const int order[], int n, int cores[]);       /* Alg. 3 */
HINT_API int hint_mr_ring_cost(int nlevels, const int h[], const int order[], int group_size, long *cost);
HINT_API int hint_mr_pairs_per_level(int nlevels, const int h[], const int order[], int group_size, double pct[]);
HINT_API int hint_group_reorder(hint_group g, int nlevels, const int h[], const int order[], hint_group *out);

HINT_API int hint_dims_create(int nnodes, int ndims, int dims[]);
HINT_API int hint_cart_create(hint_group g, int ndims, const int dims[], const int periods[], int reorder,
                              hint_group *out);
HINT_API int hint_cart_coords(hint_group g, int rank, int ndims, int coords[]);
HINT_API int hint_cart_rank(hint_group g, const int coords[], int *rank);
HINT_API int hint_cart_shift(hint_group g, int dim, int disp, int *source, int *dest);
HINT_API int hint_graph_create_adjacent(hint_group g, int indegree, const int sources[], int outdegree,
                                        const int dests[], int reorder, hint_group *out);
/* MPI_Dist_graph_create without weights: this rank names n sources, degrees[i] destinations for
   sources[i], all in dests (any rank may name any edge); collective over g */
HINT_API int hint_graph_create(hint_group g, size_t n, const int sources[], const size_t degrees[],
                               const int dests[], int reorder, hint_group *out);
HINT_API int hint_neighbors_count(hint_group g, int *indegree, int *outdegree);
HINT_API int hint_neighbors(hint_group g, int maxin, int sources[], int maxout, int dests[]);
/* HINT_CART, HINT_DIST_GRAPH, or HINT_UNDEFINED for a group without a virtual topology (hint's graphs
   are all distributed ones: HINT_GRAPH, MPI_Graph_create's kind, is never returned) */
enum { HINT_CART = 1, HINT_GRAPH = 2, HINT_DIST_GRAPH = 3 };
HINT_API int hint_topo_test(hint_group g, int *kind);
HINT_API int hint_cartdim_get(hint_group g, int *ndims);
HINT_API int hint_cart_get(hint_group g, int maxdims, int dims[], int periods[], int coords[]);
/* collective over g: the sub-grid of the dimensions whose remain_dims[d] != 0, a cart itself */
HINT_API int hint_cart_sub(hint_group g, const int remain_dims[], hint_group *out);
/* a distributed graph's lists, as MPI_Dist_graph_neighbors(_count) without weights
   (HINT_ERR_TOPOLOGY on a cart) */
HINT_API int hint_graph_neighbors_count(hint_group g, int *indegree, int *outdegree);
HINT_API int hint_graph_neighbors(hint_group g, int maxin, int sources[], int maxout, int dests[]);
HINT_API int hint_neighbor_allgather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                                     hint_group g);
HINT_API int hint_neighbor_alltoall(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                                    hint_group g);
/* v variants: counts in elements, displacements in extents of the type, one per neighbour */
HINT_API int hint_neighbor_allgatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                                      const size_t rdispls[], hint_type rt, hint_group g);
HINT_API int hint_neighbor_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[], hint_type st,
                                     void *r, const size_t rcounts[], const size_t rdispls[], hint_type rt,
                                     hint_group g);
/* nonblocking neighbourhood collectives (as the nonblocking collectives above) */
HINT_API int hint_ineighbor_allgather(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                                      hint_group g, hint_request *req);
HINT_API int hint_ineighbor_alltoall(const void *s, size_t sc, hint_type st, void *r, size_t rc, hint_type rt,
                                     hint_group g, hint_request *req);
HINT_API int hint_ineighbor_allgatherv(const void *s, size_t sc, hint_type st, void *r, const size_t rcounts[],
                                       const size_t rdispls[], hint_type rt, hint_group g, hint_request *req);
HINT_API int hint_ineighbor_alltoallv(const void *s, const size_t scounts[], const size_t sdispls[],
                                      hint_type st, void *r, const size_t rcounts[], const size_t rdispls[],
                                      hint_type rt, hint_group g, hint_request *req);

#ifdef __cplusplus
}
#endif
#endif /* HINT_H */
