/*
 * collectives/neighbor.h — what the neighbourhood algorithms keep per group (in the group's
 * collective state, coll_group.neighbor): distance_halving's communication pattern and morton's
 * copy plan, each built on the algorithm's first call on the group (the topology never changes).
 */
#ifndef HINT_COLLECTIVES_NEIGHBOR_H
#define HINT_COLLECTIVES_NEIGHBOR_H

#include <stdbool.h>

#include "hint.h"
#include "topology/vtopo.h"

struct coll_args;
struct dh_pattern;
struct morton_plan;
/* neighbor_alltoall staged: which of its sender's out-slots each in-slot of this rank receives
   (the matching of neighbor_naive's messages), and the group's largest degree. */
struct staged_matches {
    int maxd;
    int *from_slot; /* per in-slot; -1 for HINT_PROC_NULL */
};
/* neighbor_allgather/alltoall staged: the lists of every call, made on the first one. */
struct staged_plan {
    struct vtopo_lists l; /* the topology's (its arrays live with the group) */
    int nring, nwait;
    int *ring; /* the distinct out-neighbours but this rank, as world ranks: the ones woken by its post */
    int *wait; /* the distinct in-neighbours but this rank: the ones it waits for */
};
struct neighbor_cache {
    struct dh_pattern *dh;
    struct morton_plan *morton;
    struct staged_matches *staged;
    struct staged_plan *plan;
    int staged_maxd;        /* the group's largest degree, learnt by the exchange of staged's matches */
    unsigned plan_tries;    /* HINT_TEST_NEIGHBOR_NOMEM */
    unsigned lists_tries;   /* HINT_TEST_NEIGHBOR_LISTS_NOMEM */
    unsigned dh_build_tries; /* HINT_TEST_DH_BUILD_NOMEM */
};
/* The group's cache, made empty on first use; NULL when out of memory. A rank without one still
   takes part in the exchange of the lists its peers make (morton's and staged's: passing NULL
   lists), so that they all fail it instead of waiting for this rank. */
struct neighbor_cache *neighbor_cache_of(hint_group g);
/* HINT_TEST_NEIGHBOR_LISTS_NOMEM=RANK[:N]: world rank RANK has no memory for the exchange of the
   neighbour lists (morton's plan, staged's matches, distance_halving's pattern) at its first N
   tries on each group. */
bool neighbor_lists_refused(const struct coll_args *a, struct neighbor_cache *c);
/* Collective over g: HINT_SUCCESS when `have` holds on every rank, else HINT_ERR_NOMEM on every
   rank (grp_all_ok, which needs no memory): what precedes an exchange that a rank may have no
   buffers for. */
int neighbor_all_have(hint_group g, bool have);
void neighbor_morton_plan_free(struct morton_plan *m);
/* This rank's matches (collective over g: every member calls it together); *out freed with free_matches.
   l NULL: this rank has nowhere to keep them; it takes part to fail the exchange. Any rank without
   memory fails it on every rank (HINT_ERR_NOMEM), and every rank tries again at its next call.
   *maxd: the group's largest degree, the same on every rank also on failure (0 when a rank had no
   memory for the degrees' exchange), so all choose by size alike. */
int neighbor_staged_matches(hint_group g, const struct vtopo_lists *l, struct staged_matches **out, int *maxd);
void neighbor_staged_matches_free(struct staged_matches *m);
void neighbor_staged_plan_free(struct staged_plan *p);

#endif
