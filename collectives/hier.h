/*
 * collectives/hier.h — the node hierarchy of a group, for the hierarchical algorithms (`hier`
 * in the barrier, bcast, reduce, allreduce and allgather tables, `hier_hint` in alltoall(v)):
 * every member's node and place on it, and two sub-groups made once per group and kept in its
 * collective state (freed with it):
 *   node    the members on this rank's node, ranked as in the group: the intra-node phases run
 *           on it with the one-node algorithms (shared heap, staged), chosen by the normal rules;
 *   column  the members whose local index equals this rank's, one per node, ranked by node
 *           index: column 0 is the node leaders; with every node the same size, column l holds
 *           segment l of a large allreduce.
 * Nodes are numbered by their first member in the group's rank order; a node's members keep the
 * group's order. Nodes may differ in size (column l then holds only the nodes with more than l
 * members). On one node the hierarchy is valid: node is the whole group, columns have one rank.
 */
#ifndef HINT_COLL_HIER_H
#define HINT_COLL_HIER_H

#include <stdbool.h>

#include "collectives/coll.h"

struct hier {
    hint_group node, column;
    int nnodes;
    int my_node, my_local;
    int *start;     /* [nnodes + 1]: node n's members are members[start[n] .. start[n + 1]) */
    int *members;   /* group ranks, node by node */
    int *node_of;   /* node index of each group rank */
    int *local_of;  /* place of each group rank on its node */
    bool blocked;   /* members[i] == i: every node's members are consecutive group ranks */
    bool even;      /* every node has the same number of members */
    int *zcells;    /* alltoall_hier_morton.c: the nnodes^2 cells (source node * nnodes + destination)
                       in Z order, made on first use; NULL until then */
};

/* The group's hierarchy, made on first use (a collective step over the group: every member's
   call reaches it, since all run the same algorithm). */
int hier_get(const struct coll_args *a, struct hier **out);
static inline int hier_node_size(const struct hier *h, int n) { return h->start[n + 1] - h->start[n]; }

/* Arguments for one phase on sub-group g: a's reduction fields, g's rank and size, g's next
   tag (as api.c gives one to each call), no v counts, no derived sides; the caller sets the
   buffers, sizes and root. */
void hier_sub(const struct coll_args *a, hint_group g, int op_id, struct coll_args *s);
/* Run a phase on the node: the algorithm the built-in rules pick for it (never a `hier` one). */
int hier_node_run(struct coll_args *s);
/* alltoall(v)'s intra-node step (alltoall_hier_hint.c): every block between members of this
   rank's node moved by the node's own alltoall (v: alltoallv) over the node sub-group. */
int hier_alltoall_node_step(const struct coll_args *a, const struct hier *h, bool v);
/* reduce's node phase (hier_reduce.c): every member's `in` combined into acc on the node's
   leader (local 0); a->block bytes, a's op. */
int hier_node_reduce(const struct coll_args *a, const struct hier *h, const void *in, char *acc);
/* Whether algorithm `name` is hierarchical (not to be picked for a phase). */
bool hier_is_hier(const char *name);

#endif
