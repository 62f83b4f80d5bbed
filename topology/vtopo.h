/*
 * topology/vtopo.h — virtual topologies of groups (cartesian grids and adjacency graphs), as
 * MPI's: what hint_cart_* and hint_graph_create_adjacent attach to the group they create, and
 * what the neighbourhood collectives read back.
 */
#ifndef HINT_TOPOLOGY_VTOPO_H
#define HINT_TOPOLOGY_VTOPO_H

#include <stdbool.h>

#include "hint.h"

/* A group's neighbours in the order the neighbourhood collectives use for their blocks. */
struct vtopo_lists {
    bool cart;           /* cartesian: sources == dests, per dimension the -1 then the +1 rank */
    int indegree, outdegree;
    const int *sources;  /* group ranks or HINT_PROC_NULL */
    const int *dests;
};

/* HINT_SUCCESS and the lists of g's topology; HINT_ERR_TOPOLOGY when g has none. */
int vtopo_lists(hint_group g, struct vtopo_lists *out);
/* g's part key of its topology (runtime/group.h's grp_part: NULL when g has none), for a check
   without a call (collectives/api.c's empty neighbourhood calls); -1 before vtopo_setup. */
extern int vtopo_key;
/* Registers the topology as a part of groups (runtime/group.h); hint_init, through the topology
   component of lib/components.c. */
int vtopo_setup(void);

#endif
