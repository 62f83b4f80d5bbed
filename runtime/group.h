/*
 * runtime/group.h — process groups: the ranks of a group as world ranks, the context id that
 * keeps its messages apart from every other group's, and what collectives cache on it.
 */
#ifndef HINT_RUNTIME_GROUP_H
#define HINT_RUNTIME_GROUP_H

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

/* Slots for what the collectives and topology layers build once per group and reuse. */
enum grp_cache_slot {
    GRP_CACHE_COLL = 0,
    GRP_CACHE_TOPO = 1,
    GRP_CACHE_TUNE = 2,
    GRP_CACHE_STAGE = 3,
    GRP_CACHE_VTOPO = 4, /* cartesian or graph topology (topology/vtopo.c) */
    GRP_CACHE_NSLOTS = 5
};

struct hint_group_s {
    uint32_t magic;
    uint32_t ctx;          /* user point-to-point context; collectives use ctx + 1 */
    int rank, size;
    int *world;            /* world rank of each group rank */
    int *from_world;       /* group rank of each world rank, -1 when not a member */
    int shm_slot;          /* collective slot in the node segment, -1 when none */
    uint32_t coll_seq;     /* collective calls made on this group (gives each its tag) */
    uint64_t bar_epoch;    /* shm barrier: barriers done */
    uint64_t bc_chunks;    /* shm bcast: chunks moved */
    uint64_t bc_free;      /* shm bcast: chunks below this number may be written (all earlier
                              uses of their cells were read) */
    void *cache[GRP_CACHE_NSLOTS];
    void (*cache_free[GRP_CACHE_NSLOTS])(void *);
};

/* HINT_SUCCESS when g is a live group. */
int grp_check(hint_group g);
/* Build the world group (rank, size from the bootstrap). */
int grp_world_create(hint_group *out);
void grp_destroy(hint_group g);
/* Gather n ints from every rank of g into out[size][n] on every rank (runtime's own, small). */
int grp_allgather_ints(hint_group g, const int *in, int n, int *out, int tag);

#endif
