/*
 * collectives/derived.h — collectives on derived datatypes, by staging through contiguous
 * bytes (derived.c). api.c calls these when a type of the call is not contiguous.
 */
#ifndef HINT_COLL_DERIVED_H
#define HINT_COLL_DERIVED_H

#include <stdbool.h>
#include <stddef.h>

#include "hint.h"

bool coll_is_derived(hint_type t);
/* HINT_ERR_TYPE when both types are made of one predefined kind each and the kinds differ
   (bytes match any kind), HINT_SUCCESS otherwise. */
int coll_same_kind(hint_type a, hint_type b);
int coll_derived_reduce(int mode, const void *s, void *r, size_t count, hint_type t, hint_op op, int root,
                        hint_group g);
int coll_derived_blocks(int op, const void *s, size_t sc, hint_type stype, void *r, size_t rc, hint_type rtype,
                        int root, hint_group g);
int coll_derived_alltoallv(const void *s, const size_t *sc, const size_t *sd, hint_type stype, void *r,
                           const size_t *rc, const size_t *rd, hint_type rtype, hint_group g);
int coll_derived_vblocks(int op, const void *s, const size_t *sc_v, size_t sc, hint_type stype, void *r,
                         const size_t *rc_v, size_t rc, const size_t *displs, hint_type rtype, int root,
                         hint_group g);

#endif
