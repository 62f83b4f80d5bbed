/*
 * datatype/datatype.h — what the other layers may ask of a datatype.
 *
 * The datatype module owns struct hint_type_s: it is defined here only so that the getters
 * below inline (every call asks them); nothing outside datatype/ reads its fields directly.
 * Transport and collectives use only these calls plus the public hint_pack_range /
 * hint_unpack_range.
 */
#ifndef HINT_DATATYPE_H
#define HINT_DATATYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hint.h"
#include "runtime/registry.h"

/* The predefined element kinds; reductions dispatch on these. */
enum dt_basic {
    DT_NONE = -1,
    DT_BYTE = 0,
    DT_CHAR,
    DT_INT,
    DT_LONG,
    DT_INT32,
    DT_INT64,
    DT_UINT32,
    DT_UINT64,
    DT_FLOAT,
    DT_DOUBLE,
    DT_COMPLEX_FLOAT,
    DT_COMPLEX_DOUBLE,
    /* MPI's pair kinds for MINLOC/MAXLOC, layouts as the C structs {value; int index}; a packed
       element is the value then the index (12 bytes for the double and long pairs, whose
       extent is 16: the struct's tail padding is not data) */
    DT_FLOAT_INT,
    DT_DOUBLE_INT,
    DT_LONG_INT,
    DT_2INT,
    DT_NBASIC
};

/* The type object. Only datatype/ writes it; the other layers read it through the getters below,
   inline because every call asks them (an 8-byte reduction asks five). */
struct dt_plan;
struct hint_type_s {
    uint32_t magic;
    bool predefined;
    bool committed;
    bool freed; /* the user freed it; kept alive only by types built on it */
    bool run;   /* its data is exactly one run [true_lb, true_lb + size) */
    bool contig; /* committed and count elements are one dense run at the buffer address */
    int basic;   /* enum dt_basic when dense and of one kind, else DT_NONE (set at commit) */
    int sig;     /* kind of every predefined entry, DT_NONE when mixed, DT_SIG_EMPTY when none */
    size_t size; /* bytes of data in one element */
    ptrdiff_t lb, extent;
    ptrdiff_t true_lb, true_extent;
    const char *name;
    size_t refs;

    /* construction tree */
    int kind;
    size_t count;
    size_t blocklen;  /* HVECTOR */
    ptrdiff_t stride; /* HVECTOR, bytes */
    size_t *blocklens; /* HINDEXED */
    ptrdiff_t *displs; /* HINDEXED, bytes */
    hint_type *types;  /* the old types, each holding a reference */
    size_t ntypes;     /* 1, or count for a struct: block i uses types[ntypes == 1 ? 0 : i] */
    size_t mars_seg;   /* MARs segment in elements, 0 = default */

    struct dt_plan *plan; /* built by commit */
};

/* Whether t is one of the predefined types (they enter the registry when the library is
   loaded; this comparison is the fallback should that have failed). */
bool dt_live_predefined(hint_type t);
/* A live type handle: predefined, or built and not yet freed by the user. Asks the registry, never
   t itself, so a freed type's memory is not read (runtime/registry.h). A type the user freed but
   that a type built on it or a request in flight still holds is not live as a handle. */
static inline bool dt_live(hint_type t) { return reg_live(REG_TYPE, t) || dt_live_predefined(t); }
/* HINT_SUCCESS when t may be used in communication (predefined, or derived and committed),
   HINT_ERR_TYPE otherwise (NULL, freed, not committed). */
static inline int dt_check(hint_type t)
{
    if (!dt_live(t))
        return reg_reject(REG_TYPE, t, HINT_ERR_TYPE);
    return t->committed ? HINT_SUCCESS : HINT_ERR_TYPE;
}
/* Bytes of data in one element of t (MPI_Type_size). */
static inline size_t dt_size(hint_type t) { return t->size; }
/* MPI's lb and extent of t. */
static inline ptrdiff_t dt_lb(hint_type t) { return t->lb; }
static inline ptrdiff_t dt_extent(hint_type t) { return t->extent; }
/* 1 when count elements of t are one dense run of count * dt_size(t) bytes starting at the
   buffer address (lb == true_lb == 0, extent == size, no holes), so a plain memcpy moves them. */
static inline int dt_is_contig(hint_type t) { return t->contig; }
/* The predefined kind when t is predefined or every byte of it is one predefined kind laid out
   densely (e.g. contiguous(4, HINT_DOUBLE)); DT_NONE otherwise. */
static inline int dt_basic(hint_type t) { return t->basic; }
/* The size in bytes of one element of a predefined kind (0 for anything else). */
extern const size_t dt_basic_sizes[DT_NBASIC];
static inline size_t dt_basic_size(int basic) { return basic >= 0 && basic < DT_NBASIC ? dt_basic_sizes[basic] : 0; }
/* Name of a predefined kind ("double"), for messages. */
const char *dt_basic_name(int basic);

/* ---- additions beyond the fixed interface above ---- */

/* The kind of every predefined entry of t whatever the layout (so a strided vector of doubles
   gives DT_DOUBLE), DT_NONE when kinds are mixed or t holds no data. Two types whose kinds
   differ here cannot have matching signatures: p2p and collectives may return HINT_ERR_TYPE. */
static inline int dt_sig_basic(hint_type t) { return t->sig >= 0 ? t->sig : DT_NONE; }
/* The one counts-to-bytes conversion: bytes of data in count elements of t, after checking that
   t is usable (its dt_check code) and that the product does not overflow (HINT_ERR_COUNT). */
static inline int dt_count_bytes(hint_type t, size_t count, size_t *bytes)
{
    int st = dt_check(t);
    if (st != HINT_SUCCESS)
        return st;
    size_t size = dt_size(t);
    if (size != 0 && count > SIZE_MAX / size)
        return HINT_ERR_COUNT;
    *bytes = count * size;
    return HINT_SUCCESS;
}
/* The one type-signature rule, for p2p and collectives alike: data of kinds ka and kb (from
   dt_sig_basic) can match unless both are one predefined kind each and the kinds differ; bytes
   match any kind (moving raw bytes to and from typed buffers is a common idiom). */
static inline int dt_kind_for_matching(int k) { return k == DT_2INT ? DT_INT : k; } /* 2int is two ints */
static inline bool dt_kinds_match(int ka, int kb)
{
    ka = dt_kind_for_matching(ka);
    kb = dt_kind_for_matching(kb);
    return ka == kb || ka == DT_NONE || kb == DT_NONE || ka == DT_BYTE || kb == DT_BYTE;
}
/* MPI's true lb and true extent (the span actually touched), for temporary buffers. */
static inline ptrdiff_t dt_true_lb(hint_type t) { return t->true_lb; }
static inline ptrdiff_t dt_true_extent(hint_type t) { return t->true_extent; }
/* The bytes [*lo, *hi) relative to the buffer address that count elements of t touch (both 0 when
   nothing is touched): what must be mapped, registered or checked to lie on the shared heap.
   HINT_ERR_COUNT when the span does not fit a ptrdiff_t. */
int dt_span(hint_type t, size_t count, ptrdiff_t *lo, ptrdiff_t *hi);

/* Holds t for an operation that outlives the call (an isend of a derived type that the user
   frees before the wait): hint_type_free then only drops the user's reference. dt_release
   drops a hold; the type goes when the last one does. Both are no-ops on predefined types.
   The count is not atomic: like every hint call, from the rank's one calling thread. */
void dt_retain(hint_type t);
void dt_release(hint_type t);

/* Copies scount elements of st at src into rcount elements of rt at dst (same process or a
   peer buffer mapped over the shared heap), without packing the whole message: piece against
   piece (dt_copy_flat) when both types can be listed, else a contiguous side is packed into or
   unpacked from directly and two derived sides go through an 8 KiB bounce buffer.
   *bytes = scount * size(st). HINT_ERR_TRUNCATE when it exceeds rcount * size(rt) (nothing is
   copied); HINT_ERR_TYPE when both sides are of one predefined kind each and the kinds differ
   (byte excepted). */
int dt_copy_typed(const void *src, size_t scount, hint_type st, void *dst, size_t rcount, hint_type rt,
                  size_t *bytes);

/* One contiguous piece of the flattened list (IOVEC, representation b), and MARs' unit (c). The
   list is position independent: a peer that maps the owner's memory can walk it. */
struct dt_iov {
    ptrdiff_t disp; /* bytes from the buffer address */
    size_t len;
    size_t pos; /* packed offset of the piece inside one element of the type */
};
/* The merged pieces of one element of committed t, in packed order (*n of them); NULL when t has
   more than 2^20 pieces (the loop description alone serves it) or is predefined. */
const struct dt_iov *dt_iov(hint_type t, size_t *n);
/* The same list where the node's other ranks can read it, for the copy orders: *where says
   where. DT_IOV_HEAP: t's own list, on the shared heap. DT_IOV_HEAP_COPY: a copy on this rank's
   part of the shared heap, made on the first call and kept with t until it is freed (t committed
   before hint_init, a build without the malloc override, or more than 2^20 pieces, whose whole
   list is built then). DT_IOV_PRIVATE: no shared heap or no room in it: a list in this process's
   memory (the peers read it through CMA). NULL for predefined types or without memory.
   *id: the list's number, never given to another list of this process (a type freed and another
   committed at the same address gets a new one): what a peer may cache a list read through CMA by.
   A copy the heap had no room for is tried again only once the heap has grown. */
enum dt_iov_where { DT_IOV_HEAP, DT_IOV_HEAP_COPY, DT_IOV_PRIVATE };
const struct dt_iov *dt_iov_shared(hint_type t, size_t *n, enum dt_iov_where *where, uint64_t *id);
/* Tries to copy a piece list to the heap (dt_iov_shared), for the tests. */
extern unsigned long dt_iov_heap_tries;

/* A layout seen through its pieces: `count` elements `extent` bytes apart, each made of iov[0..niov);
   niov == 0 means contiguous bytes. What a rank needs to copy into or out of a peer's layout. */
struct dt_flat {
    const struct dt_iov *iov;
    size_t niov;
    ptrdiff_t extent;
};
/* Copies the first `bytes` of data of the layout s at sbase into the layout d at dbase, piece
   against piece (no packing); the two layouts must each hold at least `bytes`. */
void dt_copy_flat(const char *sbase, const struct dt_flat *s, char *dbase, const struct dt_flat *d, size_t bytes);

/* The data bytes [offset, offset + bytes) of the layout f at base as address ranges, in packed
   order, for process_vm_readv/writev: at most max of them into out (struct iovec), ranges that
   touch merged into one. Returns how many it wrote; *covered gets the data bytes they hold
   (less than `bytes` when max ran out first: ask again from offset + *covered). */
struct iovec;
size_t dt_flat_iovec(const struct dt_flat *f, char *base, size_t offset, size_t bytes, struct iovec *out,
                     size_t max, size_t *covered);

/* Pack representations of issue 9; HINT_PACK=loop|iovec|mars|auto picks the default. */
enum dt_rep { DT_REP_AUTO = 0, DT_REP_LOOP, DT_REP_IOVEC, DT_REP_MARS, DT_NREP };
const char *dt_rep_name(int rep);
/* The representation the HINT_PACK setting gives (DT_REP_AUTO when unset or "auto"). */
int dt_rep_default(void);
/* What a pack of count elements of committed t runs with rep (AUTO resolved by the cost model;
   IOVEC and MARs fall back to LOOP for types beyond DT_IOV_MAX pieces). */
int dt_rep_choose(hint_type t, size_t count, int rep);
/* hint_pack_range / hint_unpack_range with an explicit representation (DT_REP_AUTO = as the
   public calls). Same arguments, checks and results as the public calls, except that a type the
   user has freed while a dt_retain hold keeps it alive is still accepted: use these from
   transport and collectives. */
int dt_pack_range_rep(const void *in, size_t count, hint_type t, size_t offset, void *out, size_t len,
                      size_t *done, int rep);
int dt_unpack_range_rep(const void *in, size_t len, size_t offset, void *out, size_t count, hint_type t,
                        size_t *done, int rep);
/* MARs segment of t in elements (0 = default: HINT_PACK_SEGMENT, else about 16 KiB of extent). */
int dt_set_segment(hint_type t, size_t elems);
/* The calibrated cost model, ns per unit: loop item entry, loop block, iovec piece, MARs piece. */
void dt_cost_model(double ns[4]);
/* Writes the committed loop description of t as text (NUL-terminated, truncated to n bytes);
   returns the length it needs without the NUL. Equal layouts give equal text. */
size_t dt_describe(hint_type t, char *buf, size_t n);
/* Merged pieces of one element of committed t (the IOVEC length) and loop items entered per
   element; for benchmarks and tests. */
size_t dt_nblocks(hint_type t);
size_t dt_loop_visits(hint_type t);

#endif
