/*
 * transport/shm/p2p.c — point-to-point messages through the per-pair channels of the node
 * segment.
 *
 * Protocols, chosen by size:
 *   EAGER  the message fits one cell: header and data in one cell, complete at once for the
 *          sender. Unexpected eager messages stay in their cell until matched, so a rank's
 *          memory never grows with messages it has not posted a receive for; a full channel
 *          makes further sends to that peer wait in the sender's queue (its own posted request).
 *   RTS    a larger message: a header cell naming how the data moves (enum shm_path):
 *          HEAP    the send buffer is on the shared heap: the receiver copies it straight into
 *                  the receive buffer (single copy) and hands the cell back as DONE;
 *          CMA     the send buffer is elsewhere (stack, static, mmap): the receiver reads it with
 *                  process_vm_readv (single copy), DONE; if the kernel refuses, it answers CTS
 *                  and every later send of the node skips CMA;
 *          BOUNCE  the header carries the first payload; once matched the receiver hands the
 *                  cell back as CTS and the sender streams FRAG cells, each placed by offset, so
 *                  memory stays bounded (ncells per pair) whatever the size.
 *          HINT_P2P_PATH=heap|cma|bounce forces a path where it can apply (tests, benchmarks).
 * Order: a sender announces cells through the channel's index ring and queues sends to a peer
 * in post order, so the first cells of two messages between a pair arrive in send order
 * (MPI's non-overtaking rule); fragments need no order since they carry their offset.
 * Polling: message w of a channel goes to cell w % ncells whenever that cell is free and carries
 * w, so the receiver polls that one line (eager data up to SHM_INLINE bytes rides in it) and
 * reads the index ring only when the sender rang its doorbell to say the message went elsewhere.
 * Doorbells are rung for a sleeping rank and for what the receiver cannot see in its expected
 * cells (a cell elsewhere, CTS, DONE); a sender waiting for free cells polls them.
 * Matching is the runtime's (runtime/match.c): the first cell of every message goes to
 * rt_match_arrival; an unexpected one stays in its cell (the runtime queues only its envelope)
 * until a receive takes it through shm_deliver. Once half of a sender's cells are held that way,
 * further unexpected eager messages from it are copied out of their cells (spilled), as MPI
 * eager protocols buffer them: otherwise a sender that got ahead (8 unexpected messages) would
 * block every later message to this rank, a barrier of another group included, and deadlock.
 * Rendezvous headers are never copied (their cell carries the CTS), so 8 unmatched large sends
 * from one rank can still block that channel until a receive matches one of them.
 * Ranks: requests and the runtime speak world ranks; channels are indexed by local rank
 * (world - world0: a node's ranks are consecutive).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "datatype/datatype.h"
#include "runtime/heap.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"
#include "transport/shm/cells.h"
#include "transport/shm/shm.h"

enum { PHASE_WAIT_CTS = 1, PHASE_STREAM = 2 };

static struct {
    struct shm_node *node;
    int n, me;
    struct shm_chan **in, **out; /* per local rank: its channel to us, ours to it */
    struct shm_rank_ctl *ctl;    /* the ranks' control blocks */
    uint32_t cell_stride;
    uint64_t *read_seq;       /* per source: cells consumed */
    uint64_t *write_seq;      /* per destination: cells announced (our copy) */
    uint64_t *full_rung;      /* per destination: write_seq when we last rang it for a full channel */
    struct rq_list *sendq;    /* per destination: sends whose first cell is not out yet */
    int sendq_busy;           /* destinations with a non-empty sendq */
    int world0;               /* world rank of local rank 0 */
    struct rq_list stream;    /* rendezvous sends: waiting for CTS or streaming fragments */
    struct rq_list active;    /* matched rendezvous receives taking fragments */
    int nstreaming;           /* rendezvous sends past their CTS, needing free cells */
    uint8_t *ring_src;        /* senders to notify after a progress pass */
    int nring;                /* entries set in ring_src */
    uint32_t last_bell;
    uint64_t next_msgid;
    int pending;
    int forced_path;          /* HINT_P2P_PATH: -1 = choose */
    uint8_t *held;            /* per source: its cells held by unexpected messages */
    struct spilled *spills;   /* copies of unexpected eager cells, not delivered yet */
    size_t nspilled, spill_room; /* copies alive, match entries reserved for them */
    struct spilled *spare;    /* delivered small copies kept for the next spill (SPILL_SMALL) */
    int nspare;
    unsigned long sent[SHM_NPATHS + 1]; /* sends by path; [SHM_NPATHS] = eager (HINT_P2P_STATS) */
    unsigned long long sent_bytes;      /* data bytes of those sends (HINT_P2P_STATS) */
} S;

/* A spilled cell: the receiver's copy of an unexpected eager message, on a list so finalize
   frees the ones no receive ever took. */
struct spilled {
    struct spilled *prev, *next;
    _Alignas(SHM_CACHE_LINE) struct shm_cell cell; /* header line, then the payload */
};
#define SHM_HELD_MAX (SHM_NCELLS / 2)
/* Copies of messages up to SPILL_SMALL bytes share one size and are kept for reuse, at most
   SPILL_SPARE_MAX of them: a sender running ahead of its receiver (a window of small isends)
   has about a third of its messages spilled, and an aligned_alloc and free for each took ~200
   instructions, an eighth of what the receiver spent per message. */
#define SPILL_SMALL 192
#define SPILL_SPARE_MAX 64

int shm_p2p_init(struct shm_node *n)
{
    memset(&S, 0, sizeof S);
    S.node = n;
    S.n = n->nlocal;
    S.me = n->me;
    S.world0 = n->world0;
    S.read_seq = calloc((size_t)S.n, sizeof *S.read_seq);
    S.write_seq = calloc((size_t)S.n, sizeof *S.write_seq);
    S.full_rung = calloc((size_t)S.n, sizeof *S.full_rung);
    S.sendq = calloc((size_t)S.n, sizeof *S.sendq);
    S.ring_src = calloc((size_t)S.n, 1);
    S.held = calloc((size_t)S.n, 1);
    S.in = calloc((size_t)S.n, sizeof *S.in);
    S.out = calloc((size_t)S.n, sizeof *S.out);
    /* At most ncells cells per source can be held unexpected at once; spilled copies reserve
       their match entries as they come (spill_eager). */
    if (!S.read_seq || !S.write_seq || !S.full_rung || !S.sendq || !S.ring_src || !S.held || !S.in || !S.out ||
        rt_match_reserve((size_t)S.n * SHM_NCELLS) != HINT_SUCCESS) {
        shm_p2p_fini();
        return HINT_ERR_NOMEM;
    }
    for (int p = 0; p < S.n; p++) {
        S.in[p] = shm_chan(n, p, S.me);
        S.out[p] = shm_chan(n, S.me, p);
    }
    S.ctl = shm_ctl(n, 0);
    S.cell_stride = n->hdr->cell_stride;
    S.last_bell = atomic_load(&shm_ctl(n, S.me)->bell) - 1; /* force a first full pass */
    const char *path = rt_cfg_str("HINT_P2P_PATH");
    S.forced_path = !strcmp(path, "heap") ? SHM_PATH_HEAP : !strcmp(path, "cma") ? SHM_PATH_CMA
                    : !strcmp(path, "bounce") ? SHM_PATH_BOUNCE : -1;
    if (S.forced_path < 0 && strcmp(path, "auto") != 0)
        RT_ERR("shm", "HINT_P2P_PATH=%s is not heap, cma, bounce or auto; choosing by buffer", path);
    return HINT_SUCCESS;
}

void shm_p2p_fini(void)
{
    if (S.node && rt_cfg_long("HINT_P2P_STATS")) {
        char others[128]; /* the transports stopped before this one keep their counts */
        rt_transport_stats(others, sizeof others);
        RT_ERR("shm", "messages sent: eager %lu, heap %lu, cma %lu, bounce %lu%s", S.sent[SHM_NPATHS],
               S.sent[SHM_PATH_HEAP], S.sent[SHM_PATH_CMA], S.sent[SHM_PATH_BOUNCE], others);
        /* a line of its own: scripts sum the numbers of the line above as messages */
        RT_ERR("shm", "bytes sent: %llu", S.sent_bytes);
        /* and those of the other transports on a third line (not matched by "bytes sent:") */
        rt_transport_stats_bytes(others, sizeof others);
        if (others[0])
            RT_ERR("shm", "bytes sent across nodes: %s", others + 2);
    }
    while (S.spills) {
        struct spilled *sp = S.spills;
        S.spills = sp->next;
        free(sp);
    }
    while (S.spare) {
        struct spilled *sp = S.spare;
        S.spare = sp->next;
        free(sp);
    }
    free(S.held);
    free(S.read_seq);
    free(S.write_seq);
    free(S.full_rung);
    free(S.sendq);
    free(S.ring_src);
    free(S.in);
    free(S.out);
    memset(&S, 0, sizeof S);
}

int shm_pending(void) { return S.pending; }

static inline struct shm_cell *cell_at(struct shm_chan *ch, uint32_t i)
{
    return (struct shm_cell *)((char *)ch + SHM_CACHE_LINE + (size_t)i * S.cell_stride);
}

/* Where a cell's payload is: in its header line for a short eager message, else after it. */
static inline void *cell_data(struct shm_cell *cell)
{
    return cell->kind == SHM_EAGER && cell->len <= SHM_INLINE ? (void *)cell->data : shm_payload(cell);
}

static inline uint64_t cell_total(const struct shm_cell *cell)
{
    return cell->kind == SHM_EAGER ? cell->len : cell->rdv.total;
}

/* Whether local rank p is (about to be) asleep on its doorbell; its own line, written only by
   it, so reading it costs no line crossing while it is awake. */
static inline bool sleeps(int p)
{
    return atomic_load_explicit(&S.ctl[p].sleeping, memory_order_seq_cst) != 0;
}

/* ---- sender side ---- */

/* A free cell of channel ch, `prefer` (the next in rotation) first; -1 when none is free.
   While `prefer` is FULL the receiver has not taken it yet, and it takes cells in the order they
   were announced, so the others are no freer: looking at them would pull up to ncells lines the
   receiver is writing, once per progress pass of a sender whose channel is full. They are worth a
   look only when `prefer` is held (an unexpected message) or handed back (CTS, DONE). */
static int find_free_cell(struct shm_chan *ch, uint32_t prefer)
{
    uint32_t state = atomic_load_explicit(&cell_at(ch, prefer)->state, memory_order_acquire);
    if (state == SHM_CELL_FREE)
        return (int)prefer;
    if (state == SHM_CELL_FULL)
        return -1;
    for (uint32_t i = 0; i < SHM_NCELLS; i++)
        if (atomic_load_explicit(&cell_at(ch, i)->state, memory_order_acquire) == SHM_CELL_FREE)
            return (int)i;
    return -1;
}

/* Hand the filled cell idx to the receiver. It looks for message w in cell w % ncells without
   reading anything else, so its doorbell is rung only when the cell is elsewhere (then it must
   read the index ring) or when it sleeps. FULL goes before the write counter: a receiver that
   finds the cell through the index ring may free it at once, and a FULL stored after that would
   take the cell out of the channel for good. The seq_cst store orders FULL before the read of
   `sleeping` (Dekker with shm_sleep, which re-checks the expected cells after setting it). */
static void announce(int dst, struct shm_chan *ch, struct shm_cell *cell, uint32_t idx)
{
    uint64_t w = S.write_seq[dst]++;
    cell->seq = (uint32_t)w;
    atomic_store_explicit(&cell->state, SHM_CELL_FULL, memory_order_seq_cst);
    ch->idx_ring[w % SHM_NCELLS] = idx;
    atomic_store_explicit(&ch->write_seq, w + 1, memory_order_release);
    if (idx != w % SHM_NCELLS || sleeps(dst))
        shm_ring(S.node, dst);
}

/* Our channel to dst has no free cell. Its receiver frees cells in a progress pass, but a blocking
   receive that polls another peer's cell alone (recv_now) makes none until its doorbell moves
   (shm_recv_now then sends it the general way), so ring it: else this rank waits out the
   receiver's whole yield budget (HINT_WAIT_YIELD_US; review finding 3 of 544b59c). Once per fill
   of the channel (a new write_seq), not at every pass of a sender that keeps finding it full. */
static void channel_full(int dst)
{
    if (S.full_rung[dst] == S.write_seq[dst])
        return;
    S.full_rung[dst] = S.write_seq[dst];
    shm_ring(S.node, dst);
}

/* The single-copy path a rendezvous send can take, by where its buffer is. */
static int choose_path(const struct hint_request_s *r)
{
    bool on_heap = r->contig && heap_contains(r->buf) && heap_contains((char *)r->buf + r->bytes - 1);
    bool cma = r->contig && !atomic_load_explicit(&S.node->hdr->cma_refused, memory_order_relaxed);
    switch (S.forced_path) {
    case SHM_PATH_BOUNCE: return SHM_PATH_BOUNCE;
    case SHM_PATH_HEAP: return on_heap ? SHM_PATH_HEAP : SHM_PATH_BOUNCE;
    case SHM_PATH_CMA: return cma ? SHM_PATH_CMA : SHM_PATH_BOUNCE;
    default: return on_heap ? SHM_PATH_HEAP : cma ? SHM_PATH_CMA : SHM_PATH_BOUNCE;
    }
}

/* Put r's first cell (eager or rendezvous header) into the channel; false when it is full. */
static bool push_first(struct hint_request_s *r)
{
    int dst = r->peer - S.world0;
    struct shm_chan *ch = S.out[dst];
    int idx = find_free_cell(ch, (uint32_t)(S.write_seq[dst] % SHM_NCELLS));
    if (idx < 0) {
        channel_full(dst);
        return false;
    }
    struct shm_cell *cell = cell_at(ch, (uint32_t)idx);
    uint32_t payload = S.node->hdr->payload;
    /* A synchronous send (hint_ssend) that fits one cell rides in a rendezvous header instead:
       it completes when the receiver matched it and handed the header back as DONE. */
    bool fits = r->bytes <= payload, eager = fits && !r->sync;
    int path = fits ? SHM_PATH_BOUNCE : choose_path(r);
    size_t len = path == SHM_PATH_BOUNCE ? (fits ? r->bytes : payload) : 0;
    cell->kind = eager ? SHM_EAGER : SHM_RTS;
    cell->ctx = r->ctx;
    cell->tag = r->tag;
    cell->len = (uint32_t)len;
    cell->sig = (int16_t)r->sig;
    if (!eager) {
        cell->path = (uint8_t)path;
        cell->rdv.total = r->bytes;
        cell->rdv.offset = 0;
        cell->rdv.addr = path == SHM_PATH_HEAP ? heap_offset(r->buf) : (uint64_t)(uintptr_t)r->buf;
    }
    S.sent[eager ? SHM_NPATHS : path]++;
    S.sent_bytes += r->bytes;
    if (len)
        rq_pack(r, 0, cell_data(cell), len);
    if (eager) {
        announce(dst, ch, cell, (uint32_t)idx);
        r->status.bytes = r->bytes;
        rq_complete(r);
        S.pending--;
        return true;
    }
    r->msgid = cell->rdv.msgid = S.next_msgid++;
    r->slot = (uint32_t)idx;
    r->off = len;
    r->phase = PHASE_WAIT_CTS;
    announce(dst, ch, cell, (uint32_t)idx);
    rq_list_push(&S.stream, r);
    return true;
}

/* Move a matched rendezvous send forward; true once all of it is in the channel. */
static bool stream_send(struct hint_request_s *r)
{
    int dst = r->peer - S.world0;
    struct shm_chan *ch = S.out[dst];
    if (r->phase == PHASE_WAIT_CTS) {
        struct shm_cell *hdr = cell_at(ch, r->slot);
        uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
        if (state != SHM_CELL_CTS && state != SHM_CELL_DONE)
            return false;
        atomic_store_explicit(&hdr->state, SHM_CELL_FREE, memory_order_relaxed);
        if (state == SHM_CELL_DONE) /* the receiver copied it all itself */
            r->off = r->bytes;
        r->phase = PHASE_STREAM;
        S.nstreaming++;
    }
    uint32_t payload = S.node->hdr->payload;
    while (r->off < r->bytes) {
        int idx = find_free_cell(ch, (uint32_t)(S.write_seq[dst] % SHM_NCELLS));
        if (idx < 0) {
            channel_full(dst);
            return false;
        }
        struct shm_cell *cell = cell_at(ch, (uint32_t)idx);
        size_t len = r->bytes - r->off < payload ? r->bytes - r->off : payload;
        cell->kind = SHM_FRAG;
        cell->rdv.msgid = r->msgid;
        cell->rdv.offset = r->off;
        cell->len = (uint32_t)len;
        rq_pack(r, r->off, shm_payload(cell), len);
        r->off += len;
        announce(dst, ch, cell, (uint32_t)idx);
    }
    S.nstreaming--;
    r->status.bytes = r->bytes;
    rq_complete(r);
    S.pending--;
    return true;
}

static void progress_sendq(int dst)
{
    struct rq_list *q = &S.sendq[dst];
    while (q->head) {
        struct hint_request_s *r = q->head;
        rq_list_remove(q, r);
        if (!push_first(r)) {
            rq_list_push_front(q, r); /* still full: back at the head, to keep the order */
            return;
        }
    }
    S.sendq_busy--;
}

bool shm_send_now(int world, const void *buf, size_t bytes, int tag, uint32_t ctx, int sig)
{
    int dst = world - S.world0;
    if (bytes > S.node->hdr->payload || S.sendq[dst].head)
        return false;
    struct shm_chan *ch = S.out[dst];
    uint32_t idx = (uint32_t)(S.write_seq[dst] % SHM_NCELLS);
    struct shm_cell *cell = cell_at(ch, idx);
    if (atomic_load_explicit(&cell->state, memory_order_acquire) != SHM_CELL_FREE)
        return false; /* the general path looks for another free cell */
    cell->kind = SHM_EAGER;
    cell->ctx = ctx;
    cell->tag = tag;
    cell->len = (uint32_t)bytes;
    cell->sig = (int16_t)sig;
    rt_memcpy(cell_data(cell), buf, bytes);
    S.sent[SHM_NPATHS]++;
    S.sent_bytes += bytes;
    announce(dst, ch, cell, idx);
    return true;
}

void shm_isend(struct hint_request_s *r)
{
    S.pending++;
    struct rq_list *q = &S.sendq[r->peer - S.world0];
    if (q->head == NULL && push_first(r))
        return;
    if (q->head == NULL)
        S.sendq_busy++;
    rq_list_push(q, r);
}

/* ---- receiver side ---- */

static void ring_later(int src)
{
    if (!S.ring_src[src]) {
        S.ring_src[src] = 1;
        S.nring++;
    }
}

/* Hand a rendezvous header back (CTS, DONE): its sender waits for that, so ring it. */
static void release_cell(int src, struct shm_cell *cell, uint32_t state)
{
    atomic_store_explicit(&cell->state, state, memory_order_release);
    ring_later(src);
}

/* A freed cell matters to its sender only when it has sends waiting for one: then it polls its
   cells in every progress pass, so only a sender that sleeps needs its doorbell rung (seq_cst:
   FREE is ordered before the read of `sleeping`, Dekker with shm_sleep's re-check). */
static void free_cell(int src, struct shm_cell *cell)
{
    atomic_store_explicit(&cell->state, SHM_CELL_FREE, memory_order_seq_cst);
    if (sleeps(src))
        ring_later(src);
}

static void finish_recv(struct hint_request_s *r)
{
    r->status.bytes = r->total < r->bytes ? r->total : r->bytes;
    rq_complete(r);
    S.pending--;
}

/* Copy a payload that belongs at offset off of r's message, clipped to r's buffer. */
static void take_payload(struct hint_request_s *r, size_t off, const struct shm_cell *cell)
{
    if (off < r->bytes) {
        size_t n = cell->len < r->bytes - off ? cell->len : r->bytes - off;
        rq_unpack(r, off, cell_data((struct shm_cell *)cell), n);
    }
    r->off += cell->len;
}

/* process_vm_readv until n bytes arrived; false when the kernel refuses (then never again). */
static bool cma_read(void *dst, int src, uint64_t addr, size_t n)
{
    pid_t pid = shm_ctl(S.node, src)->pid;
    size_t done = 0;
    while (done < n) {
        struct iovec local = {(char *)dst + done, n - done};
        struct iovec remote = {(void *)(uintptr_t)(addr + done), n - done};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got <= 0) {
            if (got < 0 && errno == EINTR)
                continue;
            if (!atomic_exchange(&S.node->hdr->cma_refused, 1))
                RT_ERR("shm", "process_vm_readv from local rank %d refused (%s); large messages from buffers "
                       "off the shared heap go through cells from now on", src, strerror(errno));
            return false;
        }
        done += (size_t)got;
    }
    return true;
}

/* The receiver moves a HEAP or CMA message itself; false means: fall back to streaming. */
static bool single_copy(struct hint_request_s *r, int src, const struct shm_cell *cell)
{
    size_t n = cell->rdv.total < r->bytes ? cell->rdv.total : r->bytes;
    if (cell->path == SHM_PATH_HEAP) {
        if (n)
            rq_unpack(r, 0, heap_at(cell->rdv.addr), n);
    } else {
        if (!r->contig || (n && !cma_read(r->buf, src, cell->rdv.addr, n)))
            return false;
    }
    r->off = cell->rdv.total;
    return true;
}

/* datatype.h's one rule: kinds differ only when both are one predefined kind each. */
static bool signatures_match(int sent, int wanted) { return dt_kinds_match(sent, wanted); }

/* Room for a copy of an eager cell of len bytes (payload of them after its header line): a kept
   one when the message is small, else a new one. */
static struct spilled *spill_block(uint32_t len, size_t payload)
{
    if (len > SPILL_SMALL)
        return aligned_alloc(SHM_CACHE_LINE, (sizeof(struct spilled) + payload + SHM_CACHE_LINE - 1) /
                                                 SHM_CACHE_LINE * SHM_CACHE_LINE);
    struct spilled *sp = S.spare;
    if (sp) {
        S.spare = sp->next;
        S.nspare--;
        return sp;
    }
    return aligned_alloc(SHM_CACHE_LINE, (sizeof(struct spilled) + SPILL_SMALL + SHM_CACHE_LINE - 1) /
                                             SHM_CACHE_LINE * SHM_CACHE_LINE);
}

/* An unexpected eager cell from a sender that already has SHM_HELD_MAX cells held: a private
   copy takes its place and the cell goes back to the sender. The cell itself when it is not such
   a cell or when neither memory nor a match entry can be had (then it is held, as before). */
static struct shm_cell *spill_eager(int src, struct shm_cell *cell)
{
    if (cell->kind != SHM_EAGER || S.held[src] < SHM_HELD_MAX)
        return cell;
    if (S.nspilled == S.spill_room) {
        if (rt_match_reserve(64) != HINT_SUCCESS)
            return cell;
        S.spill_room += 64;
    }
    size_t payload = cell->len > SHM_INLINE ? cell->len : 0;
    struct spilled *sp = spill_block(cell->len, payload);
    if (sp == NULL)
        return cell;
    memcpy(&sp->cell, cell, sizeof *cell + payload);
    atomic_store_explicit(&sp->cell.state, SHM_CELL_SPILLED, memory_order_relaxed);
    sp->prev = NULL;
    sp->next = S.spills;
    if (S.spills)
        S.spills->prev = sp;
    S.spills = sp;
    S.nspilled++;
    free_cell(src, cell);
    return &sp->cell;
}

static void drop_spilled(struct shm_cell *cell)
{
    struct spilled *sp = (struct spilled *)((char *)cell - offsetof(struct spilled, cell));
    if (sp->prev)
        sp->prev->next = sp->next;
    else
        S.spills = sp->next;
    if (sp->next)
        sp->next->prev = sp->prev;
    S.nspilled--;
    if (sp->cell.len > SPILL_SMALL || S.nspare >= SPILL_SPARE_MAX) {
        free(sp);
        return;
    }
    sp->next = S.spare;
    S.spare = sp;
    S.nspare++;
}

/* Matching paired receive r with the message whose first cell came from local rank src. */
static void deliver_first(struct hint_request_s *r, int src, struct shm_cell *cell)
{
    S.pending++;
    if (atomic_load_explicit(&cell->state, memory_order_relaxed) == SHM_CELL_HELD)
        S.held[src]--;
    r->status.source = src + S.world0;
    r->status.tag = cell->tag;
    r->total = cell_total(cell);
    r->off = 0;
    if (r->total > r->bytes)
        r->status.error = HINT_ERR_TRUNCATE;
    else if (!signatures_match(cell->sig, r->sig))
        r->status.error = HINT_ERR_TYPE; /* delivered as bytes all the same */
    take_payload(r, 0, cell);
    if (cell->kind == SHM_EAGER) {
        if (atomic_load_explicit(&cell->state, memory_order_relaxed) == SHM_CELL_SPILLED)
            drop_spilled(cell);
        else
            free_cell(src, cell);
        finish_recv(r);
        return;
    }
    if (cell->path != SHM_PATH_BOUNCE && single_copy(r, src, cell)) {
        release_cell(src, cell, SHM_CELL_DONE);
        finish_recv(r);
        return;
    }
    if (cell->path == SHM_PATH_BOUNCE && r->off >= r->total) { /* a synchronous send's whole message */
        release_cell(src, cell, SHM_CELL_DONE);
        finish_recv(r);
        return;
    }
    r->msgid = cell->rdv.msgid;
    r->peer = src + S.world0;
    rq_list_push(&S.active, r);
    release_cell(src, cell, SHM_CELL_CTS);
}

static void deliver_frag(int src, struct shm_cell *cell)
{
    for (struct hint_request_s *r = S.active.head; r; r = r->next) {
        if (r->peer != src + S.world0 || r->msgid != cell->rdv.msgid)
            continue;
        take_payload(r, cell->rdv.offset, cell);
        free_cell(src, cell);
        if (r->off >= r->total) {
            rq_list_remove(&S.active, r);
            finish_recv(r);
        }
        return;
    }
    RT_ERR("shm", "fragment of unknown message %llu from local rank %d dropped",
           (unsigned long long)cell->rdv.msgid, src);
    free_cell(src, cell);
}

static void arrive(int src, struct shm_cell *cell)
{
    if (cell->kind == SHM_FRAG) {
        deliver_frag(src, cell);
        return;
    }
    struct shm_cell *first = spill_eager(src, cell);
    struct hint_request_s *r = rt_match_arrival(&shm_transport, src + S.world0, first->tag, first->ctx, first);
    if (r) {
        deliver_first(r, src, first);
    } else if (first == cell) { /* consumed but kept: no longer FULL, so it cannot pass for a later message */
        atomic_store_explicit(&cell->state, SHM_CELL_HELD, memory_order_relaxed);
        S.held[src]++;
    }
}

static void ring_senders(void)
{
    for (int s = 0; S.nring > 0 && s < S.n; s++)
        if (S.ring_src[s]) {
            S.ring_src[s] = 0;
            S.nring--;
            shm_ring(S.node, s);
        }
}

size_t shm_msg_bytes(const void *msg) { return cell_total(msg); }

void shm_deliver(struct hint_request_s *r, int src, void *msg)
{
    deliver_first(r, src - S.world0, msg);
    ring_senders();
}

/* The next message from src when it sits where the sender puts it whenever it can (cell
   read_seq % ncells): the one line the receiver polls. NULL when it is not there (not sent yet,
   or in another cell: then the sender rang our bell and poll_channels finds it). */
static inline struct shm_cell *expected_cell(int src)
{
    uint64_t r = S.read_seq[src];
    struct shm_cell *cell = cell_at(S.in[src], (uint32_t)(r % SHM_NCELLS));
    if (atomic_load_explicit(&cell->state, memory_order_acquire) != SHM_CELL_FULL || cell->seq != (uint32_t)r)
        return NULL;
    return cell;
}

static void poll_expected(void)
{
    for (int src = 0; src < S.n; src++) {
        struct shm_cell *cell;
        while ((cell = expected_cell(src)) != NULL) {
            S.read_seq[src]++;
            arrive(src, cell);
        }
    }
}

static void poll_channels(void)
{
    for (int src = 0; src < S.n; src++) {
        struct shm_chan *ch = S.in[src];
        uint64_t w = atomic_load_explicit(&ch->write_seq, memory_order_acquire);
        while (S.read_seq[src] < w) {
            uint32_t idx = ch->idx_ring[S.read_seq[src] % SHM_NCELLS];
            S.read_seq[src]++;
            arrive(src, cell_at(ch, idx));
        }
    }
}

int shm_recv_now(int world, void *buf, size_t bytes, int tag, uint32_t ctx, int sig, size_t *got, int *got_tag)
{
    int src = world - S.world0;
    struct shm_cell *cell = expected_cell(src);
    if (cell == NULL) /* a rung bell may mean the message went to another cell */
        return atomic_load_explicit(&S.ctl[S.me].bell, memory_order_acquire) == S.last_bell ? 0 : -1;
    if (cell->kind != SHM_EAGER || cell->ctx != ctx || (tag >= 0 && cell->tag != tag) || cell->len > bytes ||
        !signatures_match(cell->sig, sig))
        return -1;
    rt_memcpy(buf, cell_data(cell), cell->len); /* buf at any offset: runtime/memcopy.h */
    *got = cell->len;
    *got_tag = cell->tag;
    S.read_seq[src]++;
    free_cell(src, cell);
    if (S.nring)
        ring_senders();
    return 1;
}

static bool has_free_cell(int dst)
{
    for (uint32_t i = 0; i < SHM_NCELLS; i++)
        if (atomic_load_explicit(&cell_at(S.out[dst], i)->state, memory_order_acquire) == SHM_CELL_FREE)
            return true;
    return false;
}

bool shm_p2p_has_work(void)
{
    for (int src = 0; src < S.n; src++)
        if (expected_cell(src))
            return true;
    for (int dst = 0; S.sendq_busy > 0 && dst < S.n; dst++)
        if (S.sendq[dst].head && has_free_cell(dst))
            return true;
    for (struct hint_request_s *r = S.stream.head; S.nstreaming > 0 && r; r = r->next)
        if (r->phase == PHASE_STREAM && has_free_cell(r->peer - S.world0))
            return true;
    return false;
}

void shm_progress(void)
{
    poll_expected();
    /* Every other event that can unblock this rank (a message in an unexpected cell, a CTS, a
       freed cell while it sleeps) rings its bell, so an unchanged bell means there is nothing
       more to look at, unless sends wait for free cells: those are polled. */
    uint32_t bell = atomic_load_explicit(&S.ctl[S.me].bell, memory_order_acquire);
    if (bell == S.last_bell && S.sendq_busy == 0 && S.nstreaming == 0) {
        if (S.nring)
            ring_senders();
        return;
    }
    S.last_bell = bell;
    poll_channels();
    /* Rendezvous sends first: a header handed back as DONE or CTS frees its cell only here,
       and that is no event that rings our bell, so the queued sends must see it now. */
    for (struct hint_request_s *r = S.stream.head, *next; r; r = next) {
        next = r->next;
        if (stream_send(r))
            rq_list_remove(&S.stream, r);
    }
    for (int dst = 0; S.sendq_busy > 0 && dst < S.n; dst++)
        if (S.sendq[dst].head)
            progress_sendq(dst);
    ring_senders();
}
