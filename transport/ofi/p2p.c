/*
 * transport/ofi/p2p.c — point-to-point messages between nodes over one libfabric RDM endpoint.
 *
 * Control messages (struct ofi_hdr first) all carry tag OFI_TAG_CTRL and land in a pool of
 * receive buffers (HINT_OFI_RX_BUFFERS of them, OFI_RX_POSTED posted at a time):
 *   EAGER  header + payload (up to the smaller of the two ranks' HINT_OFI_EAGER_MAX): the
 *          sender's request completes once libfabric reports the send done, or at once when it
 *          fits the provider's inject size (fi_tinject, HINT_OFI_INJECT), as every control
 *          message that fits does.
 *   EAGER (large) above that, up to the smaller of the two ranks' HINT_OFI_LARGE_MAX: the same
 *          header and the payload as two iovs (fi_tsendv, from the user's buffer), tag
 *          OFI_TAG_LARGE, into a second pool of HINT_OFI_LARGE_BUFFERS buffers (OFI_LARGE_POSTED
 *          posted at a time, the most recently used first); from
 *          there on as an eager message (its sequence number is the sender's one count). Only
 *          with a credit left for that receiver (credit.c): without one, it goes as below.
 *   RTS    a larger message (or a synchronous send of any size): header + the sender's handle.
 *   CTS    the receiver, once matched, posts fi_trecv for the bytes it takes (into the user's
 *          buffer, or a packed copy for a non-contiguous type) with a tag only it hands out, and
 *          answers with that tag; the sender then fi_tsend's the data with it. The provider's
 *          own rendezvous (ofi_rxm: SAR or RMA reads) moves the bytes.
 *   RTS_READ where the endpoint has FI_RMA reads, a message of at least HINT_OFI_RMA_MIN bytes
 *          that is not eager: the sender registers its buffer (a packed copy for a derived type)
 *          for remote reads and sends its address and key; the receiver, once matched, fi_read's
 *          the bytes it takes straight into the user's buffer (a packed copy for a derived type)
 *          and answers FIN, on which the sender releases the registration and completes. One
 *          control message each way and no extra copy; the provider's mr_mode is followed
 *          (fabric.c, ofi_register_key). Registered sends waiting for their FIN are bounded
 *          (OFI_READ_PINNED_MAX bytes); beyond that, and when a registration fails, a message
 *          takes the RTS / CTS path.
 * Matching is the runtime's: the first control message of every message goes to
 * rt_match_arrival. An unexpected one keeps its pool buffer as the runtime's handle until a
 * receive takes it (ofi_deliver); when fewer than a quarter of the pool buffers remain posted or free,
 * unexpected messages are copied out to malloc'd memory and their buffer freed, up to
 * HINT_OFI_UNEXPECTED_MAX bytes (and one message per 4 KiB of it, at least 64); beyond that they
 * keep their buffers, and when the last one is taken the job ends with a message naming the
 * bound: a rank that then waited for any other message (a barrier's, a CTS) would hang.
 * Order: every control message from a rank carries a sequence number per destination; the
 * receiver takes them in that order (holding any that arrive early), so non-overtaking holds per
 * sender whether or not the provider keeps send-after-send order (FI_ORDER_SAS, asked for). The
 * sender hands control messages to libfabric strictly in post order: a send that finds no free
 * send buffer, or that libfabric refuses for now (-FI_EAGAIN), waits in the backlog and every
 * later one behind it; data operations refused for now wait in a retry queue.
 */
#include <stdlib.h>
#include <string.h>

#include "datatype/datatype.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"
#include "transport/ofi/ofi.h"
#include "transport/ofi/ofi_int.h"

#define OFI_NTX 64           /* send buffers for control messages */
#define OFI_TAG_ID_MASK ((1ull << (63 - OFI_CHUNK_BITS)) - 1)
/* Bytes a rank keeps registered (or packed) for sends whose receivers have not read them yet;
   messages beyond it take the RTS / CTS path, which registers only once matched. */
#define OFI_READ_PINNED_MAX (256ull << 20)

enum {
    PH_FIRST = 1, /* send: eager / RTS not handed to libfabric yet */
    PH_EAGER_OUT, /* send: eager message handed over; completes with its send completion */
    PH_WAIT_CTS,  /* send: RTS out, waiting for the receiver */
    PH_CTS,       /* receive: matched, CTS not handed to libfabric yet */
    PH_CTS0_OUT,  /* receive taking no bytes: completes with its CTS's send completion */
    PH_DATA,      /* send or receive: data operations in flight */
    PH_WAIT_FIN,  /* send: RTS_READ out, its buffer registered, waiting for the receiver's reads */
    PH_FIN,       /* receive: read what it takes, FIN not handed to libfabric yet */
};

/* A pool of receive buffers under one tag: 0 (OFI_TAG_CTRL) the control messages and eager ones
   up to HINT_OFI_EAGER_MAX, 1 (OFI_TAG_LARGE) eager messages up to HINT_OFI_LARGE_MAX. */
struct rx_pool {
    size_t slot;                 /* bytes per buffer */
    uint64_t tag;
    int n, posted, target, nfree; /* buffers; posted now; kept posted; neither posted nor held */
    struct ofi_op *ops, *free;   /* every buffer's op; free ones, most recently used first */
    char *mem;
    struct fid_mr *mr;
    void *desc;
};

static struct {
    size_t eager_max, slot;      /* this rank's largest eager payload, bytes per control buffer */
    size_t large_max;            /* largest payload of a large eager message (0: none) */
    struct rx_pool pool[2];
    struct ofi_op *tx;           /* the send buffers' ops */
    char *txmem;
    struct fid_mr *txmr;
    void *txdesc;
    struct ofi_op *tx_free;      /* send buffers free */
    struct ofi_op *op_free, *op_all; /* data / copy ops: free, every one */
    struct rq_list backlog;      /* requests waiting to hand a control message over, in order */
    struct ofi_op *stalled;      /* control op libfabric refused for now: goes first */
    struct ofi_op *retry_head, *retry_tail; /* data ops and reposts refused for now */
    uint32_t *tx_seq, *rx_seq;   /* per world rank: control messages sent to / taken from it */
    struct ofi_op **held;        /* per world rank: control messages that arrived early, by seq */
    uint64_t next_msgid, next_rtag;
    size_t unexp_bytes, unexp_max;
    size_t read_min, read_pinned; /* HINT_OFI_RMA_MIN; bytes registered for RTS_READ sends */
    size_t inject_max;           /* control messages up to this size go by fi_tinject (0: none) */
    int ncopies, max_copies;     /* unexpected messages copied out of the pool, at most */
    int moving;                  /* data ops and large eager sends in flight */
    int pending;
} P;

static unsigned long sent; /* messages sent over the fabric; kept after fini for the stats line */
static unsigned long long sent_bytes; /* their data bytes, likewise */
static unsigned long completions; /* CQ entries read (fabric.c: was a wake-up for nothing?) */

unsigned long ofi_sent(void) { return sent; }
unsigned long long ofi_sent_bytes(void) { return sent_bytes; }
unsigned long ofi_completions(void) { return completions; }
int ofi_p2p_pending(void) { return P.pending; }
bool ofi_p2p_busy(void) { return P.stalled != NULL || P.retry_head != NULL; }
bool ofi_p2p_moving(void) { return P.moving > 0; }

static void out_of_memory(const char *what, size_t n)
{
    RT_ERR("ofi", "no memory for %s (%zu bytes); the job cannot go on", what, n);
    boot_abort(HINT_ERR_NOMEM, "libfabric transport out of memory");
}

/* ---- operations ---- */

static struct ofi_op *op_get(void)
{
    struct ofi_op *op = P.op_free;
    if (op) {
        P.op_free = op->next;
    } else {
        if ((op = calloc(1, sizeof *op)) == NULL)
            out_of_memory("a fabric operation", sizeof *op);
        op->all = P.op_all;
        P.op_all = op;
    }
    op->next = NULL;
    return op;
}

static void op_put(struct ofi_op *op)
{
    op->buf = NULL;
    op->r = NULL;
    op->next = P.op_free;
    P.op_free = op;
}

static void retry_later(struct ofi_op *op)
{
    op->next = NULL;
    if (P.retry_tail)
        P.retry_tail->next = op;
    else
        P.retry_head = op;
    P.retry_tail = op;
}

/* Hand a pool receive or a data operation to libfabric: 0, -FI_EAGAIN, or an error. */
static int submit(struct ofi_op *op)
{
    int rc;
    switch (op->type) {
    case OP_RX: {
        struct rx_pool *pl = &P.pool[op->pool];
        rc = (int)fi_trecv(ofi.ep, op->buf, pl->slot, pl->desc, FI_ADDR_UNSPEC, pl->tag, 0, op);
        if (rc == 0)
            pl->posted++;
        return rc;
    }
    case OP_DATA_TX:
        return (int)fi_tsend(ofi.ep, op->buf, op->len, op->desc, op->addr, op->tag, op);
    case OP_READ:
        return (int)fi_read(ofi.ep, op->buf, op->len, op->desc, op->addr, op->raddr, op->tag, op);
    default: /* OP_DATA_RX */
        return (int)fi_trecv(ofi.ep, op->buf, op->len, op->desc, FI_ADDR_UNSPEC, op->tag, 0, op);
    }
}

static void submit_or_queue(struct ofi_op *op)
{
    int rc = submit(op);
    if (rc == -FI_EAGAIN)
        retry_later(op);
    else if (rc)
        ofi_fatal(op->type == OP_RX        ? "fi_trecv (pool)"
                  : op->type == OP_DATA_TX ? "fi_tsend (data)"
                  : op->type == OP_READ    ? "fi_read (data)"
                                           : "fi_trecv (data)",
                  rc);
}

static void repost(struct ofi_op *op)
{
    op->type = OP_RX;
    submit_or_queue(op);
}

/* The pool: HINT_OFI_RX_BUFFERS buffers for control messages, of which only OFI_RX_POSTED are
   posted at a time, the most recently used first. libfabric fills posted receives in the order
   they were posted, so every posted buffer takes its turn: with all 128 posted, 4 KiB ping-pong
   messages went through 1 MiB of buffers and missed the cache on both copies (the provider's into
   the buffer, ours out of it), 0.7 us of the 1.5 us from one message's arrival to the reply's
   send here; with 8-16 posted the turn-around is 0.7 us at 4 KiB as at 8 B. The others wait in
   rx_free and stand in for buffers that unexpected messages hold. When none is posted for a
   while, the provider keeps what arrives in its socket (net: up to FI_NET_MAX_SAVED messages
   of its own, then TCP flow control): nothing is lost. */
#define OFI_RX_POSTED 16
/* The large pool likewise: 2 of its HINT_OFI_LARGE_BUFFERS posted. With all 8 posted, each
   256 KiB message landed in a buffer last touched 8 messages earlier, out of the core's cache:
   the receive copy into it took 9.3 us here against 5.9 into a buffer used one message ago
   (6.1-6.7 with 2 in turn; a copy loop that imitates the provider's read from socket memory). Two,
   not one, so a second message of a burst finds a buffer before the pass that reposts the first. */
#define OFI_LARGE_POSTED 2

static void rx_release(struct ofi_op *m)
{
    struct rx_pool *pl = &P.pool[m->pool];
    m->next = pl->free;
    pl->free = m;
    pl->nfree++;
}

/* Post free buffers until each pool's target are posted. */
static void rx_refill(void)
{
    for (int i = 0; i < 2; i++) {
        struct rx_pool *pl = &P.pool[i];
        for (int want = pl->target - pl->posted; want > 0 && pl->free; want--) {
            struct ofi_op *m = pl->free;
            pl->free = m->next;
            pl->nfree--;
            repost(m);
        }
    }
}



/* ---- completing requests ---- */

static void finish_send(struct hint_request_s *r)
{
    r->status.bytes = r->bytes;
    rq_complete(r);
    P.pending--;
}

static void finish_recv(struct hint_request_s *r)
{
    r->status.bytes = r->total < r->bytes ? r->total : r->bytes;
    rq_complete(r);
    P.pending--;
}

/* ---- control messages out ---- */

static bool is_eager(const struct hint_request_s *r)
{
    size_t lim = ofi.eager_max[r->peer] < P.eager_max ? ofi.eager_max[r->peer] : P.eager_max;
    return !r->sync && r->bytes <= lim;
}

/* Above the eager size, within both ranks' large pools: one message into the receiver's large
   pool (is_eager first). */
static bool is_large(const struct hint_request_s *r)
{
    size_t lim = ofi.large_max[r->peer] < P.large_max ? ofi.large_max[r->peer] : P.large_max;
    return !r->sync && r->bytes <= lim;
}

/* Where r's n bytes travel from or to: the user's buffer, or a packed copy for a
   non-contiguous type (packed now when it is leaving). */
static char *transfer_buffer(struct hint_request_s *r, size_t n, bool leaving)
{
    if (r->contig)
        return r->buf;
    if ((r->tp_bounce = malloc(n)) == NULL)
        out_of_memory("a packed copy of a derived-type message", n);
    if (leaving)
        rq_pack(r, 0, r->tp_bounce, n);
    return r->tp_bounce;
}

/* A large eager message's payload: the user's buffer (a packed copy for a derived type),
   registered when the provider needs it; false when a registration failed (said). */
static bool large_payload(struct hint_request_s *r, struct ofi_op *op)
{
    char *buf = transfer_buffer(r, r->bytes, true);
    if (ofi_register(buf, r->bytes, FI_SEND, (struct fid_mr **)&r->tp_mr, &op->paydesc)) {
        free(r->tp_bounce);
        r->tp_bounce = NULL;
        ofi_cr.have[r->peer]++; /* the credit it spent: the message goes by rendezvous */
        ofi_cr.spent--;
        return false;
    }
    op->pay = buf;
    P.moving++;
    return true;
}

/* A large send's bytes registered for the receiver's reads (packed first for a derived type):
   true with v's address and key filled; false (nothing held) when it goes by RTS / CTS. */
static bool expose_for_read(struct hint_request_s *r, struct ofi_rdv *v)
{
    if (!ofi.rma || r->bytes == 0 || r->bytes < P.read_min || P.read_pinned + r->bytes > OFI_READ_PINNED_MAX)
        return false;
    char *buf = transfer_buffer(r, r->bytes, true);
    void *desc;
    uint64_t key;
    if (ofi_register_key(buf, r->bytes, FI_REMOTE_READ, (struct fid_mr **)&r->tp_mr, &desc, &key)) {
        free(r->tp_bounce); /* said by ofi_register_key; the message goes by RTS / CTS */
        r->tp_bounce = NULL;
        return false;
    }
    v->raddr = (ofi.mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf : 0;
    v->rkey = key;
    P.read_pinned += r->bytes;
    return true;
}

/* The registration and packed copy of an RTS_READ send, once its receiver has read it. */
static void unexpose(struct hint_request_s *r)
{
    if (r->tp_mr)
        fi_close(&((struct fid_mr *)r->tp_mr)->fid);
    r->tp_mr = NULL;
    free(r->tp_bounce);
    r->tp_bounce = NULL;
    P.read_pinned -= r->bytes;
}

/* Fill send buffer op with r's control message: its eager message or RTS (RTS_READ), or a
   receive's CTS (FIN). */
static void build_ctrl(struct ofi_op *op, struct hint_request_s *r)
{
    struct ofi_hdr *h = (struct ofi_hdr *)op->buf;
    struct ofi_rdv *v = (struct ofi_rdv *)(h + 1);
    *h = (struct ofi_hdr){.src = (uint32_t)rt.boot.rank, .credits = ofi_credit_piggyback(r->peer), .tag = r->tag,
                          .ctx = r->ctx, .bytes = r->bytes, .sig = r->sig};
    op->len = sizeof *h;
    if (r->kind == RQ_RECV) {
        h->kind = r->phase == PH_FIN ? OFI_FIN : OFI_CTS;
        h->bytes = r->off;
        *v = (struct ofi_rdv){.cookie = r->tp_cookie, .msgid = r->msgid, .rtag = r->tp_tag};
        op->len += sizeof *v;
    } else if (is_eager(r)) {
        h->kind = OFI_EAGER;
        if (r->bytes)
            rq_pack(r, 0, h + 1, r->bytes);
        op->len += r->bytes;
    } else if (is_large(r) && ofi_credit_spend(r->peer) && large_payload(r, op)) {
        h->kind = OFI_EAGER; /* header from the send buffer, payload from op->pay (post_ctrl) */
    } else {
        r->msgid = P.next_msgid++;
        *v = (struct ofi_rdv){.cookie = (uint64_t)(uintptr_t)r, .msgid = r->msgid};
        h->kind = expose_for_read(r, v) ? OFI_RTS_READ : OFI_RTS;
        op->len += sizeof *v;
    }
    op->r = r;
    op->addr = ofi.addr[r->peer];
}

/* The control message of op left: what its request waits for next. */
static void ctrl_issued(struct ofi_op *op)
{
    struct hint_request_s *r = op->r;
    uint8_t kind = ((struct ofi_hdr *)op->buf)->kind;
    if (kind == OFI_EAGER) {
        r->phase = PH_EAGER_OUT; /* op keeps r: it completes with the send completion */
        return;
    }
    if (kind == OFI_CTS && r->off == 0) {
        r->phase = PH_CTS0_OUT;
        return;
    }
    op->r = NULL; /* the request moves on with the CTS, the data or the FIN, not with this completion */
    if (kind == OFI_FIN) {
        finish_recv(r); /* the bytes are in; the FIN (in the send buffer) only frees the sender's */
        return;
    }
    r->phase = kind == OFI_RTS ? PH_WAIT_CTS : kind == OFI_RTS_READ ? PH_WAIT_FIN : PH_DATA;
}

static void tx_done(struct ofi_op *op);

/* fi_tsend a built control message, or fi_tinject it when it fits the provider's inject size:
   libfabric then copies it at once and reports no completion, so the send buffer (and an eager
   send) is done here, and neither rank's CQ carries the send (with tcp;ofi_rxm that also spares
   the sender the write and read of the tcp CQ's signal fd). false: libfabric refused it for now
   (it is then stalled). */
static bool post_ctrl(struct ofi_op *op)
{
    int peer = op->r->peer;
    ((struct ofi_hdr *)op->buf)->seq = P.tx_seq[peer];
    bool inject = op->len <= P.inject_max && op->pay == NULL;
    int rc;
    if (op->pay) { /* a large eager message: header and payload in one message, to the large pool */
        struct iovec iov[2] = {{op->buf, op->len}, {op->pay, op->r->bytes}};
        void *desc[2] = {P.txdesc, op->paydesc};
        rc = (int)fi_tsendv(ofi.ep, iov, desc, 2, op->addr, OFI_TAG_LARGE, op);
    } else {
        rc = inject ? (int)fi_tinject(ofi.ep, op->buf, op->len, op->addr, OFI_TAG_CTRL)
                    : (int)fi_tsend(ofi.ep, op->buf, op->len, P.txdesc, op->addr, OFI_TAG_CTRL, op);
    }
    if (rc == -FI_EAGAIN) {
        P.stalled = op;
        return false;
    }
    if (rc)
        ofi_fatal(inject ? "fi_tinject (control)" : "fi_tsend (control)", rc);
    P.tx_seq[peer]++;
    ctrl_issued(op);
    if (inject)
        tx_done(op);
    return true;
}

/* r's control message into a send buffer and out; false when no send buffer is free. */
static bool issue_ctrl(struct hint_request_s *r)
{
    struct ofi_op *op = P.tx_free;
    if (op == NULL)
        return false;
    P.tx_free = op->next;
    build_ctrl(op, r);
    post_ctrl(op); /* refused for now: stalled, r is bound to op and leaves the backlog all the same */
    return true;
}

static void queue_ctrl(struct hint_request_s *r)
{
    if (P.stalled == NULL && P.backlog.head == NULL && issue_ctrl(r))
        return;
    rq_list_push(&P.backlog, r);
}

/* A blocking send of a small contiguous message (runtime/transport.h, send_now): header and
   payload into a free send buffer and out by fi_tinject, which copies them, with no request to
   allocate, complete, wait for and release (0.55 of the 1.1 thousand instructions of an 8-byte
   hint_send). Only when nothing waits to go out before it and the whole message fits the
   provider's inject size; the general path takes everything else (and a refusal for now). */
bool ofi_send_now(int world, const void *buf, size_t bytes, int tag, uint32_t ctx, int sig)
{
    struct ofi_op *op = P.tx_free;
    size_t len = sizeof(struct ofi_hdr) + bytes;
    if (op == NULL || P.stalled || P.backlog.head || len > P.inject_max || bytes > P.eager_max ||
        bytes > ofi.eager_max[world])
        return false;
    struct ofi_hdr *h = (struct ofi_hdr *)op->buf;
    *h = (struct ofi_hdr){.src = (uint32_t)rt.boot.rank, .kind = OFI_EAGER, .credits = ofi_cr.owed[world], .tag = tag,
                          .ctx = ctx, .bytes = bytes, .seq = P.tx_seq[world], .sig = sig};
    if (bytes)
        memcpy(h + 1, buf, bytes);
    int rc = (int)fi_tinject(ofi.ep, op->buf, len, ofi.addr[world], OFI_TAG_CTRL);
    if (rc == -FI_EAGAIN)
        return false;
    if (rc)
        ofi_fatal("fi_tinject (control)", rc);
    ofi_cr.owed[world] = 0; /* returned with it */
    P.tx_seq[world]++;
    sent++;
    sent_bytes += bytes; /* HINT_P2P_STATS counts these as ofi_isend's */
    return true;
}

/* A header-only control message outside the sequence (credit.c's credit returns): by
   fi_tinject, else from a free send buffer; false when it cannot go now. */
bool ofi_send_alone(int world, const struct ofi_hdr *h)
{
    int rc;
    if (sizeof *h <= P.inject_max) {
        rc = (int)fi_tinject(ofi.ep, h, sizeof *h, ofi.addr[world], OFI_TAG_CTRL);
    } else {
        struct ofi_op *op = P.tx_free;
        if (op == NULL)
            return false;
        memcpy(op->buf, h, sizeof *h);
        op->len = sizeof *h;
        op->r = NULL;
        op->addr = ofi.addr[world];
        if ((rc = (int)fi_tsend(ofi.ep, op->buf, op->len, P.txdesc, op->addr, OFI_TAG_CTRL, op)) == 0)
            P.tx_free = op->next; /* tx_done gives it back */
    }
    if (rc && rc != -FI_EAGAIN)
        ofi_fatal("fi_tinject / fi_tsend (credits)", rc);
    return rc == 0;
}

void ofi_isend(struct hint_request_s *r)
{
    P.pending++;
    sent++;
    sent_bytes += r->bytes;
    r->phase = PH_FIRST;
    queue_ctrl(r);
}

/* ---- rendezvous data ---- */

/* Post the n bytes at buf as operations of at most ofi.chunk bytes: a data chunk k carries tag
   | k; a read's chunk k reads from raddr + k * ofi.chunk under the remote key `tag`. */
static void post_chunks(struct hint_request_s *r, uint8_t type, char *buf, size_t n, void *desc,
                        uint64_t tag, uint64_t raddr)
{
    size_t nchunks = (n + ofi.chunk - 1) / ofi.chunk;
    r->tp_inflight = (uint32_t)nchunks;
    P.moving += (int)nchunks;
    for (size_t k = 0; k < nchunks; k++) {
        struct ofi_op *op = op_get();
        op->type = type;
        op->r = r;
        op->buf = buf + k * ofi.chunk;
        op->len = n - k * ofi.chunk < ofi.chunk ? n - k * ofi.chunk : ofi.chunk;
        op->desc = desc;
        op->addr = ofi.addr[r->peer];
        op->tag = type == OP_READ ? tag : tag | k;
        op->raddr = type == OP_READ ? raddr + k * ofi.chunk : 0;
        submit_or_queue(op);
    }
}

/* Post r's n data bytes, chunk k with tag tp_tag | k. */
static void post_data(struct hint_request_s *r, uint8_t type, size_t n)
{
    char *buf = transfer_buffer(r, n, type == OP_DATA_TX);
    void *desc;
    if (ofi_register(buf, n, type == OP_DATA_TX ? FI_SEND : FI_RECV, (struct fid_mr **)&r->tp_mr, &desc))
        ofi_fatal("fi_mr_reg (data)", -FI_EINVAL);
    post_chunks(r, type, buf, n, desc, r->tp_tag, 0);
}

/* Read r's n bytes from the sender's registered memory (v's address and key) into the user's
   buffer or a packed copy for a non-contiguous type. */
static void post_reads(struct hint_request_s *r, size_t n, const struct ofi_rdv *v)
{
    char *buf = transfer_buffer(r, n, false);
    void *desc;
    if (ofi_register(buf, n, FI_READ, (struct fid_mr **)&r->tp_mr, &desc))
        ofi_fatal("fi_mr_reg (read)", -FI_EINVAL);
    post_chunks(r, OP_READ, buf, n, desc, v->rkey, v->raddr);
}

static void data_done(struct ofi_op *op)
{
    struct hint_request_s *r = op->r;
    bool read = op->type == OP_READ;
    op_put(op);
    P.moving--;
    if (--r->tp_inflight > 0)
        return;
    if (r->tp_mr)
        fi_close(&((struct fid_mr *)r->tp_mr)->fid);
    r->tp_mr = NULL;
    if (read) { /* the bytes are in: unpack, then tell the sender (the receive completes with that) */
        if (r->tp_bounce)
            rq_unpack(r, 0, r->tp_bounce, r->off);
        free(r->tp_bounce);
        r->tp_bounce = NULL;
        r->phase = PH_FIN;
        queue_ctrl(r);
        return;
    }
    if (r->kind == RQ_RECV) {
        if (r->tp_bounce)
            rq_unpack(r, 0, r->tp_bounce, r->off);
        free(r->tp_bounce);
        r->tp_bounce = NULL;
        finish_recv(r);
    } else {
        free(r->tp_bounce);
        r->tp_bounce = NULL;
        finish_send(r);
    }
}

/* The receiver of r's RTS is ready for h->bytes of it. */
static void cts_arrived(const struct ofi_hdr *h)
{
    const struct ofi_rdv *v = (const struct ofi_rdv *)(h + 1);
    struct hint_request_s *r = (struct hint_request_s *)(uintptr_t)v->cookie;
    if (r == NULL || r->magic != RQ_MAGIC || r->kind != RQ_SEND || r->phase != PH_WAIT_CTS || r->msgid != v->msgid) {
        RT_ERR("ofi", "clear-to-send from rank %u for no waiting send (id %llu) dropped", h->src,
               (unsigned long long)v->msgid);
        return;
    }
    r->tp_tag = v->rtag;
    if (h->bytes == 0) {
        finish_send(r);
        return;
    }
    r->phase = PH_DATA;
    post_data(r, OP_DATA_TX, h->bytes);
}

/* The receiver of r's RTS_READ has read what it takes: the registration goes, the send completes. */
static void fin_arrived(const struct ofi_hdr *h)
{
    const struct ofi_rdv *v = (const struct ofi_rdv *)(h + 1);
    struct hint_request_s *r = (struct hint_request_s *)(uintptr_t)v->cookie;
    if (r == NULL || r->magic != RQ_MAGIC || r->kind != RQ_SEND || r->phase != PH_WAIT_FIN || r->msgid != v->msgid) {
        RT_ERR("ofi", "read-done message from rank %u for no waiting send (id %llu) dropped", h->src,
               (unsigned long long)v->msgid);
        return;
    }
    unexpose(r);
    finish_send(r);
}

/* ---- arrivals ---- */

/* Matching paired receive r with the eager message or RTS in m. */
static void deliver_first(struct hint_request_s *r, const struct ofi_op *m)
{
    const struct ofi_hdr *h = (const struct ofi_hdr *)m->buf;
    P.pending++;
    r->status.source = (int)h->src;
    r->status.tag = h->tag;
    r->total = h->bytes;
    if (r->total > r->bytes)
        r->status.error = HINT_ERR_TRUNCATE;
    else if (!dt_kinds_match(h->sig, r->sig))
        r->status.error = HINT_ERR_TYPE; /* delivered as bytes all the same */
    size_t n = r->total < r->bytes ? r->total : r->bytes;
    if (h->kind == OFI_EAGER) {
        if (n)
            rq_unpack(r, 0, h + 1, n);
        finish_recv(r);
        return;
    }
    const struct ofi_rdv *v = (const struct ofi_rdv *)(h + 1);
    r->peer = (int)h->src;
    r->tp_cookie = v->cookie;
    r->msgid = v->msgid;
    r->off = n; /* the bytes this receive takes: the CTS / FIN tells the sender */
    r->tp_tag = 0;
    if (h->kind == OFI_RTS_READ) {
        if (n) {
            r->phase = PH_DATA;
            post_reads(r, n, v);
        } else {
            r->phase = PH_FIN;
            queue_ctrl(r);
        }
        return;
    }
    if (n) {
        r->tp_tag = OFI_TAG_DATA | (P.next_rtag++ & OFI_TAG_ID_MASK) << OFI_CHUNK_BITS;
        post_data(r, OP_DATA_RX, n); /* before the CTS: the data can only come after it */
    }
    r->phase = PH_CTS;
    queue_ctrl(r);
}

/* A message the runtime held as unexpected, or one just matched, is done with its buffer. A
   pool buffer goes back to libfabric at the start of the next progress pass (rx_refill), not now:
   a matched message is usually answered at once (a ping-pong's reply, a collective's next step),
   and the fi_trecv then waits until the answer is out. */
static void release_msg(struct ofi_op *m)
{
    if (m->pool)
        ofi_credit_taken((int)m->src); /* a large eager message: its sender's credit comes back */
    if (m->type == OP_RX) {
        rx_release(m);
        return;
    }
    if (m->pool) {
        ofi_credit_copied(-(long)m->len);
    } else {
        P.unexp_bytes -= m->len;
        P.ncopies--;
    }
    free(m->buf);
    op_put(m);
}

size_t ofi_msg_bytes(const void *msg) { return ((const struct ofi_hdr *)((const struct ofi_op *)msg)->buf)->bytes; }

void ofi_deliver(struct hint_request_s *r, int src, void *msg)
{
    (void)src;
    deliver_first(r, msg);
    release_msg(msg);
}

/* The pool runs low: an arriving message moves to malloc'd memory so its buffer goes back,
   within the bound; NULL (it keeps its buffer) beyond it. A large eager one always moves: its
   sender's credits bound those (credit.c), not HINT_OFI_UNEXPECTED_MAX. */
static struct ofi_op *copy_out(struct ofi_op *m)
{
    if (m->pool == 0 && (P.ncopies >= P.max_copies || P.unexp_bytes + m->len > P.unexp_max))
        return NULL;
    struct ofi_op *c = op_get();
    if ((c->buf = malloc(m->len)) == NULL)
        out_of_memory("an unexpected message", m->len);
    memcpy(c->buf, m->buf, m->len);
    c->type = OP_COPY;
    c->pool = m->pool;
    c->len = m->len;
    c->src = m->src;
    c->seq = m->seq;
    if (m->pool) {
        ofi_credit_copied((long)c->len);
    } else {
        P.unexp_bytes += c->len;
        P.ncopies++;
    }
    rx_release(m);
    return c;
}

/* Every control buffer holds an unexpected message and the copies are at their bound. (The large
   pool never gets here: copy_out always moves its messages, within their senders' credits.) */
static void unexpected_overflow(const struct rx_pool *pl)
{
    RT_ERR("ofi", "%d unexpected messages from other nodes hold all %d receive buffers and HINT_OFI_UNEXPECTED_MAX "
           "(%zu bytes in %d copies): post receives sooner, or raise HINT_OFI_UNEXPECTED_MAX or "
           "HINT_OFI_RX_BUFFERS; ending the job (a wait for any other message could never end)",
           pl->n + P.ncopies, pl->n, P.unexp_bytes, P.ncopies);
    boot_abort(HINT_ERR_NOMEM, "libfabric transport: too many unexpected messages");
}

/* The next control message in order from its sender. */
static void take(struct ofi_op *m)
{
    const struct ofi_hdr *h = (const struct ofi_hdr *)m->buf;
    if (h->kind == OFI_CTS || h->kind == OFI_FIN) {
        if (h->kind == OFI_CTS)
            cts_arrived(h);
        else
            fin_arrived(h);
        release_msg(m);
        return;
    }
    struct rx_pool *pl = &P.pool[m->pool];
    if (m->type == OP_RX && pl->posted + pl->nfree < (pl->n + 3) / 4) {
        struct ofi_op *c = copy_out(m);
        if (c)
            m = c, h = (const struct ofi_hdr *)m->buf;
    }
    struct hint_request_s *r = rt_match_arrival(&ofi_transport, (int)h->src, h->tag, h->ctx, m);
    if (r) {
        deliver_first(r, m);
        release_msg(m);
    } else if (m->type == OP_RX && m->pool == 0 && pl->posted == 0 && pl->free == NULL && P.retry_head == NULL) {
        unexpected_overflow(pl);
    }
}

/* Keep an early message in its sender's list, ordered by sequence number. */
static void hold(struct ofi_op *m)
{
    struct ofi_op **p = &P.held[m->src];
    while (*p && (int32_t)((*p)->seq - m->seq) < 0)
        p = &(*p)->next;
    m->next = *p;
    *p = m;
}

static void arrived(struct ofi_op *m, size_t len)
{
    const struct ofi_hdr *h = (const struct ofi_hdr *)m->buf;
    P.pool[m->pool].posted--;
    if (len < sizeof *h || h->src >= (uint32_t)rt.boot.size || h->kind < OFI_EAGER || h->kind > OFI_CREDIT) {
        RT_ERR("ofi", "malformed control message (%zu bytes) dropped", len);
        repost(m);
        return;
    }
    ofi_cr.have[h->src] += h->credits; /* in any order: not held with the message */
    if (h->kind == OFI_CREDIT) {
        rx_release(m);
        return;
    }
    m->len = len;
    m->src = h->src;
    m->seq = h->seq;
    if (m->seq != P.rx_seq[m->src]) {
        hold(m);
        return;
    }
    uint32_t src = m->src;
    take(m);
    P.rx_seq[src]++;
    while (P.held[src] && P.held[src]->seq == P.rx_seq[src]) {
        struct ofi_op *next = P.held[src];
        P.held[src] = next->next;
        take(next);
        P.rx_seq[src]++;
    }
}

static void tx_done(struct ofi_op *op)
{
    struct hint_request_s *r = op->r;
    if (op->pay) { /* a large eager message's payload is out */
        if (r->tp_mr)
            fi_close(&((struct fid_mr *)r->tp_mr)->fid);
        r->tp_mr = NULL;
        free(r->tp_bounce);
        r->tp_bounce = NULL;
        op->pay = NULL;
        op->paydesc = NULL;
        P.moving--;
    }
    if (r && r->phase == PH_EAGER_OUT)
        finish_send(r);
    else if (r && r->phase == PH_CTS0_OUT)
        finish_recv(r);
    op->r = NULL;
    op->next = P.tx_free;
    P.tx_free = op;
}

static void completed(struct ofi_op *op, size_t len)
{
    switch (op->type) {
    case OP_RX: arrived(op, len); break;
    case OP_TX: tx_done(op); break;
    default: data_done(op); break;
    }
}

static const char *op_name(const struct ofi_op *op)
{
    static const char *const names[] = {"?", "pool receive", "control send", "copy", "data send", "data receive",
                                        "data read"};
    return names[op->type <= OP_READ ? op->type : 0];
}

/* A failed operation: said, and its request completes with HINT_ERR_TRANSPORT. */
static void failed(void)
{
    struct fi_cq_err_entry e = {0};
    if (fi_cq_readerr(ofi.cq, &e, 0) != 1)
        return;
    struct ofi_op *op = e.op_context;
    if (e.err == FI_ECANCELED || op == NULL)
        return;
    char detail[128] = "";
    fi_cq_strerror(ofi.cq, e.prov_errno, e.err_data, detail, sizeof detail);
    RT_ERR("ofi", "%s of %zu bytes failed: %s (%s)", op_name(op), op->len, fi_strerror(e.err), detail);
    if (op->type == OP_RX) {
        P.pool[op->pool].posted--;
        repost(op);
        return;
    }
    if (op->r)
        op->r->status.error = HINT_ERR_TRANSPORT;
    /* the credits this header carried back were taken from owed when it was built: owe them
       again, or that peer's window would shrink for good */
    if (op->type == OP_TX && op->r)
        ofi_credit_owe_again(op->r->peer, ((const struct ofi_hdr *)op->buf)->credits);
    completed(op, 0);
}

/* Hand over what waited: the stalled control message, the backlog, then refused data ops. */
static void drain_queues(void)
{
    if (P.stalled) {
        struct ofi_op *op = P.stalled;
        P.stalled = NULL;
        if (!post_ctrl(op))
            goto data;
    }
    while (P.stalled == NULL && P.backlog.head) {
        struct hint_request_s *r = rq_list_pop(&P.backlog);
        if (!issue_ctrl(r)) {
            rq_list_push_front(&P.backlog, r);
            break;
        }
    }
data:
    while (P.retry_head) {
        struct ofi_op *op = P.retry_head;
        int rc = submit(op);
        if (rc == -FI_EAGAIN)
            break;
        if (rc)
            ofi_fatal("fi_trecv / fi_tsend (retried)", rc);
        P.retry_head = op->next;
        if (P.retry_head == NULL)
            P.retry_tail = NULL;
    }
}

/* Entries taken per fi_cq_read. A read that returns fewer emptied the CQ, and the pass ends
   there: another read would find it empty and make the provider poll its sockets once more
   (net: an epoll_wait, 0.5 us here), between an arrival and whatever the rank does with it,
   e.g. the reply of a ping-pong. The next pass reads again. */
#define OFI_CQ_BATCH 16

/* Reading an idle CQ costs a system call or two with tcp;ofi_rxm (2.7 us here, against 10 ns for
   the shm pass), so with nothing of its own in flight and no receive posted the transport reads
   it only every OFI_IDLE_PASSES-th pass: an unexpected message or a connection request then
   waits a few passes more, and shm's waits stay cheap. */
#define OFI_IDLE_PASSES 32

void ofi_progress(void)
{
    static unsigned idle;
    if (ofi_cr.ndue)
        ofi_credit_flush();
    if ((P.pool[0].posted < P.pool[0].target && P.pool[0].free) ||
        (P.pool[1].posted < P.pool[1].target && P.pool[1].free))
        rx_refill();
    if (P.pending == 0 && rt_match_posted() == 0 && ++idle % OFI_IDLE_PASSES != 0)
        return;
    struct fi_cq_tagged_entry e[OFI_CQ_BATCH];
    ssize_t n;
    while ((n = fi_cq_read(ofi.cq, e, OFI_CQ_BATCH)) != -FI_EAGAIN) {
        if (n == -FI_EAVAIL) {
            failed();
            continue;
        }
        if (n < 0)
            ofi_fatal("fi_cq_read", (int)n);
        completions += (unsigned long)n;
        for (ssize_t i = 0; i < n; i++)
            completed(e[i].op_context, e[i].len);
        if (n < OFI_CQ_BATCH)
            break; /* the CQ is empty: reading it again asks the provider to look at its sockets */
        if (P.pool[0].posted < P.pool[0].target / 2 || P.pool[1].posted < P.pool[1].target / 2)
            rx_refill(); /* a burst: keep the provider supplied within the pass */
    }
    if (P.stalled || P.backlog.head || P.retry_head)
        drain_queues();
}

/* ---- set-up ---- */

static int make_pool(struct ofi_op **ops, char **mem, struct fid_mr **mr, void **desc, int n, size_t slot,
                     uint8_t type, uint8_t pool, uint64_t access)
{
    if (n == 0)
        return HINT_SUCCESS;
    *ops = calloc((size_t)n, sizeof **ops);
    *mem = aligned_alloc(64, (size_t)n * slot);
    if (*ops == NULL || *mem == NULL)
        return HINT_ERR_NOMEM;
    int st = ofi_register(*mem, (size_t)n * slot, access, mr, desc);
    for (int i = 0; i < n && st == HINT_SUCCESS; i++) {
        (*ops)[i].type = type;
        (*ops)[i].pool = pool;
        (*ops)[i].buf = *mem + (size_t)i * slot;
    }
    return st;
}

/* The receive pools: HINT_OFI_RX_BUFFERS control buffers (OFI_RX_POSTED of them posted at a
   time) and HINT_OFI_LARGE_BUFFERS large ones (OFI_LARGE_POSTED of them at a time). */
static int make_rx_pools(void)
{
    int st = HINT_SUCCESS;
    for (int i = 0; i < 2; i++) {
        struct rx_pool *pl = &P.pool[i];
        CHECK_GOTO(make_pool(&pl->ops, &pl->mem, &pl->mr, &pl->desc, pl->n, pl->slot, OP_RX, (uint8_t)i, FI_RECV), out);
        int posted = i == 0 ? OFI_RX_POSTED : OFI_LARGE_POSTED;
        pl->target = pl->n > posted ? posted : pl->n;
        for (int k = pl->n - 1; k >= 0; k--)
            rx_release(&pl->ops[k]);
    }
    rx_refill();
out:
    return st;
}

int ofi_p2p_init(void)
{
    int st = HINT_SUCCESS;
    int n = rt.boot.size;
    memset(&P, 0, sizeof P);
    P.eager_max = rt_cfg_size("HINT_OFI_EAGER_MAX");
    P.unexp_max = rt_cfg_size("HINT_OFI_UNEXPECTED_MAX");
    P.pool[0].n = (int)rt_cfg_long("HINT_OFI_RX_BUFFERS");
    P.large_max = ofi_large_max();
    P.pool[1].n = P.large_max ? (int)rt_cfg_long("HINT_OFI_LARGE_BUFFERS") : 0;
    CHECK_GOTO(ofi_credit_init(P.large_max), out);
    P.read_min = rt_cfg_size("HINT_OFI_RMA_MIN");
    P.inject_max = rt_cfg_long("HINT_OFI_INJECT") ? ofi.info->tx_attr->inject_size : 0;
    P.slot = (sizeof(struct ofi_hdr) + (P.eager_max > sizeof(struct ofi_rdv) ? P.eager_max : sizeof(struct ofi_rdv)) +
              63) / 64 * 64;
    P.pool[0].slot = P.slot;
    P.pool[0].tag = OFI_TAG_CTRL;
    P.pool[1].slot = (sizeof(struct ofi_hdr) + P.large_max + 63) / 64 * 64;
    P.pool[1].tag = OFI_TAG_LARGE;
    P.tx_seq = calloc((size_t)n, sizeof *P.tx_seq);
    P.rx_seq = calloc((size_t)n, sizeof *P.rx_seq);
    P.held = calloc((size_t)n, sizeof *P.held);
    if (P.tx_seq == NULL || P.rx_seq == NULL || P.held == NULL)
        return HINT_ERR_NOMEM;
    /* Every message that can be unexpected at once: one per pool buffer and per copy (large
       ones: one per credit this rank grants). */
    size_t copies = P.unexp_max / 4096;
    P.max_copies = copies < 64 ? 64 : copies > 65536 ? 65536 : (int)copies;
    CHECK_GOTO(rt_match_reserve((size_t)P.pool[0].n + (size_t)P.pool[1].n + (size_t)P.max_copies +
                                ofi_credit_held_max()), out);
    CHECK_GOTO(make_pool(&P.tx, &P.txmem, &P.txmr, &P.txdesc, OFI_NTX, P.slot, OP_TX, 0, FI_SEND), out);
    for (int i = OFI_NTX - 1; i >= 0; i--) {
        P.tx[i].next = P.tx_free;
        P.tx_free = &P.tx[i];
    }
    CHECK_GOTO(make_rx_pools(), out);
out:
    return st;
}

/* After the endpoint closed: nothing refers to these buffers any more. */
void ofi_p2p_fini(void)
{
    for (int i = 0; i < 2; i++) {
        if (P.pool[i].mr)
            fi_close(&P.pool[i].mr->fid);
        free(P.pool[i].ops);
        free(P.pool[i].mem);
    }
    if (P.txmr)
        fi_close(&P.txmr->fid);
    while (P.op_all) {
        struct ofi_op *op = P.op_all;
        P.op_all = op->all;
        if (op->type == OP_COPY)
            free(op->buf);
        free(op);
    }
    free(P.tx);
    free(P.txmem);
    free(P.tx_seq);
    free(P.rx_seq);
    free(P.held);
    memset(&P, 0, sizeof P);
    ofi_credit_fini();
}
