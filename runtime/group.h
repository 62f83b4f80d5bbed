/*
 * runtime/group.h — process groups: the ranks of a group as world ranks, the context id that
 * keeps its messages apart from every other group's, and the parts layers above keep on it.
 */
#ifndef HINT_RUNTIME_GROUP_H
#define HINT_RUNTIME_GROUP_H

#include <stdbool.h>
#include <stdint.h>

#include "hint.h"

#define GRP_MAGIC 0x67727075u

/* Tags above HINT_TAG_UB are the runtime's own (never visible to users). */
#define GRP_TAG_SPLIT (HINT_TAG_UB + 1)
#define GRP_TAG_CREATE (HINT_TAG_UB + 2)
#define GRP_TAG_SLOT (HINT_TAG_UB + 3)
#define GRP_TAG_TOPO (HINT_TAG_UB + 4)
#define GRP_TAG_CHECK (HINT_TAG_UB + 5) /* HINT_COLL_CHECK's signature exchange */
#define GRP_TAG_COLL (HINT_TAG_UB + 16) /* collectives use tags from here up */

/* Parts: what a layer above the runtime keeps on a group (the collectives' state, a virtual
   topology), as Open MPI's coll modules or UCC's tl teams hang off a communicator. A layer
   registers its part once; group creation calls `create` on every new group (collective over the
   group: all members call it in the same order), hint_group_dup calls `copy` and destruction
   calls `destroy`. The runtime never looks inside a part. */
#define GRP_NPARTS 4
struct grp_part_ops {
    const char *name;
    /* Build the part of new group g (world: the world group); sets g->part[key] or leaves it
       NULL. NULL hook: the part is made later by its owner (grp_part_set). */
    int (*create)(hint_group g, bool world);
    /* Give `to` (a dup of `from`) its copy of part p. NULL: a dup does not inherit it. */
    int (*copy)(hint_group from, hint_group to, void *p);
    void (*destroy)(hint_group g, void *p);
};

struct hint_group_s {
    uint32_t magic;
    uint32_t ctx;          /* user point-to-point context; collectives use ctx + 1 */
    int rank, size;
    int *world;            /* world rank of each group rank */
    int *from_world;       /* group rank of each world rank, -1 when not a member */
    uint32_t coll_seq;     /* collective calls made on this group (gives each its tag) */
    void *part[GRP_NPARTS]; /* by key from grp_part_register; NULL: none */
};

/* Register a part: its key (an index of part[]), or -1 after a message when all are taken. */
int grp_part_register(const struct grp_part_ops *ops);
static inline void *grp_part(hint_group g, int key) { return g->part[key]; }
static inline void grp_part_set(hint_group g, int key, void *p) { g->part[key] = p; }

/* HINT_SUCCESS when g is a live group. */
int grp_check(hint_group g);
/* Build the world group (rank, size from the bootstrap). */
int grp_world_create(hint_group *out);
void grp_destroy(hint_group g);
/* Set by the nonblocking collectives (collectives/sched.c): true when calls in flight use g, which
   hint_group_free then leaves to them; the last to complete destroys it (MPI: freeing a
   communicator with pending operations is allowed, the free takes effect after they complete). */
extern bool (*grp_free_deferred)(hint_group g);
/* Gather n ints from every rank of g into out[size][n] on every rank (runtime's own, small). */
int grp_allgather_ints(hint_group g, const int *in, int n, int *out, int tag);
/* *all: whether ok on every rank of g (collective; needs no memory). */
int grp_all_ok(hint_group g, bool ok, bool *all, int tag);

#endif
