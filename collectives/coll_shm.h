/*
 * collectives/coll_shm.h — the collectives' node area: the shared memory of the shm barrier and
 * bcast, the staged and the shared-heap algorithms. The node segment holds it as opaque bytes
 * (runtime/transport.h: rt_node_area_add; the size is coll_shm_bytes(nlocal)); this header lays
 * it out, collectives/group_state.c hands out its slots, one per group with more than one rank.
 *
 *   struct coll_shm_slot    [COLL_SHM_SLOTS]  each followed by nlocal member areas
 *                                             (coll_shm_member_stride(nlocal) bytes each)
 * Slot 0 belongs to the world group. A slot is COLL_SHM_SLOTS * (3*64 + 16 * (2*64 + 4 KiB)) +
 * nlocal * (192 + 32 nlocal) bytes: 4.3 MiB + 64 * nlocal * (192 + 32 nlocal) for all of them.
 */
#ifndef HINT_COLL_SHM_H
#define HINT_COLL_SHM_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define COLL_CACHE_LINE 64
#define COLL_SHM_SLOTS 64
#define COLL_BCAST_CHUNK (4 * 1024) /* bcast: bytes of one cell of the ring */
#define COLL_BCAST_CELLS 16         /* bcast: cells in the ring, so the root can be 16 chunks ahead */

/* bcast: a cell's chunk number + 1 (written by the root), on the cell's own line with room for a
   chunk of up to COLL_BCAST_INLINE bytes, so that a small message travels in the same line as its
   number. How many reads of the cell finished (every non-root adds 1 per chunk) is on a line of
   its own (struct coll_bcast_done): when the readers added to the cell's line itself, each call's
   line went to the reader in the modified state and back (the reader's add and the root's next
   store each took it from the other core), where now the root's store finds the line only shared
   and the root reads the count once per COLL_BCAST_CELLS chunks (issue 18: bcast 8 B at P=2). */
#define COLL_BCAST_INLINE (COLL_CACHE_LINE - 8)
struct coll_bcast_ctl {
    _Atomic uint64_t seq;
    char inline_data[COLL_BCAST_INLINE];
};
static_assert(sizeof(struct coll_bcast_ctl) == COLL_CACHE_LINE, "a bcast cell's control is one line");
struct coll_bcast_done {
    _Atomic uint64_t n;
    char pad[COLL_CACHE_LINE - 8];
};
static_assert(sizeof(struct coll_bcast_done) == COLL_CACHE_LINE, "a bcast cell's count is one line");

struct coll_shm_slot {
    _Atomic uint32_t used;     /* 0 free, 1 taken (CAS by the group's rank 0) */
    _Atomic uint32_t refs;     /* members that have not freed the group yet */
    _Atomic uint64_t generation; /* groups that have held the slot (bumped at acquisition) */
    _Atomic uint64_t mismatch; /* tag of the last call in which a copier found two members'
                                  block sizes disagree (read after the call's closing barrier) */
    _Atomic uint64_t cma_refused; /* copy orders (collectives/alltoall_order.c): 2 x the tag of the
                                  call whose CMA probe a member found refused, 2 x tag + 1 of one
                                  in which a CMA copy failed (read after a barrier) */
    _Atomic uint32_t stage_ahead; /* staged collectives: members in coll_stage_begin's ahead wait
                                  (then a post rings every member, not only its readers) */
    uint32_t pad_ahead;
    char pad0[COLL_CACHE_LINE - 40];
    _Atomic uint64_t arrive;   /* barrier: arrivals so far (all barriers of the group) */
    char pad1[COLL_CACHE_LINE - 8];
    _Atomic uint64_t release;  /* barrier: number of the last completed barrier */
    char pad2[COLL_CACHE_LINE - 8];
    struct coll_bcast_ctl bc[COLL_BCAST_CELLS];
    struct coll_bcast_done bc_done[COLL_BCAST_CELLS];
    char data[COLL_BCAST_CELLS][COLL_BCAST_CHUNK];
};
static_assert(sizeof(struct coll_shm_slot) % COLL_CACHE_LINE == 0, "slots are whole lines");

/* A member's datatype layout for one side of alltoall / allgather when it is derived: every
   block is `count` elements `extent` bytes apart, each made of the `niov` pieces at heap offset
   iov_off (the type's flattened list, position independent); niov == 0: contiguous bytes. The
   buffer's first touched byte is `lo` bytes from its address (negative lower bounds). */
struct coll_shm_layout {
    uint64_t iov_off, niov, count;
    int64_t extent, lo;
    uint64_t iov_id; /* the list's number in its owner's process (dt_iov_shared): a reader's cache key */
};

/* After each slot: one area per member of the group, where it publishes its buffers (heap
   offsets), their layouts, the signature of its call and, for the v variants, its counts and
   displacements (4 * nlocal values). */
struct coll_shm_member {
    uint64_t soff, roff;       /* heap offsets of the send and receive buffers, UINT64_MAX: off heap */
    _Atomic uint64_t flag;     /* staged collectives: whether this member's staging areas exist (collectives/staging.c) */
    uint64_t stage_off;        /* staged collectives: heap offset of this member's staging area */
    int32_t socket;            /* NUMA-aware algorithms: the socket this member runs on */
    int32_t pid;               /* copy orders: this member's process, for CMA to buffers off the heap */
    struct coll_shm_layout sl, rl; /* derived layouts of the send and receive buffers */
    uint64_t sig;              /* shared-heap algorithms: what this member's call must agree on */
    char pad[48];
    uint64_t v[];              /* scounts[P], sdispls[P], rdispls[P], rcounts[P] in bytes (v variants) */
};
static_assert(sizeof(struct coll_shm_member) == 3 * COLL_CACHE_LINE, "member area header: three lines");

static inline size_t coll_shm_member_stride(int nlocal)
{
    return (sizeof(struct coll_shm_member) + 4 * sizeof(uint64_t) * (size_t)nlocal + COLL_CACHE_LINE - 1) /
           COLL_CACHE_LINE * COLL_CACHE_LINE;
}

/* Bytes of one slot with its member areas, and of the whole area. */
static inline size_t coll_shm_slot_stride(int nlocal)
{
    return sizeof(struct coll_shm_slot) + (size_t)nlocal * coll_shm_member_stride(nlocal);
}
size_t coll_shm_bytes(int nlocal);

/* Where this rank mapped the area (collectives/group_state.c); base NULL: no node area. */
extern struct coll_shm_area {
    char *base;
    size_t slot_stride, member_stride;
} coll_shm;

static inline struct coll_shm_slot *coll_shm_slot(int i)
{
    return (struct coll_shm_slot *)(coll_shm.base + (size_t)i * coll_shm.slot_stride);
}
static inline struct coll_shm_member *coll_shm_member(int slot, int member)
{
    return (struct coll_shm_member *)((char *)coll_shm_slot(slot) + sizeof(struct coll_shm_slot) +
                                      (size_t)member * coll_shm.member_stride);
}

#endif
