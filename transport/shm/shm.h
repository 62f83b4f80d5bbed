/*
 * transport/shm/shm.h — the node segment: one POSIX shm object per node and job holding a control
 * block per rank and one channel per ordered pair of ranks on the node.
 *
 * Layout (offsets from the mapping's start, every part cache-line aligned):
 *   struct shm_seg_hdr                    once
 *   struct shm_rank_ctl  [nlocal]         doorbell + sleep flag of each rank
 *   struct shm_chan      [nlocal*nlocal]  channel s->r at index s*nlocal + r, each followed by
 *                                         ncells cells of SHM_CELL_HDR + payload bytes
 *   struct shm_coll_slot [SHM_COLL_SLOTS]  control and data of the shared-memory collectives
 *                                         of one group each (slot 0: the world)
 * Size: hdr + nlocal*128 + nlocal^2 * (64 + ncells * (64 + payload))
 *       + SHM_COLL_SLOTS * (3*64 + SHM_BCAST_CELLS * (64 + SHM_COLL_CHUNK) + nlocal * member area of
 *       128 + 32*nlocal B) (4.3 MiB + 64 * nlocal * (128 + 32 nlocal)); payload is the largest
 * power of two <= budget / (nlocal^2 * ncells) - 64, clamped to [256 B, 32 KiB], budget
 * HINT_SHM_BUDGET (default 48 MiB). So the segment stays under 64 MiB up to P = 64 (35 MiB) and
 * 128 (40 MiB); beyond that the 256 B floor makes it grow as P^2.
 *
 * A cell moves between its two owners through `state`: FREE (sender may fill it), FULL
 * (receiver owns it), CTS (a matched rendezvous header handed back to the sender as "send the
 * rest through cells"), DONE (the receiver copied the data itself: single copy, send complete). The sender announces cells in order through the channel's index ring, so the receiver
 * sees them in send order even though cells are recycled out of order.
 */
#ifndef HINT_TRANSPORT_SHM_H
#define HINT_TRANSPORT_SHM_H

#include <assert.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#define SHM_CACHE_LINE 64
#define SHM_NCELLS 8
#define SHM_MAGIC 0x68696e74736567ull /* "hintseg" */

enum shm_cell_state { SHM_CELL_FREE = 0, SHM_CELL_FULL = 1, SHM_CELL_CTS = 2, SHM_CELL_DONE = 3 };
/* How the data of a rendezvous message moves (the protocol table of p2p.c). */
enum shm_path { SHM_PATH_BOUNCE = 0, SHM_PATH_HEAP = 1, SHM_PATH_CMA = 2, SHM_NPATHS };
enum shm_cell_kind { SHM_EAGER = 1, SHM_RTS = 2, SHM_FRAG = 3 };

struct shm_seg_hdr {
    uint64_t magic;
    uint64_t total_size;      /* bytes of the whole mapping */
    uint32_t nlocal;          /* ranks on this node */
    uint32_t ncells;          /* cells per channel */
    uint32_t payload;         /* payload bytes per cell */
    uint32_t cell_stride;     /* bytes from one cell to the next */
    uint64_t chan_stride;     /* bytes from one channel (with its cells) to the next */
    uint64_t ctl_off, chan_off;
    _Atomic uint32_t attached; /* ranks that have mapped it; the last unlinks the name */
    _Atomic uint32_t ready;    /* set by the creator once the layout above is written */
    uint64_t heap_part;        /* shared heap: bytes per rank, set by local rank 0 (0: none) */
    _Atomic uint32_t heap_attached; /* ranks that have mapped the heap; the last unlinks it */
    _Atomic uint32_t cma_refused; /* set once the kernel refused process_vm_readv here */
    uint64_t coll_off;         /* the collective slots (below) */
    uint64_t coll_stride;      /* bytes from one slot to the next */
};

/* One per rank, two lines: others write the bell, only the owner writes `sleeping`. */
struct shm_rank_ctl {
    _Atomic uint32_t bell;     /* futex word: bumped by whoever leaves work for this rank */
    int32_t pid;
    char pad0[SHM_CACHE_LINE - 8];
    _Atomic uint32_t sleeping; /* 1 while the owner is (about to be) in futex_wait on bell */
    char pad1[SHM_CACHE_LINE - 4];
};
static_assert(sizeof(struct shm_rank_ctl) == 2 * SHM_CACHE_LINE, "rank control is two lines");

/* Header of a channel; written only by the sender. */
struct shm_chan {
    _Atomic uint64_t write_seq;        /* cells announced so far */
    uint32_t idx_ring[SHM_NCELLS];     /* idx_ring[seq % ncells] = cell index of cell seq */
    char pad[SHM_CACHE_LINE - 8 - 4 * SHM_NCELLS];
};
static_assert(sizeof(struct shm_chan) == SHM_CACHE_LINE, "channel header is one line");

/* Header of a cell; filled by the sender while FREE, read by the receiver while FULL. */
struct shm_cell {
    _Atomic uint32_t state;   /* enum shm_cell_state: the ownership hand-over */
    uint32_t kind;            /* enum shm_cell_kind */
    uint32_t ctx;             /* context id of the group (messages of other groups never match) */
    int32_t tag;
    uint64_t total;           /* EAGER/RTS: bytes of the whole message */
    uint64_t msgid;           /* RTS/FRAG: sender-chosen id tying fragments to their header */
    uint64_t offset;          /* FRAG: where this payload goes in the message */
    uint32_t len;             /* payload bytes in this cell */
    uint32_t path;            /* RTS: enum shm_path */
    uint64_t addr;            /* RTS: heap offset (HEAP) or sender address (CMA) of the data */
    int32_t sig;              /* EAGER/RTS: predefined kind of the send type (DT_NONE: mixed) */
    char pad[SHM_CACHE_LINE - 60];
    /* payload follows */
};
static_assert(sizeof(struct shm_cell) == SHM_CACHE_LINE, "cell header is one line");

/* ---- collective slots: one per group that uses the shared-memory collectives ---- */
#define SHM_COLL_SLOTS 64
#define SHM_COLL_CHUNK (4 * 1024) /* bcast: bytes of one cell of the ring */
#define SHM_BCAST_CELLS 16        /* bcast: cells in the ring, so the root can be 16 chunks ahead */

/* bcast: a cell's chunk number + 1 (written by the root) and how many reads of it finished
   (every non-root adds 1 per chunk), on the cell's own line, with room for a chunk of up to
   SHM_BCAST_INLINE bytes so that a small message travels in the same line as its number. */
#define SHM_BCAST_INLINE (SHM_CACHE_LINE - 16)
struct shm_bcast_ctl {
    _Atomic uint64_t seq;
    _Atomic uint64_t done;
    char inline_data[SHM_BCAST_INLINE];
};

struct shm_coll_slot {
    _Atomic uint32_t used;     /* 0 free, 1 taken (CAS by the group's rank 0) */
    _Atomic uint32_t refs;     /* members that have not freed the group yet */
    _Atomic uint64_t generation; /* groups that have held the slot (bumped at acquisition) */
    _Atomic uint64_t mismatch; /* tag of the last call in which a copier found two members'
                                  block sizes disagree (read after the call's closing barrier) */
    char pad0[SHM_CACHE_LINE - 24];
    _Atomic uint64_t arrive;   /* barrier: arrivals so far (all barriers of the group) */
    char pad1[SHM_CACHE_LINE - 8];
    _Atomic uint64_t release;  /* barrier: number of the last completed barrier */
    char pad2[SHM_CACHE_LINE - 8];
    struct shm_bcast_ctl bc[SHM_BCAST_CELLS];
    char data[SHM_BCAST_CELLS][SHM_COLL_CHUNK];
};
static_assert(sizeof(struct shm_coll_slot) % SHM_CACHE_LINE == 0, "slots are whole lines");

struct shm_node {
    void *base;
    size_t size;
    struct shm_seg_hdr *hdr;
    int nlocal, me;
    char name[64];
};

/* Bytes the segment needs for nlocal ranks, and the payload size chosen. */
size_t shm_segment_size(int nlocal, uint32_t *payload);
/* Create (local rank 0) or attach (others) the node segment; see segment.c for the handshake. */
int shm_node_open(struct shm_node **out);
void shm_node_close(struct shm_node *n);

static inline struct shm_rank_ctl *shm_ctl(const struct shm_node *n, int local)
{
    return (struct shm_rank_ctl *)((char *)n->base + n->hdr->ctl_off) + local;
}
static inline struct shm_chan *shm_chan(const struct shm_node *n, int src, int dst)
{
    return (struct shm_chan *)((char *)n->base + n->hdr->chan_off +
                               (size_t)(src * n->nlocal + dst) * n->hdr->chan_stride);
}
static inline struct shm_cell *shm_cell(const struct shm_node *n, struct shm_chan *c, uint32_t i)
{
    return (struct shm_cell *)((char *)c + SHM_CACHE_LINE + (size_t)i * n->hdr->cell_stride);
}
static inline void *shm_payload(struct shm_cell *cell) { return cell + 1; }

/* A member's datatype layout for one side of alltoall / allgather when it is derived: every
   block is `count` elements `extent` bytes apart, each made of the `niov` pieces at heap offset
   iov_off (the type's flattened list, position independent); niov == 0: contiguous bytes. The
   buffer's first touched byte is `lo` bytes from its address (negative lower bounds). */
struct shm_coll_layout {
    uint64_t iov_off, niov, count;
    int64_t extent, lo;
};

/* After each slot: one area per member of the group, where it publishes its buffers (heap
   offsets), their layouts, the signature of its call and, for the v variants, its counts and
   displacements (4 * nlocal values). */
struct shm_coll_member {
    uint64_t soff, roff;       /* heap offsets of the send and receive buffers, UINT64_MAX: off heap */
    _Atomic uint64_t flag;     /* staged collectives: number of the last call whose data is staged */
    uint64_t stage_off;        /* staged collectives: heap offset of this member's staging area */
    int32_t socket;            /* NUMA-aware algorithms: the socket this member runs on */
    int32_t unused;
    struct shm_coll_layout sl, rl; /* derived layouts of the send and receive buffers */
    uint64_t sig;              /* shared-heap algorithms: what this member's call must agree on */
    uint64_t v[];              /* scounts[P], sdispls[P], rdispls[P], rcounts[P] in bytes (v variants) */
};
_Static_assert(sizeof(struct shm_coll_member) == 2 * SHM_CACHE_LINE, "member area header: two lines");

static inline size_t shm_coll_member_stride(int nlocal)
{
    return (sizeof(struct shm_coll_member) + 4 * sizeof(uint64_t) * (size_t)nlocal + SHM_CACHE_LINE - 1) /
           SHM_CACHE_LINE * SHM_CACHE_LINE;
}

static inline struct shm_coll_slot *shm_coll_slot(const struct shm_node *n, int i)
{
    return (struct shm_coll_slot *)((char *)n->base + n->hdr->coll_off + (size_t)i * n->hdr->coll_stride);
}
static inline struct shm_coll_member *shm_coll_member(const struct shm_node *n, int slot, int member)
{
    return (struct shm_coll_member *)((char *)shm_coll_slot(n, slot) + sizeof(struct shm_coll_slot) +
                                      (size_t)member * shm_coll_member_stride(n->nlocal));
}

/* Take a free slot for a group of `members` ranks (reset, refs = members); -1 when none. */
int shm_coll_slot_acquire(const struct shm_node *n, int members);
/* A member is done with the slot; the last one frees it. */
void shm_coll_slot_release(const struct shm_node *n, int slot);

/* Tell rank `local` that there is something for it; wakes it if it sleeps. */
void shm_ring(const struct shm_node *n, int local);
/* Wake rank `local` only if it sleeps: for waits whose condition is a shared word the waiter
   reads itself (barrier release, bcast counters), store that word first. Cheaper than
   shm_ring, which every event that progress() is gated on must use. */
void shm_wake(const struct shm_node *n, int local);
/* Sleep until this rank's bell moves from `seen`, done(arg) holds, or timeout_ns passes. */
void shm_sleep(const struct shm_node *n, uint32_t seen, long timeout_ns, bool (*done)(void *), void *arg);

#endif

/* ---- point to point over the node segment (transport/shm/p2p.c) ---- */
struct hint_request_s;
int shm_p2p_init(struct shm_node *n);
void shm_p2p_fini(void);
/* Post a send / receive; peer fields are local ranks of this node. May complete at once. */
void shm_isend(struct hint_request_s *r);
void shm_irecv(struct hint_request_s *r);
void shm_progress(void);
/* Requests still owned by the transport (for finalize's leak report). */
int shm_pending(void);
