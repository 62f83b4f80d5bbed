/*
 * launcher/store.c — the bootstrap store server (see store.h and runtime/boot_proto.h).
 *
 * Each connection is a small state machine: read a 12-byte header, check it (magic, version,
 * op, length within the op's limit) before allocating the body, read the body, handle the
 * request, queue exactly one reply. While a connection waits for a deferred reply (GET of a
 * missing key, FENCE) or has unsent output, it is not read: replies stay in request order and a
 * client that never reads cannot make hintrun buffer without bound.
 */
#include "launcher/store.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot_proto.h"

enum store_wait { STORE_WAIT_NONE, STORE_WAIT_GET, STORE_WAIT_FENCE };

#define STORE_LOG_REJECTS 50

struct store_conn {
    int fd;
    int rank;                         /* -1 until a HELLO is accepted */
    int agent;                        /* 1 + node of an accepted AGENT, else 0 */
    pid_t pid;                        /* from SO_PEERCRED, for messages */
    unsigned char hdr_raw[BOOT_HDR_LEN];
    size_t hdr_got;
    struct boot_hdr hdr;              /* decoded once hdr_got == BOOT_HDR_LEN */
    unsigned char *body;
    size_t body_got;
    struct boot_buf tx;               /* replies not yet written */
    size_t tx_off;
    enum store_wait wait;
    unsigned char wait_key[BOOT_KEY_MAX];
    size_t wait_klen;
    int closing;                      /* close once tx is written */
    int dead;                         /* closed; freed at the end of the round */
};

struct store_kv {
    struct store_kv *next;
    size_t klen, vlen;
    unsigned char *key, *val;
};

struct store_rank {
    int exited;       /* its process is gone */
    int joined;       /* a HELLO of this rank was accepted: it called hint_init (boot_init) */
    int said_bye;     /* it sent BYE: hint_finalize (boot_fini) ran */
    uint32_t fences;  /* fences this rank has entered */
    int waiting;      /* scratch of store_check_stalled: a request of this rank waits */
};

struct store {
    int listen_fd;
    int tcp_fd;            /* -1 unless store_listen_tcp */
    int nranks;
    int nagents;
    int *agent_joined;     /* [nagents] */
    struct store_exit *exits; /* reports of store_take_exit, oldest first */
    size_t nexits, exits_taken, max_exits;
    char token[BOOT_TOKEN_LEN];
    struct store_rank *ranks;
    struct store_conn **conns;
    size_t nconns, max_conns;
    struct store_kv **buckets;
    size_t nbuckets, nkeys;
    uint32_t fence_done;   /* fences completed by every rank */
    int fence_arrived;     /* ranks inside fence fence_done + 1 */
    int abort_pending, abort_taken;
    int accept_paused;      /* accept ran out of descriptors; retried when a connection closes */
    unsigned long nrejects; /* protocol violations so far (only the first ones are logged) */
    struct store_abort abort;
};

static void store_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void store_log(const char *fmt, ...)
{
    char msg[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hintrun: store: %s\n", msg);
}

/* ---------------------------------------------------------------- key-value table */

static size_t store_hash(const unsigned char *k, size_t n)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 1099511628211ull;
    return (size_t)h;
}

static struct store_kv *store_kv_find(struct store *s, const unsigned char *k, size_t n)
{
    struct store_kv *kv = s->buckets[store_hash(k, n) & (s->nbuckets - 1)];
    for (; kv; kv = kv->next)
        if (kv->klen == n && memcmp(kv->key, k, n) == 0)
            return kv;
    return NULL;
}

/* Doubles the bucket array when the table gets crowded; on failure keeps the old one. */
static void store_kv_grow(struct store *s)
{
    if (s->nkeys < 2 * s->nbuckets)
        return;
    size_t nb = 2 * s->nbuckets;
    struct store_kv **b = calloc(nb, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < s->nbuckets; i++) {
        while (s->buckets[i]) {
            struct store_kv *kv = s->buckets[i];
            s->buckets[i] = kv->next;
            size_t j = store_hash(kv->key, kv->klen) & (nb - 1);
            kv->next = b[j];
            b[j] = kv;
        }
    }
    free(s->buckets);
    s->buckets = b;
    s->nbuckets = nb;
}

/* Stores a copy of the value; returns 0 or -1 when out of memory (the table is unchanged). */
static int store_kv_put(struct store *s, const unsigned char *k, size_t kn,
                        const unsigned char *v, size_t vn)
{
    unsigned char *val = malloc(vn ? vn : 1);
    if (!val)
        return -1;
    memcpy(val, v, vn);
    struct store_kv *kv = store_kv_find(s, k, kn);
    if (!kv) {
        kv = calloc(1, sizeof *kv);
        unsigned char *key = malloc(kn);
        if (!kv || !key) {
            free(kv);
            free(key);
            free(val);
            return -1;
        }
        memcpy(key, k, kn);
        kv->key = key;
        kv->klen = kn;
        size_t j = store_hash(k, kn) & (s->nbuckets - 1);
        kv->next = s->buckets[j];
        s->buckets[j] = kv;
        s->nkeys++;
        store_kv_grow(s);
    }
    free(kv->val);
    kv->val = val;
    kv->vlen = vn;
    return 0;
}

static void store_kv_free_all(struct store *s)
{
    for (size_t i = 0; s->buckets && i < s->nbuckets; i++) {
        while (s->buckets[i]) {
            struct store_kv *kv = s->buckets[i];
            s->buckets[i] = kv->next;
            free(kv->key);
            free(kv->val);
            free(kv);
        }
    }
    free(s->buckets);
}

/* ---------------------------------------------------------------- replies */

/* Writes as much queued output as the socket takes; marks the connection dead on error. */
static void store_flush(struct store_conn *c)
{
    if (c->tx.failed) {
        /* a reply could not be built (out of memory): hanging up is the only honest answer,
           and the client turns the EOF into HINT_ERR_BOOTSTRAP */
        store_log("out of memory for a reply; closing the connection of rank %d", c->rank);
        c->dead = 1;
        return;
    }
    while (!c->dead && c->tx_off < c->tx.len) {
        ssize_t w = send(c->fd, c->tx.data + c->tx_off, c->tx.len - c->tx_off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (w <= 0) {
            c->dead = 1; /* the peer is gone; nothing to tell it */
            return;
        }
        c->tx_off += (size_t)w;
    }
    if (c->tx_off == c->tx.len) {
        c->tx.len = c->tx_off = 0;
        /* give back the memory of a large VALUE once it is sent */
        if (c->tx.cap > 65536)
            boot_buf_free(&c->tx);
    }
}

static void store_reply_ok(struct store_conn *c)
{
    size_t start = c->tx.len;
    boot_frame_begin(&c->tx, BOOT_OP_OK);
    boot_frame_end(&c->tx, start);
}

static void store_reply_value(struct store_conn *c, const struct store_kv *kv)
{
    size_t start = c->tx.len;
    boot_frame_begin(&c->tx, BOOT_OP_VALUE);
    boot_buf_u32(&c->tx, (uint32_t)kv->vlen);
    boot_buf_add(&c->tx, kv->val, kv->vlen);
    boot_frame_end(&c->tx, start);
}

/* Queues an ERROR reply; with close_after the connection is closed once it is written. */
static void store_reply_error(struct store_conn *c, int status, int close_after, const char *msg)
{
    size_t start = c->tx.len, mlen = strnlen(msg, BOOT_MSG_MAX);
    boot_frame_begin(&c->tx, BOOT_OP_ERROR);
    boot_buf_u32(&c->tx, (uint32_t)status);
    boot_buf_u16(&c->tx, (uint16_t)mlen);
    boot_buf_add(&c->tx, msg, mlen);
    boot_frame_end(&c->tx, start);
    if (close_after)
        c->closing = 1;
}

/* A client broke the protocol: tell it why, log it, and close its connection. The log stops
   after STORE_LOG_REJECTS lines so a misbehaving client cannot flood hintrun's stderr. */
static void store_reject(struct store *s, struct store_conn *c, const char *why)
{
    store_reply_error(c, HINT_ERR_BOOTSTRAP, 1, why);
    if (++s->nrejects > STORE_LOG_REJECTS)
        return;
    if (s->nrejects == STORE_LOG_REJECTS)
        store_log("(further refused requests are not logged)");
    else if (c->rank >= 0)
        store_log("closing the connection of rank %d (pid %d): %s", c->rank, (int)c->pid, why);
    else
        store_log("refusing a connection from pid %d: %s", (int)c->pid, why);
}

/* ---------------------------------------------------------------- fence and waiting */

static void store_fence_complete(struct store *s)
{
    s->fence_done++;
    s->fence_arrived = 0;
    for (size_t i = 0; i < s->nconns; i++) {
        struct store_conn *c = s->conns[i];
        if (!c->dead && c->wait == STORE_WAIT_FENCE) {
            c->wait = STORE_WAIT_NONE;
            store_reply_ok(c);
            store_flush(c);
        }
    }
}

/* Fails every request waiting of the given kind (GET or FENCE) with msg. */
static void store_fail_waiting(struct store *s, enum store_wait kind, const char *msg)
{
    for (size_t i = 0; i < s->nconns; i++) {
        struct store_conn *c = s->conns[i];
        if (!c->dead && c->wait == kind) {
            c->wait = STORE_WAIT_NONE;
            store_reply_error(c, HINT_ERR_BOOTSTRAP, 0, msg);
            store_flush(c);
        }
    }
}

/* A fence waits for a rank that has exited: it can never complete. */
static void store_check_fence_orphaned(struct store *s)
{
    if (s->fence_arrived == 0)
        return;
    for (int r = 0; r < s->nranks; r++) {
        if (s->ranks[r].exited && s->ranks[r].fences <= s->fence_done) {
            char msg[160];
            snprintf(msg, sizeof msg, "fence %u can never complete: rank %d has exited without "
                     "entering it", s->fence_done + 1, r);
            store_fail_waiting(s, STORE_WAIT_FENCE, msg);
            return;
        }
    }
}

/* Every rank has exited or waits inside the store and some GET waits: nobody is left to put
   the keys, so fail the GETs instead of letting the job hang. O(ranks + connections). */
static void store_check_stalled(struct store *s)
{
    int any_get = 0;
    for (int r = 0; r < s->nranks; r++)
        s->ranks[r].waiting = 0;
    for (size_t i = 0; i < s->nconns; i++) {
        const struct store_conn *c = s->conns[i];
        if (c->dead || !c->wait)
            continue;
        any_get |= c->wait == STORE_WAIT_GET;
        s->ranks[c->rank].waiting = 1;
    }
    if (!any_get)
        return;
    for (int r = 0; r < s->nranks; r++)
        if (!s->ranks[r].exited && !s->ranks[r].waiting)
            return;
    store_fail_waiting(s, STORE_WAIT_GET, "get can never complete: every rank has exited or is "
                       "waiting in the store, so nobody can put the key");
}

/* ---------------------------------------------------------------- requests */

/* A live, accepted connection of rank exists. Dead ones do not count even before they are
   freed: a rank that reconnects in the same poll round as it hung up must be let in. */
static int store_rank_connected(const struct store *s, int rank)
{
    for (size_t i = 0; i < s->nconns; i++)
        if (s->conns[i]->rank == rank && !s->conns[i]->dead && !s->conns[i]->closing)
            return 1;
    return 0;
}

static void store_on_hello(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    uint32_t rank = boot_rd_u32(r);
    uint32_t pid = boot_rd_u32(r); /* the client's own word: SO_PEERCRED is the one to trust */
    const unsigned char *token = boot_rd_bytes(r, BOOT_TOKEN_LEN);
    if (r->bad || !token) {
        store_reject(s, c, "malformed HELLO");
        return;
    }
    if (!boot_ct_equal(token, s->token, BOOT_TOKEN_LEN)) {
        store_reject(s, c, "wrong job token");
        return;
    }
    if (rank >= (uint32_t)s->nranks) {
        store_reject(s, c, "HELLO with a rank outside the job");
        return;
    }
    if (store_rank_connected(s, (int)rank)) {
        store_reject(s, c, "this rank already has an open connection");
        return;
    }
    c->rank = (int)rank;
    if (c->pid == 0) /* TCP: no SO_PEERCRED; the rank's word is all there is, for messages */
        c->pid = (pid_t)pid;
    s->ranks[rank].joined = 1;
    store_reply_ok(c);
}

/* The agent of a host (launcher/agent.c): it reports its ranks' exits on this connection. */
static void store_on_agent(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    uint32_t node = boot_rd_u32(r);
    uint32_t pid = boot_rd_u32(r);
    const unsigned char *token = boot_rd_bytes(r, BOOT_TOKEN_LEN);
    if (r->bad || !token || r->off != r->len) {
        store_reject(s, c, "malformed AGENT");
        return;
    }
    if (!boot_ct_equal(token, s->token, BOOT_TOKEN_LEN)) {
        store_reject(s, c, "wrong job token");
        return;
    }
    if (node >= (uint32_t)s->nagents || s->agent_joined[node]) {
        store_reject(s, c, "AGENT with a host outside the job, or a second agent for a host");
        return;
    }
    c->agent = (int)node + 1;
    c->pid = (pid_t)pid;
    s->agent_joined[node] = 1;
    store_reply_ok(c);
}

static void store_on_exited(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    struct store_exit e = {.node = c->agent - 1};
    e.rank = (int)boot_rd_u32(r);
    e.pid = (pid_t)boot_rd_u32(r);
    e.how = (int)boot_rd_u32(r);
    e.status = (int)boot_rd_u32(r);
    if (r->bad || r->off != r->len || e.rank < 0 || e.rank >= s->nranks || e.how < BOOT_EXIT_STATUS ||
        e.how > BOOT_EXIT_CORE) {
        store_reject(s, c, "malformed EXITED");
        return;
    }
    if (s->nexits == s->max_exits) {
        store_reject(s, c, "more EXITED reports than the job has ranks");
        return;
    }
    s->exits[s->nexits++] = e;
    store_reply_ok(c);
}

static void store_on_put(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    uint16_t klen = boot_rd_u16(r);
    const unsigned char *key = boot_rd_bytes(r, klen);
    uint32_t vlen = boot_rd_u32(r);
    const unsigned char *val = boot_rd_bytes(r, vlen);
    if (r->bad || r->off != r->len || !boot_key_valid(key, klen) || vlen > BOOT_VAL_MAX) {
        store_reject(s, c, "malformed PUT (lengths do not match the frame, or bad key)");
        return;
    }
    if (store_kv_put(s, key, klen, val, vlen) != 0) {
        store_reply_error(c, HINT_ERR_NOMEM, 0, "hintrun is out of memory");
        return;
    }
    store_reply_ok(c);
    /* wake the GETs that waited for this key */
    struct store_kv *kv = store_kv_find(s, key, klen);
    for (size_t i = 0; i < s->nconns; i++) {
        struct store_conn *w = s->conns[i];
        if (!w->dead && w->wait == STORE_WAIT_GET && w->wait_klen == klen &&
            memcmp(w->wait_key, key, klen) == 0) {
            w->wait = STORE_WAIT_NONE;
            store_reply_value(w, kv);
            store_flush(w);
        }
    }
}

static void store_on_get(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    uint16_t klen = boot_rd_u16(r);
    const unsigned char *key = boot_rd_bytes(r, klen);
    if (r->bad || r->off != r->len || !boot_key_valid(key, klen)) {
        store_reject(s, c, "malformed GET");
        return;
    }
    struct store_kv *kv = store_kv_find(s, key, klen);
    if (kv) {
        store_reply_value(c, kv);
        return;
    }
    c->wait = STORE_WAIT_GET;
    memcpy(c->wait_key, key, klen);
    c->wait_klen = klen;
}

static void store_on_fence(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    uint32_t seq = boot_rd_u32(r);
    struct store_rank *rk = &s->ranks[c->rank];
    if (r->bad || r->off != r->len || seq != rk->fences + 1 || seq != s->fence_done + 1) {
        store_reject(s, c, "FENCE out of sequence");
        return;
    }
    rk->fences = seq;
    c->wait = STORE_WAIT_FENCE;
    if (++s->fence_arrived == s->nranks)
        store_fence_complete(s);
    else
        store_check_fence_orphaned(s);
}

static void store_on_abort(struct store *s, struct store_conn *c, struct boot_rd *r)
{
    int32_t code = (int32_t)boot_rd_u32(r);
    uint16_t mlen = boot_rd_u16(r);
    const unsigned char *msg = boot_rd_bytes(r, mlen);
    if (r->bad || r->off != r->len || mlen > BOOT_MSG_MAX) {
        store_reject(s, c, "malformed ABORT");
        return;
    }
    if (!s->abort_pending && !s->abort_taken) {
        s->abort_pending = 1;
        s->abort.rank = c->rank;
        s->abort.pid = c->pid;
        s->abort.code = code;
        memcpy(s->abort.msg, msg, mlen);
        s->abort.msg[mlen] = '\0';
    }
    store_reply_ok(c);
}

/* Handles one complete frame. */
static void store_dispatch(struct store *s, struct store_conn *c)
{
    struct boot_rd r = {.p = c->body, .len = c->hdr.len};
    int hello = c->hdr.op == BOOT_OP_HELLO || c->hdr.op == BOOT_OP_AGENT;
    if (c->rank < 0 && !c->agent && !hello) {
        store_reject(s, c, "the first frame must be HELLO");
        return;
    }
    if (c->agent && c->hdr.op != BOOT_OP_EXITED) {
        store_reject(s, c, "an agent connection only reports rank exits");
        return;
    }
    switch (c->hdr.op) {
    case BOOT_OP_HELLO:
    case BOOT_OP_AGENT:
        if (c->rank >= 0)
            store_reject(s, c, "second HELLO on one connection");
        else if (c->hdr.op == BOOT_OP_AGENT)
            store_on_agent(s, c, &r);
        else
            store_on_hello(s, c, &r);
        break;
    case BOOT_OP_EXITED:
        if (!c->agent)
            store_reject(s, c, "EXITED from a connection that is not an agent's");
        else
            store_on_exited(s, c, &r);
        break;
    case BOOT_OP_PUT: store_on_put(s, c, &r); break;
    case BOOT_OP_GET: store_on_get(s, c, &r); break;
    case BOOT_OP_FENCE: store_on_fence(s, c, &r); break;
    case BOOT_OP_ABORT: store_on_abort(s, c, &r); break;
    case BOOT_OP_BYE:
        s->ranks[c->rank].said_bye = 1;
        store_reply_ok(c);
        c->closing = 1;
        break;
    default: store_reject(s, c, "unknown operation"); break;
    }
}

/* ---------------------------------------------------------------- connections */

/* Reads into dst; returns bytes read, 0 when nothing is available now, -1 when the connection
   ended (EOF or error). */
static ssize_t store_read(struct store_conn *c, void *dst, size_t n)
{
    for (;;) {
        ssize_t k = recv(c->fd, dst, n, 0);
        if (k > 0)
            return k;
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        return -1;
    }
}

/* Advances the frame being received; returns 1 when a whole frame is ready, 0 when more bytes
   are needed, -1 when the connection ended or was rejected. */
static int store_recv_frame(struct store *s, struct store_conn *c)
{
    if (c->hdr_got < BOOT_HDR_LEN) {
        ssize_t k = store_read(c, c->hdr_raw + c->hdr_got, BOOT_HDR_LEN - c->hdr_got);
        if (k <= 0)
            return (int)k;
        c->hdr_got += (size_t)k;
        if (c->hdr_got < BOOT_HDR_LEN)
            return 0;
        boot_hdr_decode(c->hdr_raw, &c->hdr);
        const char *bad = boot_hdr_check(&c->hdr, 1);
        if (!bad && c->rank < 0 && !c->agent && c->hdr.op != BOOT_OP_HELLO &&
            c->hdr.op != BOOT_OP_AGENT)
            bad = "the first frame must be HELLO";
        if (bad) {
            store_reject(s, c, bad);
            return -1;
        }
        /* the length is within its op's limit (at most BOOT_BODY_MAX) before this allocation */
        if (c->hdr.len > 0 && !(c->body = malloc(c->hdr.len))) {
            store_reply_error(c, HINT_ERR_NOMEM, 1, "hintrun is out of memory");
            return -1;
        }
        c->body_got = 0;
    }
    if (c->body_got < c->hdr.len) {
        ssize_t k = store_read(c, c->body + c->body_got, c->hdr.len - c->body_got);
        if (k <= 0)
            return (int)k;
        c->body_got += (size_t)k;
    }
    return c->body_got == c->hdr.len;
}

static void store_frame_done(struct store_conn *c)
{
    free(c->body);
    c->body = NULL;
    c->hdr_got = c->body_got = 0;
}

/* Reads and handles frames until the connection must wait, has output pending, or has no more
   input. A bounded number per round keeps one busy rank from starving the others. */
static void store_serve(struct store *s, struct store_conn *c)
{
    for (int n = 0; n < 64 && !c->dead && !c->closing && !c->wait && c->tx.len == 0; n++) {
        int rc = store_recv_frame(s, c);
        if (rc == 0)
            return;
        if (rc < 0) {
            if (!c->closing)
                c->dead = 1; /* EOF or error with nothing to say */
            return;
        }
        store_dispatch(s, c);
        store_frame_done(c);
        store_flush(c);
    }
}

static void store_conn_free(struct store_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->body);
    boot_buf_free(&c->tx);
    free(c);
}

/* Accepts while there is room; beyond max_conns, connections wait in the listen backlog (the
   clients' connect blocks) until others close, so a flood slows the store down but cannot make
   it drop a rank's connection. */
static void store_accept(struct store *s, int listen_fd)
{
    while (s->nconns < s->max_conns) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                /* out of descriptors: stop listening until a connection closes, instead of
                   spinning on a listen socket that stays readable */
                store_log("accept: %s; new connections wait until one closes", strerror(errno));
                s->accept_paused = 1;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK) {
                store_log("accept: %s", strerror(errno));
            }
            return;
        }
        struct store_conn *c = calloc(1, sizeof *c);
        if (!c) {
            store_log("out of memory; refusing a connection");
            close(fd);
            continue;
        }
        struct ucred cred = {0};
        socklen_t clen = sizeof cred;
        if (listen_fd == s->tcp_fd) /* small request-reply frames: never wait for Nagle */
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        else if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
            c->pid = cred.pid;
        c->fd = fd;
        c->rank = -1;
        s->conns[s->nconns++] = c;
    }
}

/* Frees dead connections and closes those whose last reply has gone out. */
static void store_reap(struct store *s)
{
    size_t j = 0;
    for (size_t i = 0; i < s->nconns; i++) {
        struct store_conn *c = s->conns[i];
        if (c->closing && c->tx.len == 0)
            c->dead = 1;
        if (c->dead) {
            store_conn_free(c);
            s->accept_paused = 0;
        }
        else
            s->conns[j++] = c;
    }
    s->nconns = j;
}

/* ---------------------------------------------------------------- API */

int store_open(struct store **out, const char *path, int nranks, const char *token)
{
    struct sockaddr_un sa;
    struct store *s = calloc(1, sizeof *s);
    int rc = -1;
    if (!s)
        goto out;
    s->listen_fd = -1;
    s->tcp_fd = -1;
    s->nranks = nranks;
    memcpy(s->token, token, BOOT_TOKEN_LEN);
    /* room for every rank, a reconnect or two each, and a few strays */
    s->max_conns = 2 * (size_t)nranks + 16;
    s->nbuckets = 64;
    s->ranks = calloc((size_t)nranks, sizeof *s->ranks);
    s->conns = calloc(s->max_conns, sizeof *s->conns);
    s->buckets = calloc(s->nbuckets, sizeof *s->buckets);
    if (!s->ranks || !s->conns || !s->buckets) {
        store_log("out of memory");
        goto out;
    }
    socklen_t salen;
    if (boot_unix_addr(path, &sa, &salen) != 0) {
        store_log("socket path %s is empty or too long", path);
        goto out;
    }
    s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&sa, salen) < 0 ||
        listen(s->listen_fd, SOMAXCONN) < 0) {
        store_log("cannot listen on %s: %s", path, strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (rc != 0) {
        store_close(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

void store_close(struct store *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->conns && i < s->nconns; i++)
        store_conn_free(s->conns[i]);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->tcp_fd >= 0)
        close(s->tcp_fd);
    free(s->agent_joined);
    free(s->exits);
    store_kv_free_all(s);
    free(s->conns);
    free(s->ranks);
    free(s);
}

size_t store_max_pollfds(const struct store *s)
{
    return 2 + s->max_conns;
}

size_t store_fill_pollfds(struct store *s, struct pollfd *pfd)
{
    size_t n = 0;
    /* not listening while full: see store_accept */
    short lev = s->nconns < s->max_conns && !s->accept_paused ? POLLIN : 0;
    pfd[n++] = (struct pollfd){.fd = s->listen_fd, .events = lev};
    pfd[n++] = (struct pollfd){.fd = s->tcp_fd, .events = lev}; /* -1: poll skips it */
    for (size_t i = 0; i < s->nconns; i++) {
        struct store_conn *c = s->conns[i];
        /* POLLRDHUP: notice a peer that leaves while we are not reading it */
        short ev = POLLRDHUP;
        if (!c->wait && !c->closing && c->tx.len == 0)
            ev |= POLLIN;
        if (c->tx.len > 0)
            ev |= POLLOUT;
        pfd[n++] = (struct pollfd){.fd = c->fd, .events = ev};
    }
    return n;
}

void store_handle(struct store *s, const struct pollfd *pfd, size_t n)
{
    /* pfd[2..] match conns[0..] as filled; connections accepted now come after them */
    for (size_t i = 2; i < n && i - 2 < s->nconns; i++) {
        struct store_conn *c = s->conns[i - 2];
        short re = pfd[i].revents;
        if (re & POLLOUT)
            store_flush(c);
        if (re & POLLIN)
            store_serve(s, c);
        else if (re & (POLLHUP | POLLERR | POLLRDHUP))
            c->dead = 1;
    }
    if (n > 0 && (pfd[0].revents & POLLIN))
        store_accept(s, s->listen_fd);
    if (n > 1 && s->tcp_fd >= 0 && (pfd[1].revents & POLLIN))
        store_accept(s, s->tcp_fd);
    store_reap(s);
    store_check_fence_orphaned(s);
    store_check_stalled(s);
    store_reap(s);
}

void store_rank_exited(struct store *s, int rank)
{
    if (rank < 0 || rank >= s->nranks)
        return;
    s->ranks[rank].exited = 1;
    s->accept_paused = 0; /* descriptors may be free again */
    store_check_fence_orphaned(s);
    store_check_stalled(s);
}

int store_rank_joined(const struct store *s, int rank)
{
    if (rank < 0 || rank >= s->nranks || !s->ranks[rank].joined)
        return 0;
    return s->ranks[rank].said_bye ? 2 : 1;
}

int store_rank_left_unfinished(const struct store *s, int rank)
{
    return store_rank_joined(s, rank) == 1;
}

int store_take_abort(struct store *s, struct store_abort *a)
{
    if (!s->abort_pending)
        return 0;
    s->abort_pending = 0;
    s->abort_taken = 1;
    *a = s->abort;
    return 1;
}

int store_listen_tcp(struct store *s, const char *ip, int nagents, char *addr, size_t cap)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_PASSIVE};
    struct addrinfo *ai = NULL;
    int rc = getaddrinfo(ip, "0", &hints, &ai);
    if (rc != 0) {
        store_log("cannot listen on %s: not a numeric IP address (%s)", ip, gai_strerror(rc));
        return -1;
    }
    /* room for the agents' connections too */
    size_t max = s->max_conns + (size_t)nagents;
    struct store_conn **conns = realloc(s->conns, max * sizeof *conns);
    if (conns)
        s->conns = conns;
    s->agent_joined = calloc((size_t)nagents, sizeof *s->agent_joined);
    s->exits = calloc((size_t)s->nranks, sizeof *s->exits);
    if (!conns || !s->agent_joined || !s->exits) {
        freeaddrinfo(ai);
        store_log("out of memory");
        return -1;
    }
    s->max_conns = max;
    s->nagents = nagents;
    s->max_exits = (size_t)s->nranks;
    struct sockaddr_storage sa;
    socklen_t salen = sizeof sa;
    s->tcp_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->tcp_fd < 0 || bind(s->tcp_fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
        listen(s->tcp_fd, SOMAXCONN) < 0 || getsockname(s->tcp_fd, (struct sockaddr *)&sa, &salen) < 0) {
        store_log("cannot listen on TCP address %s: %s (give an address of this host that the "
                  "other hosts reach: --store-addr ADDR)", ip, strerror(errno));
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    char host[NI_MAXHOST], port[NI_MAXSERV];
    if (getnameinfo((struct sockaddr *)&sa, salen, host, sizeof host, port, sizeof port,
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        store_log("getnameinfo of the TCP store address failed");
        return -1;
    }
    int len = snprintf(addr, cap, strchr(host, ':') ? "tcp:[%s]:%s" : "tcp:%s:%s", host, port);
    return len > 0 && (size_t)len < cap ? 0 : -1;
}

int store_agent_joined(const struct store *s, int node)
{
    return node >= 0 && node < s->nagents && s->agent_joined[node];
}

int store_take_exit(struct store *s, struct store_exit *e)
{
    if (s->exits_taken >= s->nexits)
        return 0;
    *e = s->exits[s->exits_taken++];
    return 1;
}
