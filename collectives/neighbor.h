/*
 * collectives/neighbor.h — what the neighbourhood algorithms keep per group (in the group's
 * collective state, coll_group.neighbor): distance_halving's communication pattern and morton's
 * copy plan, each built on the algorithm's first call on the group (the topology never changes).
 */
#ifndef HINT_COLLECTIVES_NEIGHBOR_H
#define HINT_COLLECTIVES_NEIGHBOR_H

#include "hint.h"

struct dh_pattern;
struct morton_plan;
struct neighbor_cache {
    struct dh_pattern *dh;
    struct morton_plan *morton;
};
/* The group's cache, made empty on first use; NULL when out of memory. */
struct neighbor_cache *neighbor_cache_of(hint_group g);
void neighbor_morton_plan_free(struct morton_plan *m);

#endif
