/*
 * collectives/nbc_heap.h — the nonblocking collectives' single-copy schedules over the shared
 * heap (nbc_heap.c): the node area of their descriptors, whether a call can run one, the builder.
 */
#ifndef HINT_COLL_NBC_HEAP_H
#define HINT_COLL_NBC_HEAP_H

#include <stdbool.h>

#include "collectives/sched.h"

/* Asks for the descriptors' node area (the collectives component's setup, before transports). */
int nbc_heap_setup(void);
/* The operation has a single-copy schedule and the call's group can run it: one node, a
   collective slot, the shared heap active, more than one rank. */
bool nbc_heap_usable(const struct coll_args *a);
/* Builds the call's single-copy schedule: one poll step (and this rank's own block copied). */
void nbc_heap(struct sched *s, const struct coll_args *a);

#endif
