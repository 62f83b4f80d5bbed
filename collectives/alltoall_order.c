/*
 * alltoall(v) and allgather(v) over the copy orders (row / column / hilbert / morton /
 * morton_numa) — the HINT paper's single-copy alltoall (Alg. 3) over the
 * shared heap: every rank publishes the heap offsets of its send and receive buffers in the
 * group's collective slot, a barrier, then each rank copies its own list of P blocks (the
 * order's tuples, Alg. 1-2, built once per group; morton: the Morton paper's Z curve cut into
 * P equal segments) straight from the sender's buffer into the
 * receiver's, with the hybrid temporal/non-temporal copy (Alg. 4), a store fence, a barrier.
 * Needs the group on one node with a collective slot. A buffer off the heap (stack, static, mmap)
 * is published as its address, and the blocks that touch it are copied in the same order with
 * process_vm_readv/writev (CMA, single copy); a derived side goes as its pieces turned into
 * iovecs (dt_flat_iovec, up to IOV_MAX a call on each side), or, when its pieces are small
 * (the kernel's cost is per iovec), through a buffer the CPU packs or unpacks (cma_move).
 * A derived type's piece list is read by the peers from the heap: the type's own list, or a copy
 * made there on its first call and kept with the type (committed before hint_init, a build
 * without the malloc override, more than 2^20 pieces: dt_iov_shared); with no shared heap or no
 * room in it, through CMA from the owner's memory. When the kernel refuses CMA (probed once per
 * group), every rank sees it and the call runs pairwise exchange (ring for allgather) instead.
 * HINT_COLL_STATS counts the paths. Any P.
 * Cost: 2 barriers + P block copies per rank, no message at all; each block is copied once.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "collectives/copy.h"
#include "collectives/order/order.h"
#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "runtime/runtime.h"
#include "topology/topology.h"

/* What the order algorithms keep on a group: tuples per order, thresholds per block size. */
#define THRESH_SLOTS 16

struct thresh {
    size_t block;     /* 0: unused */
    struct copy_thresh th; /* Alg. 4's T (fixed) and R (adjusted per call), copy.h */
};

/* A block this rank receives, the rank whose list copies it, and its place in the order. */
struct inbound {
    uint32_t seq, src, owner;
};

#define NUMA_KIND ORDER_NKINDS /* index of the NUMA-aware schedule in the per-kind arrays */

enum cma_state { CMA_UNKNOWN, CMA_OK, CMA_REFUSED };

struct order_cache {
    struct order_tuple *tuples[ORDER_NKINDS];
    struct order_tuple *numa;   /* NUMA-aware Morton list (numa_s sockets), built on first use */
    struct inbound *in[ORDER_NKINDS + 1]; /* this rank's blocks in order, for buffers off the heap */
    struct thresh th[THRESH_SLOTS];
    int mode;         /* enum copy_mode from HINT_COPY */
    int cma;          /* enum cma_state: probed on the group's first call with a buffer off the heap */
    /* This call's piece lists published off the heap (SIDE_ADDR), [2p] send and [2p + 1]
       receive side of member p: copies read through CMA, kept in `read` (this rank's own: its
       address). */
    const struct dt_iov **lists;
    struct read_list *read; /* LISTS_KEPT per member: the lists read from it, by their number */
    int nread;              /* entries of read: LISTS_KEPT * P */
    size_t read_bytes;      /* the capacity of all of read's lists, kept under read_max */
    size_t read_max;        /* HINT_TEST_LISTS_KEPT_MAX: 64 MiB by default */
};

/* A peer's piece list read through CMA, kept for its later calls: a committed type's list never
   changes, and its number (dt_iov_shared's id) is never reused in the owner's process, so a
   type freed and another committed at the same address cannot be taken for it. */
#define LISTS_KEPT 4
struct read_list {
    uint64_t id;         /* 0: empty */
    size_t niov, cap;
    struct dt_iov *iov;
};

/* The path each call took, per operation (HINT_COLL_STATS prints them at finalize). */
enum order_path { PATH_HEAP, PATH_CMA, PATH_CMA_DERIVED, PATH_REFUSED, PATH_PIECES_OFF_HEAP, NPATHS };
static unsigned long path_calls[4][NPATHS]; /* alltoall, alltoallv, allgather, allgatherv */
/* Of the calls that ran the order: those with a piece list copied to the heap for the peers,
   and those with one read through CMA (sides_reach's LISTS_COPIED, LISTS_CMA); and the lists
   this rank read through CMA (the others came from its group's cache). */
static unsigned long list_calls[4][2], list_reads[4];

int coll_copy_override = -1;

static void cache_free(void *p)
{
    struct order_cache *c = p;
    for (int k = 0; k < ORDER_NKINDS; k++)
        free(c->tuples[k]);
    for (int k = 0; k <= ORDER_NKINDS; k++)
        free(c->in[k]);
    free(c->numa);
    free(c->lists);
    for (int k = 0; c->read && k < c->nread; k++)
        free(c->read[k].iov);
    free(c->read);
    free(c);
}

static struct order_cache *cache_of(hint_group g)
{
    struct coll_owned *o = &coll_group_of(g)->order;
    if (o->p == NULL) {
        struct order_cache *c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        c->mode = copy_mode_from_env();
        /* What the kept piece lists may hold in all (64 MiB unless the test hook says), so that P
           peers' types of millions of pieces do not pile up for the group's life: past it, lists
           a call does not use are dropped first. A call may still read what it needs beyond it. */
        c->read_max = rt_cfg_size("HINT_TEST_LISTS_KEPT_MAX");
        *o = (struct coll_owned){c, cache_free};
    }
    return o->p;
}

/* An allocation in a first call may find no free room in the heap's committed pages for its size
   (this one, 880 bytes, is of a size little else uses): mimalloc then commits, and the heap
   reserves, a fresh 1 MiB (fallocate, ~0.3 ms) inside the call. */
void coll_order_prepare(hint_group g) { (void)cache_of(g); }

/* The pid the peers name in their CMA calls to this rank, published in every call: glibc keeps
   no cache of getpid, so it was a system call per alltoall or allgather of the orders. Taken at
   each hint_init (coll_setup), so that a process forked after one job and starting another
   publishes its own. */
static int32_t order_pid;

void coll_order_setup(void) { order_pid = (int32_t)getpid(); }

static int32_t own_pid(void) { return order_pid; }

/* This rank's tuples for the order, computed on first use and kept on the group. */
static const struct order_tuple *coll_order_tuples(hint_group g, int kind)
{
    struct order_cache *c = cache_of(g);
    if (c == NULL)
        return NULL;
    if (c->tuples[kind] == NULL) {
        struct order_tuple *t = malloc((size_t)g->size * sizeof *t);
        if (t == NULL || order_tuples(kind, g->size, g->rank, t) != HINT_SUCCESS) {
            free(t);
            return NULL;
        }
        c->tuples[kind] = t;
    }
    return c->tuples[kind];
}

/* The socket this rank counts as on: with HINT_VIRTUAL_SOCKETS=s the group's ranks are cut into
   s equal runs of consecutive ranks (so the code runs on a one-socket machine too; 1 when s does
   not divide P); otherwise the package it runs on, from hwloc (or HINT_TOPO_FILE). */
static int my_socket(const struct coll_args *a)
{
    long s = rt_cfg_long("HINT_VIRTUAL_SOCKETS");
    if (s > 0)
        return s > 1 && a->size % s == 0 ? a->rank / (a->size / (int)s) : 0;
    int sock = 0;
    return topo_socket_of_self(&sock) == HINT_SUCCESS && sock >= 0 ? sock : 0;
}

static int by_seq(const void *x, const void *y)
{
    uint32_t a = ((const struct inbound *)x)->seq, b = ((const struct inbound *)y)->seq;
    return (a > b) - (a < b);
}

/* The blocks this rank receives, in the order's sequence, with the rank whose list holds each:
   every rank's list once (P^2 tuples), kept on the group. sock: the NUMA-aware schedule's
   sockets (kind NUMA_KIND). */
static const struct inbound *inbound_list(hint_group g, int kind, const int *sock)
{
    struct order_cache *c = cache_of(g);
    if (c == NULL)
        return NULL;
    if (c->in[kind])
        return c->in[kind];
    int P = g->size, n = 0;
    struct order_tuple *t = malloc((size_t)P * sizeof *t);
    struct inbound *in = malloc((size_t)P * sizeof *in);
    for (int r = 0; t && in && r < P; r++) {
        int st = kind == NUMA_KIND ? order_numa_tuples(P, sock, r, t) : order_tuples(kind, P, r, t);
        if (st != HINT_SUCCESS)
            break;
        for (int i = 0; i < P; i++)
            if ((int)t[i].dst == g->rank && n < P)
                in[n++] = (struct inbound){t[i].seq, t[i].src, (uint32_t)r};
    }
    free(t);
    if (in == NULL || n != P) {
        free(in);
        return NULL;
    }
    qsort(in, (size_t)P, sizeof *in, by_seq);
    c->in[kind] = in;
    return in;
}

/* The NUMA-aware schedule from every member's published socket (order_numa_tuples), once. */
static const struct order_tuple *numa_tuples(hint_group g, int slot)
{
    struct order_cache *c = cache_of(g);
    int P = g->size;
    if (c == NULL)
        return NULL;
    if (c->numa)
        return c->numa;
    int *sock = malloc((size_t)P * sizeof *sock);
    struct order_tuple *list = malloc((size_t)P * sizeof *list);
    if (sock && list) {
        for (int p = 0; p < P; p++)
            sock[p] = coll_shm_member(slot, p)->socket;
        if (order_numa_tuples(P, sock, g->rank, list) == HINT_SUCCESS && inbound_list(g, NUMA_KIND, sock)) {
            free(sock);
            c->numa = list;
            return list;
        }
    }
    free(sock);
    free(list);
    return NULL;
}

/* The Alg. 4 threshold kept for this block size: T = L2 / ranks, R adjusted per call (copy.h). */
static struct thresh *threshold_for(struct order_cache *c, size_t block, int P)
{
    struct thresh *free_slot = NULL;
    for (int i = 0; i < THRESH_SLOTS; i++) {
        if (c->th[i].block == block)
            return &c->th[i];
        if (!free_slot && c->th[i].block == 0)
            free_slot = &c->th[i];
    }
    struct thresh *t = free_slot ? free_slot : &c->th[block % THRESH_SLOTS];
    t->block = block;
    copy_thresh_init(&t->th, copy_threshold_T(P));
    return t;
}

/* Extent of a v buffer: the end of its furthest block. */
static size_t v_extent(const size_t *counts, const size_t *displs, int P)
{
    size_t end = 0;
    for (int p = 0; p < P; p++)
        if (counts[p] && displs[p] + counts[p] > end)
            end = displs[p] + counts[p];
    return end;
}

/* A side off the heap is published as its buffer address in its own process (the bit below
   set; user addresses never have it), which peers reach through CMA. */
#define SIDE_ADDR ((uint64_t)1 << 63)

static uint64_t contiguous_side(const char *buf, size_t bytes)
{
    uint64_t at = heap_span(buf, bytes);
    return at != UINT64_MAX ? at : SIDE_ADDR | (uint64_t)(uintptr_t)buf;
}

static bool side_is_addr(uint64_t off) { return off != UINT64_MAX && (off & SIDE_ADDR); }

/* A published piece list that is a copy made for the peers (dt_iov_shared's DT_IOV_HEAP_COPY),
   flagged for the statistics; heap offsets never reach this bit. A list published with
   SIDE_ADDR is in its owner's memory (DT_IOV_PRIVATE): the peers read it through CMA. */
#define IOV_COPIED ((uint64_t)1 << 62)

/* Where a derived side's touched bytes [lo, hi) from buf lie: their heap offset, or off the
   heap, buf's address (SIDE_ADDR set; a peer walks the published pieces from it through CMA). */
static uint64_t derived_side(const char *buf, ptrdiff_t lo, ptrdiff_t hi)
{
    uint64_t at = heap_span(buf + lo, (size_t)(hi - lo));
    return at != UINT64_MAX ? at : SIDE_ADDR | (uint64_t)(uintptr_t)buf;
}

/* Where the peers find a derived type's piece list (dt_iov_shared): its heap offset (IOV_COPIED
   set for a copy made for them), or its address here (SIDE_ADDR: read through CMA); UINT64_MAX
   without memory for one, which sends every rank to the fallback. */
static uint64_t publish_pieces(hint_type t, size_t *n, uint64_t *id)
{
    enum dt_iov_where where;
    const struct dt_iov *iov = dt_iov_shared(t, n, &where, id);
    if (iov == NULL)
        return UINT64_MAX;
    if (where == DT_IOV_PRIVATE)
        return SIDE_ADDR | (uint64_t)(uintptr_t)iov;
    return heap_offset(iov) | (where == DT_IOV_HEAP_COPY ? IOV_COPIED : 0);
}

/* Publish one side of an alltoall or allgather: its layout, and the heap offset of its first
   touched byte (sides off the heap: their address, contiguous_side and derived_side);
   UINT64_MAX when a derived type has no piece list the peers can read (no memory to make one),
   which sends every rank to the fallback. */
static uint64_t publish_side(const char *buf, const struct coll_layout *l, size_t nblocks, size_t block,
                             struct coll_shm_layout *out)
{
    *out = (struct coll_shm_layout){0};
    if (l->type == NULL)
        return contiguous_side(buf, block * nblocks);
    size_t n;
    uint64_t id;
    ptrdiff_t lo, hi;
    uint64_t at = publish_pieces(l->type, &n, &id);
    if (at == UINT64_MAX || dt_span(l->type, l->count * nblocks, &lo, &hi) != HINT_SUCCESS)
        return UINT64_MAX;
    *out = (struct coll_shm_layout){.iov_off = at, .niov = n, .count = l->count, .extent = l->extent, .lo = lo,
                                    .iov_id = id};
    return derived_side(buf, lo, hi);
}

/* The same for a v side: nb blocks of counts[p] data bytes at byte offsets displs[p]. */
static uint64_t publish_vside(const char *buf, const struct coll_layout *l, int nb, const size_t *counts,
                              const size_t *displs, struct coll_shm_layout *out)
{
    *out = (struct coll_shm_layout){0};
    if (l->type == NULL)
        return contiguous_side(buf, v_extent(counts, displs, nb));
    size_t n, es = dt_size(l->type);
    uint64_t id;
    uint64_t at = publish_pieces(l->type, &n, &id);
    ptrdiff_t lo = PTRDIFF_MAX, hi = PTRDIFF_MIN, a, b;
    if (at == UINT64_MAX)
        return UINT64_MAX;
    for (int p = 0; p < nb; p++) {
        if (counts[p] == 0)
            continue;
        if (dt_span(l->type, counts[p] / es, &a, &b) != HINT_SUCCESS)
            return UINT64_MAX;
        lo = (ptrdiff_t)displs[p] + a < lo ? (ptrdiff_t)displs[p] + a : lo;
        hi = (ptrdiff_t)displs[p] + b > hi ? (ptrdiff_t)displs[p] + b : hi;
    }
    if (lo == PTRDIFF_MAX)
        return 0; /* nothing of this side is touched */
    *out = (struct coll_shm_layout){.iov_off = at, .niov = n, .extent = l->extent, .lo = lo, .iov_id = id};
    return derived_side(buf, lo, hi);
}

/* Bytes from a published side's buffer address to its block i (not for the v variants). */
static ptrdiff_t block_at(const struct coll_shm_layout *l, size_t block, int i)
{
    return i * (l->niov ? (ptrdiff_t)l->count * l->extent : (ptrdiff_t)block);
}

/* Member p's send (recv 0) or receive side as pieces: from the heap, or a list off it from
   this call's copies (read_lists). */
static struct dt_flat side_flat(const struct order_cache *c, int slot, int p, int recv)
{
    const struct coll_shm_member *m = coll_shm_member(slot, p);
    const struct coll_shm_layout *l = recv ? &m->rl : &m->sl;
    struct dt_flat f = {.niov = l->niov, .extent = l->extent};
    if (l->niov)
        f.iov = side_is_addr(l->iov_off) ? c->lists[2 * p + recv] : heap_at(l->iov_off & ~IOV_COPIED);
    return f;
}

/* What is copied: the matrix's block (s, d) for each operation. */
enum shape { ALLTOALL, ALLTOALLV, ALLGATHER, ALLGATHERV };

/* Publish this rank's buffers (and for the v variants its counts and displacements). */
static void publish(struct coll_args *a, enum shape sh, struct coll_shm_member *me)
{
    int P = a->size;
    size_t b = a->block;
    me->sl = me->rl = (struct coll_shm_layout){0};
    switch (sh) {
    case ALLTOALL:
        me->soff = publish_side(a->sbuf, &a->sl, (size_t)P, b, &me->sl);
        me->roff = publish_side(a->rbuf, &a->rl, (size_t)P, b, &me->rl);
        break;
    case ALLTOALLV:
        for (int p = 0; p < P; p++) {
            me->v[p] = a->scounts[p];
            me->v[P + p] = a->sdispls[p];
            me->v[2 * P + p] = a->rdispls[p];
            me->v[3 * P + p] = a->rcounts[p];
        }
        me->soff = publish_vside(a->sbuf, &a->sl, P, a->scounts, a->sdispls, &me->sl);
        me->roff = publish_vside(a->rbuf, &a->rl, P, a->rcounts, a->rdispls, &me->rl);
        break;
    case ALLGATHER:
        me->soff = publish_side(a->sbuf, &a->sl, 1, b, &me->sl);
        me->roff = publish_side(a->rbuf, &a->rl, (size_t)P, b, &me->rl);
        break;
    case ALLGATHERV:
        for (int p = 0; p < P; p++) {
            me->v[p] = a->rdispls[p];
            me->v[3 * P + p] = a->rcounts[p];
        }
        me->v[P] = b; /* this rank's block */
        me->soff = publish_vside(a->sbuf, &a->sl, 1, &b, &(size_t){0}, &me->sl);
        me->roff = publish_vside(a->rbuf, &a->rl, P, a->rcounts, a->rdispls, &me->rl);
        break;
    }
}

static int fallback(struct coll_args *a, enum shape sh)
{
    static const char *const names[] = {"pairwise", "pairwise", "ring", "ring"};
    static int (*const algs[])(struct coll_args *) = {alltoall_pairwise, alltoallv_pairwise, allgather_ring,
                                                      allgatherv_ring};
    coll_record(a->op_id, names[sh]);
    return coll_has_layout(a) ? coll_run_packed(a, algs[sh]) : algs[sh](a);
}

/* n bytes from member s's send side, soff bytes from its buffer address, to member d's receive
   side at roff: the hybrid copy between contiguous sides, else piece against piece of the two
   published layouts. */
static char *side_base(uint64_t off, const struct coll_shm_layout *l)
{
    return side_is_addr(off) ? (char *)(uintptr_t)(off & ~SIDE_ADDR) : (char *)heap_at(off) - l->lo;
}

/* The first write from this process to a page of another rank's heap takes a page fault per
   4 KiB page: the kernel maps a shared file's pages one at a time on write faults (256 faults,
   ~0.4 ms, per MiB; the first 1 MiB alltoall at P=2 took 259 per rank where the orders that read
   the peer's side took 19). A read fault maps the pages around it that the file already holds
   (fault-around, 64 KiB by default), writable, since tmpfs asks no write notification. So one
   read per 64 KiB window of a peer's receive block before writing it maps the block in 1/16 of
   the faults; once mapped, they are a load per 64 KiB. Blocks under 16 KiB would save at most
   two faults for a load: left alone. Pages the receiver never touched (reserved, not yet
   written) are not mapped around: they fault on write as before, nothing is allocated that the
   copy would not have. */
#define FAULT_AROUND_BYTES ((uintptr_t)64 << 10)
#define MAP_AHEAD_MIN ((size_t)16 << 10)

static void map_peer_block(const char *dst, size_t n)
{
    if (n < MAP_AHEAD_MIN)
        return;
    for (uintptr_t p = (uintptr_t)dst, end = p + n; p < end; p = (p & ~(FAULT_AROUND_BYTES - 1)) + FAULT_AROUND_BYTES)
        (void)*(const volatile char *)p;
}

static bool copy_block(const struct coll_shm_member *ms, const struct coll_shm_member *md, const struct dt_flat *fs,
                       const struct dt_flat *fd, ptrdiff_t soff, ptrdiff_t roff, size_t n, size_t T, size_t R,
                       bool peer_dst)
{
    char *src = side_base(ms->soff, &ms->sl) + soff, *dst = side_base(md->roff, &md->rl) + roff;
    if (ms->sl.niov == 0 && md->rl.niov == 0) {
        if (peer_dst)
            map_peer_block(dst, n);
        return copy_hybrid(dst, src, n, T, R);
    }
    dt_copy_flat(src, fs, dst, fd, n);
    return false;
}

/* The block size the copy threshold is kept for: the v variants have no one block (their
   a->block is 0, which would make every size share one threshold), so their largest here. */
static size_t threshold_block(const struct coll_args *a, enum shape sh)
{
    if (sh == ALLTOALL || sh == ALLGATHER)
        return a->block;
    size_t most = 1;
    for (int p = 0; p < a->size; p++)
        if (a->rcounts[p] > most)
            most = a->rcounts[p];
    return most;
}

/* One block s -> d of this call: its bytes and offsets in s's send and d's receive side; bad
   when the two members' counts disagree. */
struct blk {
    size_t n;
    ptrdiff_t soff, roff;
    bool bad;
};

static struct blk block_of(const struct coll_args *a, enum shape sh, int slot, int s, int d)
{
    int P = a->size;
    const struct coll_shm_member *ms = coll_shm_member(slot, s), *md = coll_shm_member(slot, d);
    struct blk k = {.n = a->block, .roff = block_at(&md->rl, a->block, s)};
    switch (sh) {
    case ALLTOALL: k.soff = block_at(&ms->sl, a->block, d); break;
    case ALLTOALLV: k.n = ms->v[d]; k.soff = (ptrdiff_t)ms->v[P + d]; k.roff = (ptrdiff_t)md->v[2 * P + s]; break;
    case ALLGATHER: break;
    case ALLGATHERV: k.n = ms->v[P]; k.roff = (ptrdiff_t)md->v[s]; break;
    }
    k.bad = (sh == ALLTOALLV || sh == ALLGATHERV) && k.n != md->v[3 * P + s];
    return k;
}

/* One end of a CMA copy: a layout (contiguous when f.niov is 0) at its block's address. */
struct cma_end {
    char *base;
    struct dt_flat f;
};

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

/* Cuts an iovec list to its first `bytes` bytes; returns the entries kept. */
static size_t iovec_cut(struct iovec *v, size_t n, size_t bytes)
{
    size_t k = 0;
    for (; k < n && bytes > 0; k++) {
        if (v[k].iov_len > bytes)
            v[k].iov_len = bytes;
        bytes -= v[k].iov_len;
    }
    return k;
}

/* What the kernel charges per iovec (measured here, 1024 ranges of 8 bytes on a side): ~0.33 us
   per remote range (each pins its pages) and ~28 ns per local one, where copying a byte in cache
   costs ~0.1 ns. Layouts of small pieces therefore go through a buffer (cma_whole_block): the
   local side packed or unpacked by the CPU, a dense remote one read as its span (holes
   included); the block still crosses the processes once. */
#define CMA_SMALL_LOCAL 512   /* average data bytes a piece under which a local side is bounced */
#define CMA_SMALL_REMOTE 4096 /* ... and under which a dense remote side is read as its span */

/* Data bytes of a piece on average (SIZE_MAX: contiguous). */
static size_t avg_piece(const struct dt_flat *f)
{
    return f->niov ? (f->iov[f->niov - 1].pos + f->iov[f->niov - 1].len) / f->niov : SIZE_MAX;
}

/* A remote side whose pieces are small and at least a quarter of its extent is data. */
static bool span_worth_reading(const struct dt_flat *f)
{
    if (avg_piece(f) >= CMA_SMALL_REMOTE)
        return false;
    size_t data = f->iov[f->niov - 1].pos + f->iov[f->niov - 1].len;
    size_t ext = (size_t)(f->extent < 0 ? -f->extent : f->extent);
    return 4 * data >= ext;
}

/* One system call: the packed bytes at p (up to len) to or from the remote side's data from off
   on, p as one local iovec; returns the bytes moved, 0 with *err set on failure. */
static size_t remote_ranges(pid_t pid, const struct cma_end *remote, size_t off, char *p, size_t len, bool write,
                            int *err)
{
    struct iovec r[IOV_MAX], l;
    size_t cov, nr = dt_flat_iovec(&remote->f, remote->base, off, len, r, IOV_MAX, &cov);
    l = (struct iovec){p, cov};
    ssize_t got;
    do
        got = write ? process_vm_writev(pid, &l, 1, r, nr, 0) : process_vm_readv(pid, &l, 1, r, nr, 0);
    while (got < 0 && errno == EINTR);
    if (got <= 0)
        *err = got < 0 ? errno : EIO;
    return got > 0 ? (size_t)got : 0; /* partial: stops at a range's end, the caller resumes */
}

/* The bytes [*lo, *hi) the whole elements of a remote send side's block touch (a send block
   always holds whole elements of its sender's type). */
static void block_span(const struct cma_end *e, size_t n, char **lo, char **hi)
{
    const struct dt_flat *f = &e->f;
    size_t esz = f->iov[f->niov - 1].pos + f->iov[f->niov - 1].len, nel = (n + esz - 1) / esz;
    ptrdiff_t dmin = PTRDIFF_MAX, dmax = PTRDIFF_MIN, last = (ptrdiff_t)(nel - 1) * f->extent;
    for (size_t i = 0; i < f->niov; i++) {
        dmin = f->iov[i].disp < dmin ? f->iov[i].disp : dmin;
        dmax = f->iov[i].disp + (ptrdiff_t)f->iov[i].len > dmax ? f->iov[i].disp + (ptrdiff_t)f->iov[i].len : dmax;
    }
    *lo = e->base + dmin + (last < 0 ? last : 0);
    *hi = e->base + dmax + (last > 0 ? last : 0);
}

/* A buffer of at least n bytes for the whole-block bounce, kept for the process (the calls
   come from the rank's one thread); NULL past CMA_WHOLE or without memory. */
#define CMA_WHOLE ((size_t)16 << 20)
static char *whole_buffer(size_t n)
{
    static char *buf;
    static size_t cap;
    if (n > CMA_WHOLE)
        return NULL;
    if (n > cap) {
        char *b = realloc(buf, n);
        if (b == NULL)
            return NULL;
        buf = b, cap = n;
    }
    return buf;
}

/* Small pieces, the whole block at once (fits CMA_WHOLE): what crosses the processes lands in,
   or leaves from, one buffer, and the CPU moves the pieces between it and the local layout with
   dt_copy_flat's tight loops (its piece-by-piece merge through iovecs cost ~10 ns a piece).
   Reads take a dense remote side as its span; -1 when the block does not fit, else 0 or the
   errno. */
static int cma_whole_block(pid_t pid, const struct cma_end *local, const struct cma_end *remote, size_t n, bool write,
                           bool span)
{
    char *lo = NULL, *hi = NULL;
    if (span)
        block_span(remote, n, &lo, &hi);
    if (span && (size_t)(hi - lo) > 4 * n + 4096)
        span = false; /* pieces far apart in a small extent (resized): the span is mostly holes */
    size_t need = span ? (size_t)(hi - lo) : n;
    char *buf = whole_buffer(need);
    if (buf == NULL)
        return -1;
    struct dt_flat packed = {0};
    int err = 0;
    if (write)
        dt_copy_flat(local->base, &local->f, buf, &packed, n);
    if (span) {
        struct iovec l = {buf, need}, r = {lo, need};
        ssize_t got;
        do
            got = process_vm_readv(pid, &l, 1, &r, 1, 0);
        while (got < 0 && errno == EINTR);
        if (got != (ssize_t)need)
            return got < 0 ? errno : EFAULT;
        dt_copy_flat(buf + (remote->base - lo), &remote->f, local->base, &local->f, n);
        return 0;
    }
    for (size_t done = 0, got; done < n; done += got)
        if ((got = remote_ranges(pid, remote, done, buf + done, n - done, write, &err)) == 0)
            return err ? err : EIO;
    if (!write)
        dt_copy_flat(buf, &packed, local->base, &local->f, n);
    return 0;
}

/* n data bytes between this process (local) and process pid (remote), with process_vm_readv
   (into local) or process_vm_writev (from local). Pieces large enough: each side's from the same
   data offset on as up to IOV_MAX iovecs (the kernel pairs the two lists byte for byte, whatever
   their counts), both cut to the bytes the shorter covers: a single copy. Small pieces: through
   a buffer (cma_whole_block). Writes go only to contiguous remote sides (owner_copies): a
   derived one's receiver reads instead, where its small pieces can be read as a span. 0 or the
   errno. */
static int cma_move(pid_t pid, const struct cma_end *local, const struct cma_end *remote, size_t n, bool write)
{
    struct iovec l[IOV_MAX], r[IOV_MAX];
    size_t done = 0;
    bool span = !write && remote->f.niov && span_worth_reading(&remote->f);
    if (span || avg_piece(&local->f) < CMA_SMALL_LOCAL) {
        int st = cma_whole_block(pid, local, remote, n, write, span);
        if (st >= 0)
            return st; /* else a block past CMA_WHOLE: iovecs as they are */
    }
    while (done < n) {
        size_t lb, rb;
        size_t nl = dt_flat_iovec(&local->f, local->base, done, n - done, l, IOV_MAX, &lb);
        size_t nr = dt_flat_iovec(&remote->f, remote->base, done, n - done, r, IOV_MAX, &rb);
        size_t both = lb < rb ? lb : rb;
        nl = iovec_cut(l, nl, both);
        nr = iovec_cut(r, nr, both);
        ssize_t got = write ? process_vm_writev(pid, l, nl, r, nr, 0) : process_vm_readv(pid, l, nl, r, nr, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            return got < 0 ? errno : EIO;
        }
        done += (size_t)got; /* a partial transfer stops at an iovec's end: resume from there */
    }
    return 0;
}

/* Where the call's piece lists are, for HINT_COLL_STATS: some a copy on the heap made for the
   peers, some read through CMA. */
enum { LISTS_COPIED = 1, LISTS_CMA = 2 };

/* How the call's sides can be reached: 0 all on the heap; 1 some only through CMA, all
   contiguous; 2 the same with derived layouts in the call (or a piece list only through CMA); -1
   a derived type without a piece list: the fallback. *lists: LISTS_*. Every rank computes the
   same. */
static int sides_reach(int slot, int P, unsigned *lists)
{
    bool addr = false, derived = false;
    *lists = 0;
    for (int p = 0; p < P; p++) {
        const struct coll_shm_member *m = coll_shm_member(slot, p);
        if (m->soff == UINT64_MAX || m->roff == UINT64_MAX)
            return -1;
        addr |= side_is_addr(m->soff) || side_is_addr(m->roff);
        for (int r = 0; r < 2; r++) {
            const struct coll_shm_layout *l = r ? &m->rl : &m->sl;
            if (l->niov == 0)
                continue;
            derived = true;
            if (side_is_addr(l->iov_off))
                *lists |= LISTS_CMA, addr = true;
            else if (l->iov_off & IOV_COPIED)
                *lists |= LISTS_COPIED;
        }
    }
    return addr ? 1 + derived : 0;
}

/* Is kept list e one of this call's, c->lists[0 .. used)? */
static bool list_in_use(const struct order_cache *c, const struct read_list *e, int used)
{
    for (int j = 0; j < used; j++)
        if (c->lists[j] == e->iov)
            return true;
    return false;
}

/* Drops kept lists (not `into`, not one this call uses) until `more` bytes fit under
   c->read_max or none is left to drop. */
static void lists_make_room(struct order_cache *c, size_t more, const struct read_list *into, int used)
{
    for (int k = 0; k < c->nread && c->read_bytes + more > c->read_max; k++) {
        struct read_list *e = &c->read[k];
        if (e == into || e->iov == NULL || list_in_use(c, e, used))
            continue;
        c->read_bytes -= e->cap * sizeof *e->iov;
        free(e->iov);
        *e = (struct read_list){0};
    }
}

/* Member p's list number `id` of n pieces at `there` in its process: from the lists kept from
   it, else read through CMA into an empty entry or the oldest list's (not `keep`, which this
   call uses already). NULL with *err set when the read fails or there is no memory for it. */
static const struct dt_iov *peer_list(struct order_cache *c, const struct coll_shm_member *m, int p, uint64_t id,
                                      size_t n, const struct dt_iov *there, const struct dt_iov *keep,
                                      unsigned long *reads, int *err)
{
    struct read_list *kept = c->read + (size_t)p * LISTS_KEPT, *into = NULL;
    for (int k = 0; k < LISTS_KEPT; k++)
        if (kept[k].id == id && kept[k].niov == n)
            return kept[k].iov;
    for (int k = 0; k < LISTS_KEPT; k++) /* an empty one (id 0), else the oldest list (ids grow) */
        if ((keep == NULL || kept[k].iov != keep) && (into == NULL || kept[k].id < into->id))
            into = &kept[k];
    into->id = 0;
    if (n > into->cap) {
        lists_make_room(c, (n - into->cap) * sizeof *into->iov, into, 2 * p + 1);
        struct dt_iov *b = realloc(into->iov, n * sizeof *b);
        if (b == NULL) {
            *err = ENOMEM;
            return NULL;
        }
        c->read_bytes += (n - into->cap) * sizeof *b;
        into->iov = b, into->cap = n;
    }
    size_t bytes = n * sizeof *there;
    for (size_t done = 0; done < bytes;) {
        struct iovec li = {(char *)into->iov + done, bytes - done}, ri = {(char *)there + done, bytes - done};
        ssize_t got = process_vm_readv(m->pid, &li, 1, &ri, 1, 0);
        if (got <= 0 && !(got < 0 && errno == EINTR)) {
            *err = got < 0 ? errno : EIO;
            return NULL;
        }
        done += got > 0 ? (size_t)got : 0;
    }
    into->id = id, into->niov = n;
    ++*reads;
    return into->iov;
}

/* The piece lists the members published off the heap (no shared heap, or no room in it), into
   c->lists: this rank's own at its address, the others' from the lists read from them before or
   read now through CMA (*reads: how many). 0, or the errno (ENOMEM: no room to hold them). */
static int read_lists(struct order_cache *c, int slot, int P, int me, unsigned long *reads)
{
    if (c->lists == NULL && (c->lists = calloc(2 * (size_t)P, sizeof *c->lists)) == NULL)
        return ENOMEM;
    if (c->read == NULL) {
        if ((c->read = calloc((size_t)P * LISTS_KEPT, sizeof *c->read)) == NULL)
            return ENOMEM;
        c->nread = P * LISTS_KEPT;
    }
    int err = 0;
    for (int p = 0; p < P && !err; p++) {
        const struct coll_shm_member *m = coll_shm_member(slot, p);
        for (int r = 0; r < 2 && !err; r++) {
            const struct coll_shm_layout *l = r ? &m->rl : &m->sl;
            const struct dt_iov *there = (const struct dt_iov *)(uintptr_t)(l->iov_off & ~SIDE_ADDR);
            c->lists[2 * p + r] = NULL;
            if (l->niov == 0 || !side_is_addr(l->iov_off))
                continue;
            c->lists[2 * p + r] = p == me ? there
                                  : peer_list(c, m, p, l->iov_id, l->niov, there, r ? c->lists[2 * p] : NULL, reads, &err);
        }
    }
    return err;
}

/* May this rank read the other members' memory? One read of a byte of a peer's side off the
   heap: refused (EPERM, EACCES: ptrace scope, a seccomp filter; ENOSYS) or not (a bad address
   would be EFAULT, past the permission check). */
static int cma_probe(int slot, int P, int me)
{
    for (int p = 0; p < P; p++) {
        const struct coll_shm_member *m = coll_shm_member(slot, p);
        uint64_t off = side_is_addr(m->soff)        ? m->soff
                       : side_is_addr(m->roff)      ? m->roff
                       : side_is_addr(m->sl.iov_off) ? m->sl.iov_off
                                                     : m->rl.iov_off; /* a piece list off the heap */
        if (p == me || !side_is_addr(off))
            continue;
        char byte;
        struct cma_end here = {&byte, {0}}, there = {(char *)(uintptr_t)(off & ~SIDE_ADDR), {0}};
        int err = cma_move(m->pid, &here, &there, 1, false);
        return err == EPERM || err == EACCES || err == ENOSYS ? err : 0;
    }
    return 0;
}

static const char *const shape_names[] = {"alltoall", "alltoallv", "allgather", "allgatherv"};

/* The group's first call with a side off the heap: every rank probes, a barrier, all agree. */
static int cma_agree(struct coll_args *a, struct order_cache *c, int slot)
{
    int err = cma_probe(slot, a->size, a->rank);
    if (err)
        atomic_store(&coll_shm_slot(slot)->cma_refused, 2 * (uint64_t)a->tag);
    int st = barrier_shm(a);
    if (st != HINT_SUCCESS)
        return st;
    c->cma = atomic_load(&coll_shm_slot(slot)->cma_refused) == 2 * (uint64_t)a->tag ? CMA_REFUSED : CMA_OK;
    static bool said;
    if (c->cma == CMA_REFUSED && err && !said) {
        said = true;
        RT_ERR("coll", "process_vm_readv to another rank refused (%s; /proc/sys/kernel/yama/ptrace_scope or a "
               "seccomp filter): on this group the copy orders with buffers off the shared heap run pairwise "
               "(alltoall) or ring (allgather) instead; buffers from malloc/hint_malloc avoid it", strerror(err));
    }
    return HINT_SUCCESS;
}

/* Does rank `who` (the owner of block s -> d in the order) copy it? When the receive side is
   here (the heap or its own memory), or the send side is and the receive side may be written
   through CMA: a contiguous one (a derived one's holes forbid coalescing its pieces, and a
   write per small piece costs a page pinning each: its receiver reads the block instead, in
   order_copy's second pass). Owner and receiver compute the same. */
static bool owner_copies(const struct coll_shm_member *ms, const struct coll_shm_member *md, int s, int d, int who)
{
    bool src_here = !side_is_addr(ms->soff) || s == who, dst_here = !side_is_addr(md->roff) || d == who;
    return dst_here || (src_here && md->rl.niov == 0);
}

/* Copy block s -> d by whichever means this rank has: both sides here (the heap, or this
   process's own memory): the hybrid copy; one side here: CMA to or from the other's process;
   neither (or a derived receive side elsewhere): false (the receiver reads it, order_copy).
   *err gets a failed CMA's errno. */
static bool copy_any(const struct coll_args *a, const struct order_cache *c, int slot, int s, int d,
                     const struct blk *k, size_t T, size_t R, bool *hybrid_ran, int *err)
{
    const struct coll_shm_member *ms = coll_shm_member(slot, s), *md = coll_shm_member(slot, d);
    bool src_here = !side_is_addr(ms->soff) || s == a->rank, dst_here = !side_is_addr(md->roff) || d == a->rank;
    if (!owner_copies(ms, md, s, d, a->rank))
        return false;
    struct cma_end src = {side_base(ms->soff, &ms->sl) + k->soff, side_flat(c, slot, s, 0)};
    struct cma_end dst = {side_base(md->roff, &md->rl) + k->roff, side_flat(c, slot, d, 1)};
    int e = 0;
    if (src_here && dst_here)
        *hybrid_ran |= copy_block(ms, md, &src.f, &dst.f, k->soff, k->roff, k->n, T, R, d != a->rank);
    else if (dst_here)
        e = cma_move(ms->pid, &dst, &src, k->n, false);
    else if (src_here)
        e = cma_move(md->pid, &src, &dst, k->n, true);
    else
        return false;
    if (e && !*err)
        *err = e;
    return true;
}

/* Alg. 3 for any of the four shapes: publish, barrier, copy this rank's tuples, fence, barrier.
   kind < 0: the NUMA-aware Morton schedule. Sides off the heap: the same tuples, each copied
   through CMA by the rank whose list holds it when one of the block's sides is in its process
   (owner_copies); a block whose sides are both elsewhere, or whose derived receive side is, is
   read by its receiver, which goes through its own incoming blocks in the order's sequence
   after its list. */
static int order_copy(struct coll_args *a, int kind, enum shape sh)
{
    const struct order_tuple *tl = kind >= 0 ? coll_order_tuples(a->g, kind) : NULL;
    struct order_cache *c = cache_of(a->g);
    if ((kind >= 0 && tl == NULL) || c == NULL)
        return HINT_ERR_NOMEM;
    int P = a->size, slot = coll_group_of(a->g)->slot;
    struct coll_shm_member *me = coll_shm_member(slot, a->rank);
    publish(a, sh, me);
    me->pid = own_pid();
    if (kind < 0 && c->numa == NULL)
        me->socket = my_socket(a);
    int st = coll_heap_meet(a); /* publishes (release/acquire through the barrier) */
    if (st != HINT_SUCCESS)
        return st;
    if (kind < 0 && (tl = numa_tuples(a->g, slot)) == NULL)
        return HINT_ERR_NOMEM; /* every rank has the same inputs: all fail alike */
    unsigned lists;
    int reach = sides_reach(slot, P, &lists); /* every rank sees the same offsets: all choose alike */
    if (reach < 0) {
        path_calls[sh][PATH_PIECES_OFF_HEAP]++;
        return fallback(a, sh);
    }
    if (reach > 0 && c->cma == CMA_UNKNOWN && (st = cma_agree(a, c, slot)) != HINT_SUCCESS)
        return st;
    if (reach > 0 && c->cma == CMA_REFUSED) {
        path_calls[sh][PATH_REFUSED]++;
        return fallback(a, sh);
    }
    const struct inbound *in = reach > 0 ? inbound_list(a->g, kind < 0 ? NUMA_KIND : kind, NULL) : NULL;
    if (reach > 0 && in == NULL)
        return HINT_ERR_NOMEM; /* the NUMA list is built with numa_tuples; the others from the order alone */
    int mode = a->copy >= 0 ? a->copy : coll_copy_override >= 0 ? coll_copy_override : c->mode;
    struct thresh *th = mode == COPY_HYBRID ? threshold_for(c, threshold_block(a, sh), P) : NULL;
    size_t T = mode == COPY_TEMPORAL ? SIZE_MAX : mode == COPY_NT ? 0 : th->th.T;
    size_t R = th ? th->th.R : 0;
    double t0 = th ? hint_wtime() : 0;
    bool mismatch = false, hybrid_ran = false;
    int err = lists & LISTS_CMA ? read_lists(c, slot, P, a->rank, &list_reads[sh]) : 0;
    for (int i = 0; !err && i < P; i++) {
        int s = (int)tl[i].src, d = (int)tl[i].dst;
        struct blk k = block_of(a, sh, slot, s, d);
        if (k.bad) {
            mismatch = true; /* s sends n bytes that d has not room, or no use, for */
            continue;
        }
        if (k.n)
            copy_any(a, c, slot, s, d, &k, T, R, &hybrid_ran, &err);
    }
    for (int i = 0; !err && in && side_is_addr(me->roff) && i < P; i++) {
        int s = (int)in[i].src, owner = (int)in[i].owner;
        struct blk k = block_of(a, sh, slot, s, a->rank);
        if (owner == a->rank || owner_copies(coll_shm_member(slot, s), me, s, a->rank, owner) || k.bad || !k.n)
            continue; /* its owner copied it (or found it bad) */
        copy_any(a, c, slot, s, a->rank, &k, T, R, &hybrid_ran, &err);
    }
    if (mismatch)
        atomic_store(&coll_shm_slot(slot)->mismatch, (uint64_t)a->tag);
    if (err)
        atomic_store(&coll_shm_slot(slot)->cma_refused, 2 * (uint64_t)a->tag + 1);
    copy_fence();
    if (coll_has_layout(a))
        coll_count_direct();
    if (th)
        copy_thresh_record(&th->th, hybrid_ran, hint_wtime() - t0);
    if ((st = barrier_shm(a)) != HINT_SUCCESS)
        return st;
    /* no rank publishes again before every rank has passed this barrier: the words are this call's */
    if (atomic_load(&coll_shm_slot(slot)->cma_refused) == 2 * (uint64_t)a->tag + 1) {
        if (err)
            RT_ERR("coll", "%s: a CMA copy to or from another rank failed (%s); the call is repeated pairwise",
                   shape_names[sh], strerror(err));
        path_calls[sh][PATH_REFUSED]++;
        return fallback(a, sh); /* every block is copied again; no send side was written */
    }
    path_calls[sh][reach == 2 ? PATH_CMA_DERIVED : reach == 1 ? PATH_CMA : PATH_HEAP]++;
    list_calls[sh][0] += (lists & LISTS_COPIED) != 0;
    list_calls[sh][1] += (lists & LISTS_CMA) != 0;
    if (atomic_load(&coll_shm_slot(slot)->mismatch) != (uint64_t)a->tag)
        return HINT_SUCCESS;
    return mismatch ? coll_mismatch(a, "a block's send count differs from its receiver's count") : HINT_ERR_MISMATCH;
}

void order_stats_report(void)
{
    for (int sh = 0; sh < 4; sh++) {
        unsigned long *n = path_calls[sh];
        if (rt_cfg_long("HINT_COLL_STATS") &&
            n[PATH_HEAP] + n[PATH_CMA] + n[PATH_CMA_DERIVED] + n[PATH_REFUSED] + n[PATH_PIECES_OFF_HEAP])
            RT_ERR("coll", "copy-order %s calls: %lu on the shared heap, %lu through CMA (a buffer off the heap), "
                   "%lu through CMA with derived types (iovecs), %lu fell back (CMA refused), %lu fell back "
                   "(no piece list for a derived type); piece lists: %lu calls with one copied to the shared "
                   "heap, %lu with one read through CMA, %lu lists read through CMA (the others kept from "
                   "earlier calls)",
                   shape_names[sh], n[PATH_HEAP], n[PATH_CMA], n[PATH_CMA_DERIVED], n[PATH_REFUSED],
                   n[PATH_PIECES_OFF_HEAP], list_calls[sh][0], list_calls[sh][1], list_reads[sh]);
        memset(n, 0, sizeof path_calls[sh]);
        memset(list_calls[sh], 0, sizeof list_calls[sh]);
        list_reads[sh] = 0;
    }
}

int alltoall_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, ALLTOALL); }
int alltoall_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, ALLTOALL); }
int alltoall_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, ALLTOALL); }
int alltoall_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLTOALL); }
int alltoall_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLTOALL); }
int alltoallv_row(struct coll_args *a) { return order_copy(a, ORDER_ROW, ALLTOALLV); }
int alltoallv_column(struct coll_args *a) { return order_copy(a, ORDER_COLUMN, ALLTOALLV); }
int alltoallv_hilbert(struct coll_args *a) { return order_copy(a, ORDER_HILBERT, ALLTOALLV); }
int alltoallv_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLTOALLV); }
int alltoallv_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLTOALLV); }
int allgather_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLGATHER); }
int allgather_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLGATHER); }
int allgatherv_morton(struct coll_args *a) { return order_copy(a, ORDER_MORTON, ALLGATHERV); }
int allgatherv_morton_numa(struct coll_args *a) { return order_copy(a, -1, ALLGATHERV); }
