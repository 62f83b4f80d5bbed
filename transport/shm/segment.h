/*
 * transport/shm/segment.h — the node segment: one POSIX shm object per node and job holding a
 * header, a control block per rank, one channel per ordered pair of ranks (transport/shm/cells.h)
 * and the node areas that layers above asked for (runtime/transport.h: rt_node_area_add), which
 * the segment holds as opaque bytes and the asking layer lays out (the collectives' slots:
 * collectives/coll_shm.h; the shared heap's handshake: runtime/heap.c).
 *
 * Layout (offsets from the mapping's start, every part cache-line aligned):
 *   struct shm_seg_hdr                    once
 *   struct shm_rank_ctl  [nlocal]         doorbell + sleep flag of each rank
 *   struct shm_chan      [nlocal*nlocal]  channel s->r at index s*nlocal + r, each followed by
 *                                         ncells cells of SHM_CELL_HDR + payload bytes
 *   node areas           [rt_node_area_count()]  each rt_node_area_bytes(id, nlocal) bytes
 * Size: hdr + nlocal*128 + nlocal^2 * (64 + ncells * (64 + payload)) + the areas (the collectives'
 * slots: SHM_COLL_SLOTS * (3*64 + 16 * (2*64 + 4 KiB) + nlocal * (128 + 32 nlocal)) = 4.3 MiB +
 * 64 * nlocal * (128 + 32 nlocal)); payload is the largest power of two <= budget /
 * (nlocal^2 * ncells) - 64, clamped to [256 B, 32 KiB], budget HINT_SHM_BUDGET (default 48 MiB).
 * So the segment stays under 64 MiB up to P = 64 (35 MiB) and 128 (40 MiB); beyond that the
 * 256 B floor makes it grow as P^2.
 */
#ifndef HINT_TRANSPORT_SHM_SEGMENT_H
#define HINT_TRANSPORT_SHM_SEGMENT_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/transport.h"

#define SHM_CACHE_LINE 64
#define SHM_NCELLS 8
#define SHM_MAGIC 0x68696e74736567ull /* "hintseg" */

struct shm_seg_hdr {
    uint64_t magic;
    uint64_t total_size;      /* bytes of the whole mapping */
    uint32_t nlocal;          /* ranks on this node */
    uint32_t ncells;          /* cells per channel */
    uint32_t payload;         /* payload bytes per cell */
    uint32_t cell_stride;     /* bytes from one cell to the next */
    uint64_t chan_stride;     /* bytes from one channel (with its cells) to the next */
    uint64_t ctl_off, chan_off;
    _Atomic uint32_t attached; /* unused since the object has no name to unlink (kept: layout) */
    _Atomic uint32_t ready;    /* set by the creator once the layout above is written */
    _Atomic uint32_t cma_refused; /* set once the kernel refused process_vm_readv here */
    uint32_t nareas;           /* node areas laid out (rt_node_area_count() of the creator) */
    uint64_t area_off[RT_NODE_AREAS]; /* where each node area starts */
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

struct shm_node {
    void *base;
    size_t size;
    struct shm_seg_hdr *hdr;
    int nlocal, me;
    int world0;                /* world rank of local rank 0: a node's ranks are consecutive */
    int fd;                    /* local rank 0: the object, open while others may open it; else -1 */
    char name[64];             /* for messages: the object itself has no name */
};

/* Bytes the segment needs for nlocal ranks (with the node areas asked for so far), and the
   payload size chosen. */
size_t shm_segment_size(int nlocal, uint32_t *payload);
/* Create (local rank 0) or attach (others) the node segment; see segment.c for the handshake. */
int shm_node_open(struct shm_node **out);
void shm_node_close(struct shm_node *n);

static inline struct shm_rank_ctl *shm_ctl(const struct shm_node *n, int local)
{
    return (struct shm_rank_ctl *)((char *)n->base + n->hdr->ctl_off) + local;
}
static inline void *shm_area(const struct shm_node *n, int id)
{
    return id < (int)n->hdr->nareas ? (char *)n->base + n->hdr->area_off[id] : NULL;
}

/* Tell rank `local` that there is something for it; wakes it if it sleeps. */
void shm_ring(const struct shm_node *n, int local);
/* Wake rank `local` only if it sleeps: for waits whose condition is a shared word the waiter
   reads itself (barrier release, bcast counters), store that word first. Cheaper than
   shm_ring, which every event that progress() is gated on must use. */
void shm_wake(const struct shm_node *n, int local);
/* shm_wake without its fence, for a caller that made one after its store (several wakes, one fence). */
void shm_wake_after_fence(const struct shm_node *n, int local);
/* Sleep until this rank's bell moves from `seen`, done(arg) holds, or timeout_ns passes. */
void shm_sleep(const struct shm_node *n, uint32_t seen, long timeout_ns, bool (*done)(void *), void *arg);

#endif
