/*
 * collectives/coll.h — what every collective algorithm sees: the normalised arguments of one
 * call, the algorithm table entry, and the point-to-point helpers on the group's collective
 * context.
 *
 * api.c turns a public call into struct coll_args: buffers as contiguous bytes, HINT_IN_PLACE
 * resolved (see each field), counts of the v variants in bytes. An algorithm never sees
 * HINT_IN_PLACE and may assume the arguments were checked.
 */
#ifndef HINT_COLL_H
#define HINT_COLL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "collectives/copy.h"
#include "collectives/op.h"
#include "hint.h"
#include "runtime/group.h"

enum coll_op_id {
    COLL_BARRIER,
    COLL_BCAST,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_GATHER,
    COLL_GATHERV,
    COLL_SCATTER,
    COLL_SCATTERV,
    COLL_ALLGATHER,
    COLL_ALLGATHERV,
    COLL_ALLTOALL,
    COLL_ALLTOALLV,
    COLL_REDUCE_SCATTER_BLOCK,
    COLL_NEIGHBOR_ALLGATHER,
    COLL_NEIGHBOR_ALLGATHERV,
    COLL_NEIGHBOR_ALLTOALL,
    COLL_NEIGHBOR_ALLTOALLV,
    COLL_SCAN,
    COLL_EXSCAN,
    COLL_REDUCE_SCATTER,
    COLL_ALLTOALLW,
    COLL_NOPS
};

/* One side of an alltoall or allgather whose datatype is derived: each block is `count`
   elements of `type` and blocks lie count * extent bytes apart from the buffer address. In the
   v variants count is unused: counts are bytes of data and displacements byte offsets of each
   block's first element. type NULL: the side is contiguous bytes. Only algorithms marked `typed` see a derived side; the others get
   it packed (coll_run_packed). */
struct coll_layout {
    hint_type type;
    size_t count;
    ptrdiff_t extent;
};

struct coll_args {
    int op_id;
    hint_group g;
    int rank, size;
    int root;
    int tag;               /* this call's tag: every call on a group gets the next one */
    /* Buffers. In place is resolved: allgather's sbuf points at the rank's own block of rbuf;
       reduce/allreduce's sbuf may equal rbuf; gather's root sbuf is its block of rbuf;
       scatter's root rbuf may be its block of sbuf; copy_bytes() skips dst == src. */
    const char *sbuf;
    char *rbuf;
    size_t block;          /* bytes of one rank's block (gather, scatter, allgather, alltoall,
                              reduce_scatter_block) or of the whole message (bcast, reduce,
                              allreduce) */
    size_t count;          /* elements, for reductions */
    size_t esize;          /* bytes of one element, for reductions */
    int basic;             /* predefined kind of the elements, for reductions */
    hint_op op;
    const size_t *scounts, *sdispls, *rcounts, *rdispls; /* v variants, in bytes; the neighbourhood
                              ones: elements and extents of sl/rl's types, one per neighbour */
    int copy;              /* enum copy_mode for the shared-heap algorithms; -1: HINT_COPY's */
    const hint_type *stypes, *rtypes; /* alltoallw: one per peer (its scounts, rcounts are
                                  elements of these, its displacements bytes) */
    struct coll_layout sl, rl; /* alltoall(v) / allgather(v): derived send and receive sides;
                                  then sbuf and rbuf are the user's buffer addresses. The
                                  neighbourhood collectives: always the caller's types */
};

struct coll_alg {
    const char *name;
    const char *desc;                              /* one line, for hint_info */
    bool (*applicable)(const struct coll_args *a); /* NULL: always */
    int (*run)(struct coll_args *a);
    bool typed;            /* copies straight from and to derived layouts (struct coll_layout) */
    bool node_only;        /* reads or writes peers' memory (node area, shared heap): every member
                              must be on this rank's node, so a group spanning nodes never runs it */
};

struct coll_table {
    const char *op;        /* "alltoall": the name in HINT_<OP> and hint_coll_set */
    const struct coll_alg *algs;  /* algs[0] runs anywhere: the last resort */
    int nalgs;
};

extern const struct coll_table coll_tables[COLL_NOPS];

/* What the collectives keep on each group (a part of it, runtime/group.h), made when the group
   is and freed with it by collectives/group_state.c. */
struct coll_owned {
    void *p;               /* built on first use; NULL until then */
    void (*free)(void *p);
};
struct coll_group {
    int slot;              /* the group's slot of the collectives' node area (coll_shm.h), -1: none
                              (one rank, no node area, members on several nodes, or every slot
                              taken) */
    int nodes;             /* nodes the members are on (0 in a group made by hand: one) */
    int ppn;               /* most members on one node (0 in a group made by hand: all) */
    uint64_t bar_epoch;    /* shm barrier: barriers done */
    uint64_t bc_chunks;    /* shm bcast: chunks moved */
    uint64_t bc_free;      /* shm bcast: chunks below this number may be written (all earlier
                              uses of their cells were read) */
    struct coll_owned order; /* alltoall_order.c: copy-order tuples, NUMA layout, copy thresholds */
    struct coll_owned stage; /* staging.c: this rank's staging areas */
    struct coll_owned tune;  /* tune.c: online autotuning's measurements */
    struct coll_owned neighbor; /* neighbor_distance_halving.c: the communication pattern */
    struct coll_owned hier;  /* hier.c: node and column sub-groups of the hierarchical algorithms */
    struct coll_pick_memo {  /* select.c: the defaults' last choice per operation (pick_memo) */
        size_t block, esize;
        hint_op op;
        int root, size, slot, nodes, ppn, pick, copy;
        unsigned sides;      /* bit 0: the send side is derived, bit 1: the receive side */
        bool valid;
    } memo[COLL_NEIGHBOR_ALLTOALL + 1];
};
extern int coll_group_key; /* the part's key in hint_group_s.part */
static inline struct coll_group *coll_group_of(hint_group g) { return (struct coll_group *)g->part[coll_group_key]; }
/* Give g, a group made by hand (unit tests), the state cg. */
void coll_group_attach(hint_group g, struct coll_group *cg);
/* The collectives component (lib/components.c): registers the part and the node area. */
int coll_setup(void);
void coll_fini(void);

/* The group's shape as selection sees it: nodes its members are on and most members on one node
   (without a group, as hint_info asks: one node). */
void coll_shape(const struct coll_args *a, int *nodes, int *ppn);
/* Whether algorithm `alg` of the call's operation can run it: not a node-only one on a group
   spanning nodes, and its own predicate agrees. Selection, autotuning and the tests ask this. */
bool coll_alg_usable(int alg, const struct coll_args *a);
/* Pick and run an algorithm for a (selection: forced > defaults), recording its name. */
int coll_run(struct coll_args *a);
/* What the defaults pick for an op at P ranks and `bytes` per block (hint_info). */
const char *coll_default_name(int op_id, int P, size_t bytes);
/* Forced algorithm name of an op or NULL (auto). */
const char *coll_forced_name(int op_id);
/* The one lookup of names: an operation's index in coll_tables, an algorithm's in its table;
   -1 when there is none. */
int coll_op_by_name(const char *op);
int coll_alg_by_name(int op_id, const char *name);
/* Free the staging areas of freed groups (hint_finalize, after its fence). */
void coll_staging_release_all(void);
/* What this rank's last call of each operation ran (hint_coll_last); inline for api.c's empty
   calls, whose whole cost is a few dozen instructions. */
extern const char *coll_last_ran[COLL_NOPS];
static inline void coll_record(int op_id, const char *name) { coll_last_ran[op_id] = name; }
/* HINT_COLL_STATS=1: print this rank's counts of derived-type calls (hint_finalize). */
void coll_stats_report(void);
/* HINT_COLL_STATS=1: which path the copy orders took, per operation (alltoall_order.c). */
void order_stats_report(void);
/* The copy orders' state on a group (alltoall_order.c), made now rather than in its first alltoall
   or allgather: for the world, in hint_init. */
void coll_order_prepare(hint_group g);
/* At hint_init (coll_setup): the pid the copy orders publish for their peers' CMA reads. */
void coll_order_setup(void);

/* ---- derived layouts (collectives/typed.c) ---- */
static inline bool coll_has_layout(const struct coll_args *a) { return a->sl.type || a->rl.type; }
/* Addresses of send block d and receive block s, whatever the side's layout. */
const char *coll_send_block(const struct coll_args *a, int d);
char *coll_recv_block(const struct coll_args *a, int s);
/* Send block d packed into out (a->block bytes); a->block packed bytes into receive block s. */
void coll_pack_block(const struct coll_args *a, int d, void *out);
void coll_unpack_block(const struct coll_args *a, int s, const void *in);
/* Runs an algorithm that knows only bytes on a call with derived sides: packs the send side
   into scratch, runs, unpacks the receive side. Counted as packed in the stats. */
int coll_run_packed(struct coll_args *a, int (*run)(struct coll_args *));
/* Counts a derived-type call that an algorithm served straight from and to the layouts. */
void coll_count_direct(void);

/* The copy mode the shared-heap algorithms use when no tuning rule gives one (-1: HINT_COPY);
   set by tools/hint-tune while it measures each mode. */
extern int coll_copy_override;

/* ---- helpers for algorithms (collectives/util.c) ---- */
static inline void copy_bytes(void *dst, const void *src, size_t n)
{
    if (dst != src && n)
        rt_memcpy(dst, src, n); /* memcpy, but for glibc's slow rep movsb (runtime/memcopy.h) */
}
static inline bool is_pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

int coll_send(const void *buf, size_t n, int peer, const struct coll_args *a);
int coll_recv(void *buf, size_t n, int peer, const struct coll_args *a);
int coll_sendrecv(const void *s, size_t sn, int dst, void *r, size_t rn, int src, const struct coll_args *a);
int coll_isend(const void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r);
int coll_irecv(void *buf, size_t n, int peer, const struct coll_args *a, hint_request *r);
/* An array of n empty requests (NULL when out of memory), and the way back: wait for all of
   them, free the array, and return st or else the first error of the requests. */
hint_request *coll_requests(size_t n);
int coll_wait_free(hint_request *r, size_t n, int st);
/* A scratch buffer of n bytes (NULL with n == 0 is fine; *p == NULL and HINT_ERR_NOMEM on failure). */
int coll_scratch(size_t n, void **p);

#endif
