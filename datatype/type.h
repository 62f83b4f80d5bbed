/*
 * datatype/type.h — the layout of struct hint_type_s and the module-internal plumbing shared by
 * the datatype sources. Private to datatype/: other layers use datatype/datatype.h.
 *
 * A type is a node of a construction tree (kind + parameters + referenced old types). Nodes
 * are reference counted: the user's handle holds one reference and every type built on top holds
 * one, so freeing a building block never breaks the types made from it (as MPI requires).
 * Commit flattens the tree once into the canonical merged block list and derives from it the
 * three pack representations (struct dt_plan); nothing after commit looks at the tree again.
 */
#ifndef HINT_DATATYPE_TYPE_H
#define HINT_DATATYPE_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype/datatype.h"
#include "runtime/registry.h"

#define DT_MAGIC 0x68696e74u /* "hint": catches freed or foreign pointers */
#define DT_SIG_EMPTY (-2)    /* signature kind of a type without data (no predefined entry) */

enum dt_kind {
    DT_K_BASIC = 0,
    DT_K_HVECTOR, /* count blocks of blocklen old elements, stride bytes apart (contiguous, vector) */
    DT_K_HINDEXED, /* blocks[i] of types[i] at displs[i] bytes (indexed family and struct) */
    DT_K_RESIZED,  /* old with a new lb and extent */
};

/* One item of the nested-loop description (representation a). Items form a tree stored in
   pre-order: a LOOP item is followed directly by its body, `span` items in all. Displacements
   are relative to the base of the enclosing item, so equal sub-layouts compare equal whatever
   their position. */
struct dt_item {
    ptrdiff_t disp;   /* first repetition, bytes from the enclosing base */
    ptrdiff_t stride; /* bytes between repetitions (0 when count == 1) */
    size_t count;     /* repetitions, >= 1 */
    size_t blocklen;  /* DATA: bytes copied per repetition; LOOP: 0 */
    size_t nbody;     /* LOOP: items directly in the body; DATA: 0 */
    size_t span;      /* items of this subtree, itself included */
    size_t size;      /* packed bytes of one repetition */
};


struct dt_plan {
    struct dt_item *items; /* items[0] is the root LOOP (count 1, stride extent) */
    size_t nitems;
    struct dt_item fused; /* a single DATA item equal to `count` elements, when fusable */
    bool fusable;
    struct dt_iov *iov; /* NULL when the list would exceed DT_IOV_MAX pieces */
    size_t niov;
    size_t nblocks;     /* merged pieces per element (== niov when iov is kept) */
    /* The list where the node's other ranks can read it (dt_iov_shared), made on first use when
       iov is not on the shared heap: a copy on the heap (heap_shared), else, with no heap or no
       room there, the whole list in private memory (only when iov is NULL). */
    struct dt_iov *shared;
    bool heap_shared;
    /* The heap had no room for that copy: tried again only once the heap has grown since
       (heap_growth() other than refused_growth), not on every call. */
    bool heap_refused;
    unsigned refused_growth;
    uint64_t list_id;   /* the list's number in this process (dt_iov_shared), 0: none yet */
    size_t loop_visits; /* DATA items entered per element by the loop interpreter (cost model) */
};

/* struct hint_type_s is in datatype/datatype.h, beside the getters that inline its fields. */


/* MARs / IOVEC are built only up to this many merged pieces per element; bigger irregular types
   pack with the loop description alone. */
#define DT_IOV_MAX ((size_t)1 << 20)

/* construct.c */
int dt_valid(hint_type t); /* HINT_SUCCESS for a live (maybe uncommitted) type */

/* commit.c */
int dt_plan_build(hint_type t);
void dt_plan_free(struct dt_plan *p);
/* Writes the n merged pieces of one element of committed t (n == its plan's nblocks) to out,
   whatever their number (no DT_IOV_MAX): the list commit keeps only up to that size. */
int dt_iov_fill(hint_type t, struct dt_iov *out, size_t n);

#endif
