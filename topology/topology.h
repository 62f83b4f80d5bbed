/*
 * topology/topology.h — what topology/ owns and offers the rest of hint: the node's hierarchy
 * (hwloc, or the injectable HINT_TOPO_FILE table, or a user string), mixed-radix orders and what
 * they give (rank mapping, core lists, metrics, a Slurm equivalent), binding and "where am I".
 *
 * Conventions are those of topology/mixed_radix.h: a hierarchy is outermost level first (h[0] =
 * nodes), an order lists levels fastest first (order[0] varies fastest in the new numbering),
 * the natural numbering is the order [n-1, ..., 0]. docs/TOPOLOGY.md is the user's view.
 *
 * Errors: every function returns HINT_SUCCESS or a HINT_ERR_* code; when it fails it leaves a
 * one-line message saying what was wrong, with the numbers, in topo_last_error() (per thread).
 * topology/ never prints: the caller (hintrun, hint-topo, the runtime) decides where it goes.
 * Nothing here needs hint_init. The hwloc topology is loaded once, lazily, by the first call
 * that needs it; topo_release() frees it. Not thread-safe (hint is one thread per rank).
 */
#ifndef HINT_TOPOLOGY_TOPOLOGY_H
#define HINT_TOPOLOGY_TOPOLOGY_H

#include <stddef.h>

#include "topology/mixed_radix.h"

/* What the groups of a level are; a level may be several at once ("L2+core" when each core
   has its own L2), so this is a bit mask. */
enum topo_kind {
    TOPO_KIND_NODE = 1u << 0,    /* compute nodes of the job */
    TOPO_KIND_PACKAGE = 1u << 1, /* sockets */
    TOPO_KIND_NUMA = 1u << 2,    /* NUMA nodes */
    TOPO_KIND_L3 = 1u << 3,      /* L3 caches */
    TOPO_KIND_L2 = 1u << 4,      /* L2 caches */
    TOPO_KIND_CORE = 1u << 5,    /* cores (or ranks, for HINT_TOPO_FILE) */
    TOPO_KIND_USER = 1u << 6,    /* given by the user: meaning unknown */
};

enum topo_source { TOPO_SRC_USER = 0, TOPO_SRC_HWLOC = 1, TOPO_SRC_FILE = 2 };

/* A hierarchy: how many groups of each level sit in one group of the level above. */
struct topo_hier {
    int nlevels;                   /* 1 .. TOPO_MAX_LEVELS */
    int h[TOPO_MAX_LEVELS];        /* level sizes, outermost first; h[0] = nodes when discovered */
    unsigned kind[TOPO_MAX_LEVELS];/* enum topo_kind mask per level; TOPO_KIND_USER when parsed */
    int size;                      /* product of h: ranks (or cores) the hierarchy numbers */
    enum topo_source source;       /* where it came from */
};

/* The last error message of this thread ("" when none). */
const char *topo_last_error(void);

/* ---- hierarchies and orders from text ---- */

/* "2,2,4" (also "[2, 2, 4]" or "2x2x4"): sizes outermost first, each >= 1, product <= INT_MAX.
   Kinds are TOPO_KIND_USER. Fake levels (a socket of 16 cores given as 2,8) are just sizes. */
int topo_parse_hierarchy(const char *s, struct topo_hier *out);
/* "2,0,1": a permutation of 0 .. nlevels-1 (fastest level first). */
int topo_parse_order(const char *s, int nlevels, int order[]);
/* A hierarchy from sizes (kinds TOPO_KIND_USER). */
int topo_hier_set(struct topo_hier *out, int nlevels, const int h[]);
/* "2,2,4" into buf (always terminated); returns buf. */
char *topo_format_list(int n, const int v[], char *buf, size_t len);
/* "1 node x 2 package x 8 L2+core" into buf; returns buf. */
char *topo_hier_describe(const struct topo_hier *hier, char *buf, size_t len);
/* HINT_ERR_TOPOLOGY unless the product of the hierarchy is nranks. */
int topo_check_size(const struct topo_hier *hier, int nranks);
/* HINT_SUCCESS when user only splits levels of real (every group boundary of real is one of
   user: [2,2,4] refines [2,8] and [1,2,8] but not [4,4]); HINT_ERR_TOPOLOGY otherwise. */
int topo_hier_refines(const struct topo_hier *user, const struct topo_hier *real);

/* ---- orders and what they give ---- */

/* Heap's algorithm: fn(order, arg) for each of the n! orders of n levels, starting from
   [0, 1, ..., n-1]; stops early and returns fn's value when fn returns non-zero. */
int topo_for_each_order(int n, int (*fn)(const int order[], void *arg), void *arg);
/* map[old] = new rank of the process at natural position old, for all prod(h) positions. */
int topo_rank_map(int nlevels, const int h[], const int order[], int map[]);
/* inv[new] = natural position of the process that gets rank new (the inverse of map). */
int topo_rank_unmap(int nlevels, const int h[], const int order[], int inv[]);
/* Where hintrun puts each of nranks ranks (new numbering) for --hierarchy/--order: the
   hierarchy numbers nnodes x (prod(h)/nnodes) positions; rank r goes to node node_of[r] (may be
   NULL) and core core_of[r] of that node (Alg. 3, also with nranks < prod(h)). Errors with the
   numbers: more cores per node than cores_per_node, more ranks than positions, a hierarchy
   that does not divide over the nodes. order NULL = natural order. */
int topo_core_list(int nlevels, const int h[], const int order[], int nranks, int nnodes, int cores_per_node,
                   int node_of[], int core_of[]);
/* The paper's two metrics for the first sub-group (new ranks 0 .. group_size-1), on a prepared
   topo_mr; pct[0] is the lowest level (see hint_mr_pairs_per_level). */
long topo_mr_ring_cost(const struct topo_mr *mr, int group_size);
int topo_mr_pairs_per_level(const struct topo_mr *mr, int group_size, double pct[]);
/* The Slurm --distribution value giving the same mapping (Fig. 2's captions), e.g.
   "block:cyclic" or "plane=4:block"; HINT_ERR_UNSUPPORTED (buf "") when none exists. Parsed
   hierarchies are read as [nodes, sockets, levels inside a socket...] (2 levels: [nodes,
   cores]); discovered ones by their kinds. */
int topo_slurm_distribution(const struct topo_hier *hier, const int order[], char *buf, size_t len);

/* ---- discovery ---- */

/* The hierarchy of the job: from HINT_TOPO_FILE when it is set (its nodes, sockets, NUMA
   nodes and ranks), else this node's from hwloc with nnodes prepended. */
int topo_discover(int nnodes, struct topo_hier *out);
/* This node's from hwloc: packages, NUMA nodes, L3, L2, cores (levels of size 1 dropped),
   with nnodes (>= 1) prepended as level 0 (kept even when 1). Inhomogeneous: HINT_ERR_TOPOLOGY.
   HWLOC_SYNTHETIC / HWLOC_XMLFILE in the environment make hwloc describe another machine. */
int topo_discover_hwloc(int nnodes, struct topo_hier *out);
/* Cores hwloc lets this process use (the allowed set), numbered 0 .. n-1 in hwloc's logical
   order; these are the core indices of everything below. */
int topo_ncores(int *ncores);

/* A leaf-level table to build a hierarchy from: nitems leaves in their numbering order, and
   ncand candidate levels, cand[c][i] = the group of leaf i on candidate level c (any ints).
   Candidate 0 is the outermost and always kept (the nodes); the others are sorted coarse to
   fine, dropped when they do not nest or have one group per parent; the leaves form the last
   level. Sizes must be equal across groups (else HINT_ERR_TOPOLOGY, naming the groups) and the
   leaves numbered hierarchically (else HINT_ERR_TOPOLOGY, naming the leaf). leaf_name ("core",
   "rank") is what messages call a leaf. */
int topo_hier_build(int nitems, int ncand, const int *const cand[], const unsigned kinds[], unsigned leaf_kind,
                    const char *leaf_name, struct topo_hier *out);

/* ---- HINT_TOPO_FILE: an injectable per-rank location table ---- */

/* Where one rank (or this process) is: indices on the node, -1 when unknown. */
struct topo_loc {
    int node;   /* job-wide node index */
    int socket; /* package index on the node */
    int numa;   /* NUMA node index on the node */
    int core;   /* core index on the node (topo_ncores numbering) */
};
struct topo_table {
    int nranks;           /* lines in the file: ranks 0 .. nranks-1, each once */
    struct topo_loc *loc; /* loc[rank] */
};
/* Read the format of docs/TOPOLOGY.md; errors name the file and line. */
int topo_table_load(const char *path, struct topo_table *t);
void topo_table_free(struct topo_table *t);
/* [nodes, sockets per node, NUMA per socket, ranks per NUMA], sizes 1 dropped but the nodes. */
int topo_hier_from_table(const struct topo_table *t, struct topo_hier *out);

/* ---- this process ---- */

/* Where this process is: from HINT_TOPO_FILE (its line for HINT_RANK) when set, else from hwloc
   (its binding, or the core it last ran on when not bound inside one package/NUMA node). */
int topo_self_location(struct topo_loc *loc);
/* For HINT_SPLIT_SOCKET / HINT_SPLIT_NUMA: the package / NUMA node index (on this node) the
   process is bound to or running on. */
int topo_socket_of_self(int *socket);
int topo_numa_of_self(int *numa);
/* Bind this process (all its threads, inherited across exec) to core (0 .. ncores-1). */
int topo_bind_self(int core);
/* The core this process is bound to, or -1 when its binding is not inside one core; pus (may
   be NULL) gets the bound PUs as a list ("0-1,4"). */
int topo_read_binding(int *core, char *pus, size_t len);
/* Free the cached hwloc topology and HINT_TOPO_FILE table (hint_finalize calls it). */
void topo_release(void);

#endif /* HINT_TOPOLOGY_TOPOLOGY_H */
