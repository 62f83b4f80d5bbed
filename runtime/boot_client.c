/*
 * runtime/boot_client.c — the bootstrap client (API in runtime/boot.h, wire format in
 * runtime/boot_proto.h).
 *
 * One blocking connection per process to the store that hintrun serves (a Unix socket, or TCP
 * when the job spans hosts). Every request gets
 * exactly one reply, in order, so the client is a simple send-then-wait. If hintrun goes away
 * the socket reads EOF and every call fails with HINT_ERR_BOOTSTRAP instead of hanging.
 * A singleton (no HINT_RANK) keeps its key-value pairs in process memory, so code that puts its
 * own address and gets it back works unchanged in a world of one.
 * Not thread-safe: the runtime calls it from one thread (hint is FUNNELED).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot.h"
#include "runtime/boot_backend.h"
#include "runtime/boot_proto.h"
#include "runtime/trace.h"

/* A key-value pair of the singleton's in-process store. */
struct boot_local_kv {
    struct boot_local_kv *next;
    char *key;
    unsigned char *val;
    size_t len;
};

static struct {
    int active;            /* between boot_init and boot_fini */
    int fd;                /* store connection, -1 when none or lost */
    uint32_t fence_seq;    /* fences entered so far */
    struct boot_info info;
    struct boot_local_kv *local; /* singleton store */
} boot = {.fd = -1};

static void boot_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void boot_log(const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (boot.info.singleton || !boot.active)
        fprintf(stderr, "hint: bootstrap: %s\n", msg);
    else
        fprintf(stderr, "hint: bootstrap (rank %d): %s\n", boot.info.rank, msg);
}

/* ---------------------------------------------------------------- environment */

/* Reads integer env var name into *out, requiring min <= value <= max. */
static int boot_env_int(const char *name, long min, long max, int *out)
{
    const char *s = getenv(name);
    if (!s || !*s) {
        boot_log("%s is not set; hintrun sets it for every rank (is this process started by a "
                 "launcher that speaks hint's bootstrap?)", name);
        return HINT_ERR_BOOTSTRAP;
    }
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || end == s || v < min || v > max) {
        boot_log("%s='%s' is not an integer in [%ld, %ld]", name, s, min, max);
        return HINT_ERR_BOOTSTRAP;
    }
    *out = (int)v;
    return HINT_SUCCESS;
}

static int boot_env_hex(const char *name, size_t ndigits, const char **out)
{
    const char *s = getenv(name);
    if (!s || !boot_is_hex(s, ndigits)) {
        boot_log("%s='%s' is not %zu hex digits", name, s ? s : "(unset)", ndigits);
        return HINT_ERR_BOOTSTRAP;
    }
    *out = s;
    return HINT_SUCCESS;
}

/* Fills in the rank geometry from the environment, checking that it is consistent. */
static int boot_env_geometry(struct boot_info *in)
{
    int st = HINT_SUCCESS, pid;
    if ((st = boot_env_int("HINT_SIZE", 1, INT_MAX, &in->size)) ||
        (st = boot_env_int("HINT_RANK", 0, in->size - 1, &in->rank)) ||
        (st = boot_env_int("HINT_LOCAL_SIZE", 1, in->size, &in->local_size)) ||
        (st = boot_env_int("HINT_LOCAL_RANK", 0, in->local_size - 1, &in->local_rank)) ||
        (st = boot_env_int("HINT_NNODES", 1, in->size, &in->nnodes)) ||
        (st = boot_env_int("HINT_NODE_ID", 0, in->nnodes - 1, &in->node_id)) ||
        (st = boot_env_int("HINT_OVERSUBSCRIBED", 0, 1, &in->oversubscribed)) ||
        (st = boot_env_int("HINT_LAUNCHER_PID", 1, INT_MAX, &pid)))
        return st;
    return HINT_SUCCESS;
}

/* Where the store is: a Unix socket on this host, or TCP (a job across hosts). */
struct boot_addr {
    int tcp;
    struct sockaddr_un sa;
    socklen_t salen;
    char host[256], port[16];
    const char *text;      /* HINT_STORE, for messages */
};

/* Parses HINT_STORE: "unix:/path", "unix:@name" (an abstract socket), "tcp:HOST:PORT" or
   "tcp:[IPv6]:PORT". */
static int boot_env_store(struct boot_addr *a)
{
    const char *s = getenv("HINT_STORE");
    a->text = s;
    if (s && strncmp(s, "tcp:", 4) == 0) {
        a->tcp = 1;
        if (boot_tcp_split(s + 4, a->host, sizeof a->host, a->port, sizeof a->port) != 0) {
            boot_log("HINT_STORE='%s' is not of the form tcp:HOST:PORT or tcp:[IPv6]:PORT", s);
            return HINT_ERR_BOOTSTRAP;
        }
        return HINT_SUCCESS;
    }
    if (!s || strncmp(s, "unix:", 5) != 0) {
        boot_log("HINT_STORE='%s' is not a store address of the form unix:/path, unix:@name or "
                 "tcp:HOST:PORT", s ? s : "(unset)");
        return HINT_ERR_BOOTSTRAP;
    }
    const char *path = s + 5;
    if (boot_unix_addr(path, &a->sa, &a->salen) != 0) {
        boot_log("HINT_STORE path '%s' is empty or longer than %zu bytes", path,
                 sizeof a->sa.sun_path - 1);
        return HINT_ERR_BOOTSTRAP;
    }
    return HINT_SUCCESS;
}

/* ---------------------------------------------------------------- transport */

static void boot_drop_connection(void)
{
    if (boot.fd >= 0)
        close(boot.fd);
    boot.fd = -1;
}

static int boot_send_all(const void *p, size_t n)
{
    const unsigned char *c = p;
    while (n > 0) {
        /* MSG_NOSIGNAL: a vanished hintrun must give an error, not kill the rank by SIGPIPE */
        ssize_t w = send(boot.fd, c, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            boot_log("lost the connection to hintrun's store (send: %s)", strerror(errno));
            boot_drop_connection();
            return HINT_ERR_BOOTSTRAP;
        }
        c += w;
        n -= (size_t)w;
    }
    return HINT_SUCCESS;
}

static int boot_recv_all(void *p, size_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        ssize_t r = recv(boot.fd, c, n, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            boot_log("lost the connection to hintrun's store (%s)",
                     r == 0 ? "hintrun closed it" : strerror(errno));
            boot_drop_connection();
            return HINT_ERR_BOOTSTRAP;
        }
        c += r;
        n -= (size_t)r;
    }
    return HINT_SUCCESS;
}

/* Reads and throws away n bytes (the part of a value that did not fit the caller's buffer). */
static int boot_recv_discard(size_t n)
{
    unsigned char sink[4096];
    int st = HINT_SUCCESS;
    while (n > 0 && st == HINT_SUCCESS) {
        size_t k = n < sizeof sink ? n : sizeof sink;
        st = boot_recv_all(sink, k);
        n -= k;
    }
    return st;
}

/* Sends a finished frame. */
static int boot_send_frame(struct boot_buf *b)
{
    if (boot.fd < 0)
        return HINT_ERR_BOOTSTRAP; /* lost earlier, and reported then */
    if (b->failed)
        return HINT_ERR_NOMEM;
    return boot_send_all(b->data, b->len);
}

/* Reads an ERROR reply's body and reports it. */
static int boot_recv_error(const struct boot_hdr *h, const char *what)
{
    unsigned char body[4 + 2 + BOOT_MSG_MAX];
    int st = boot_recv_all(body, h->len);
    if (st)
        return st;
    struct boot_rd r = {.p = body, .len = h->len};
    uint32_t code = boot_rd_u32(&r);
    uint16_t mlen = boot_rd_u16(&r);
    const unsigned char *msg = boot_rd_bytes(&r, mlen);
    boot_log("hintrun's store refused %s: %.*s (status %u)", what, msg ? (int)mlen : 0,
             msg ? (const char *)msg : "", code);
    return HINT_ERR_BOOTSTRAP;
}

/* A fence or get that blocks longer than HINT_HANG_TIMEOUT says so once (runtime/trace.h),
   then keeps waiting. */
static void boot_wait_reply_readable(void)
{
    if (trace_hang_ns <= 0 || !trace.store_step || boot.fd < 0)
        return;
    struct pollfd p = {.fd = boot.fd, .events = POLLIN};
    int ms = (int)(trace_hang_ns / 1000000) + 1, rc;
    do
        rc = poll(&p, 1, ms);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        trace_report_hang(trace_now_ns());
}

/* Waits for the reply header of a request; ERROR replies are consumed and reported here.
   On success *h is an OK or VALUE header whose body is still unread. */
static int boot_recv_reply(struct boot_hdr *h, const char *what)
{
    unsigned char raw[BOOT_HDR_LEN];
    boot_wait_reply_readable();
    int st = boot_recv_all(raw, sizeof raw);
    if (st)
        return st;
    boot_hdr_decode(raw, h);
    const char *bad = boot_hdr_check(h, 0);
    if (bad) {
        boot_log("malformed reply from hintrun's store to %s: %s", what, bad);
        boot_drop_connection();
        return HINT_ERR_BOOTSTRAP;
    }
    if (h->op == BOOT_OP_ERROR)
        return boot_recv_error(h, what);
    return HINT_SUCCESS;
}

/* Waits for an OK reply. */
static int boot_expect_ok(const char *what)
{
    struct boot_hdr h;
    int st = boot_recv_reply(&h, what);
    if (st)
        return st;
    if (h.op != BOOT_OP_OK) {
        boot_log("unexpected %s reply from hintrun's store to %s", boot_op_name(h.op), what);
        boot_drop_connection();
        return HINT_ERR_BOOTSTRAP;
    }
    return HINT_SUCCESS;
}

static int boot_connect_unix(const struct boot_addr *a)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        boot_log("socket: %s", strerror(errno));
        return HINT_ERR_BOOTSTRAP;
    }
    int rc;
    do
        rc = connect(fd, (const struct sockaddr *)&a->sa, a->salen);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        boot_log("cannot connect to hintrun's store at %s: %s (has hintrun exited?)",
                 a->text + 5, strerror(errno));
        close(fd);
        return HINT_ERR_BOOTSTRAP;
    }
    boot.fd = fd;
    return HINT_SUCCESS;
}

/* A store on another host: each address of HOST in turn, each for at most
   BOOT_TCP_CONNECT_MS, so an unreachable store is an error within seconds, not a hang. */
#define BOOT_TCP_CONNECT_MS 10000
static int boot_connect_tcp(const struct boot_addr *a)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *list = NULL;
    int rc = getaddrinfo(a->host, a->port, &hints, &list), err = 0;
    if (rc != 0) {
        boot_log("cannot reach hintrun's store at %s: cannot resolve %s: %s", a->text, a->host,
                 gai_strerror(rc));
        return HINT_ERR_BOOTSTRAP;
    }
    for (struct addrinfo *ai = list; ai && boot.fd < 0; ai = ai->ai_next) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            err = errno;
            continue;
        }
        if ((err = boot_connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, BOOT_TCP_CONNECT_MS)) != 0) {
            close(fd);
            continue;
        }
        /* small request-reply frames: never wait for Nagle */
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        boot.fd = fd;
    }
    freeaddrinfo(list);
    if (boot.fd < 0) {
        boot_log("cannot reach hintrun's store at %s: %s (is hintrun still running, and does "
                 "this host reach that address? hintrun --store-addr ADDR picks another)",
                 a->text, strerror(err));
        return HINT_ERR_BOOTSTRAP;
    }
    return HINT_SUCCESS;
}

static int boot_connect(const struct boot_addr *a)
{
    return a->tcp ? boot_connect_tcp(a) : boot_connect_unix(a);
}

static int boot_hello(const char *token)
{
    struct boot_buf b = {0};
    boot_frame_begin(&b, BOOT_OP_HELLO);
    boot_buf_u32(&b, (uint32_t)boot.info.rank);
    boot_buf_u32(&b, (uint32_t)getpid());
    boot_buf_add(&b, token, BOOT_TOKEN_LEN);
    boot_frame_end(&b, 0);
    int st = boot_send_frame(&b);
    boot_buf_free(&b);
    if (st == HINT_SUCCESS)
        st = boot_expect_ok("HELLO");
    return st;
}

/* ---------------------------------------------------------------- singleton store */

static struct boot_local_kv *boot_local_find(const char *key)
{
    for (struct boot_local_kv *kv = boot.local; kv; kv = kv->next)
        if (strcmp(kv->key, key) == 0)
            return kv;
    return NULL;
}

static int boot_local_put(const char *key, const void *val, size_t len)
{
    struct boot_local_kv *kv = boot_local_find(key);
    unsigned char *copy = malloc(len ? len : 1);
    if (!copy)
        return HINT_ERR_NOMEM;
    if (len)
        memcpy(copy, val, len);
    if (!kv) {
        kv = calloc(1, sizeof *kv);
        char *k = strdup(key);
        if (!kv || !k) {
            free(kv);
            free(k);
            free(copy);
            return HINT_ERR_NOMEM;
        }
        kv->key = k;
        kv->next = boot.local;
        boot.local = kv;
    }
    free(kv->val);
    kv->val = copy;
    kv->len = len;
    return HINT_SUCCESS;
}

static int boot_local_get(const char *key, void *val, size_t cap, size_t *len)
{
    struct boot_local_kv *kv = boot_local_find(key);
    if (!kv) {
        /* nobody else could ever put it: waiting would hang forever */
        boot_log("get '%s': no such key, and a singleton has no other rank to put it", key);
        return HINT_ERR_BOOTSTRAP;
    }
    *len = kv->len;
    if (kv->len > cap)
        return HINT_ERR_TRUNCATE;
    if (kv->len)
        memcpy(val, kv->val, kv->len);
    return HINT_SUCCESS;
}

static void boot_local_free(void)
{
    while (boot.local) {
        struct boot_local_kv *kv = boot.local;
        boot.local = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
}

/* ---------------------------------------------------------------- API */

static void boot_make_singleton(struct boot_info *in)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    *in = (struct boot_info){.rank = 0, .size = 1, .local_rank = 0, .local_size = 1,
                             .node_id = 0, .nnodes = 1, .singleton = 1};
    /* unique enough among live processes: the pid, mixed with the time for reuse of pids */
    uint32_t t = (uint32_t)ts.tv_sec ^ (uint32_t)ts.tv_nsec;
    snprintf(in->jobid, sizeof in->jobid, "%08x%08x", (unsigned)getpid(), (unsigned)t);
}

static int store_init(struct boot_info *info)
{
    int st = HINT_SUCCESS;
    const char *jobid = NULL, *token = NULL;
    struct boot_addr addr = {0};
    if (!info)
        return HINT_ERR_ARG;
    if (boot.active) {
        *info = boot.info;
        return HINT_SUCCESS;
    }
    if (!getenv("HINT_RANK")) {
        boot_make_singleton(&boot.info);
        goto out;
    }
    boot.info = (struct boot_info){0};
    if ((st = boot_env_geometry(&boot.info)) || (st = boot_env_hex("HINT_JOBID", 16, &jobid)) ||
        (st = boot_env_hex("HINT_TOKEN", BOOT_TOKEN_LEN, &token)) || (st = boot_env_store(&addr)))
        goto out;
    memcpy(boot.info.jobid, jobid, BOOT_JOBID_LEN + 1);
    if ((st = boot_connect(&addr)))
        goto out;
    if ((st = boot_hello(token)))
        goto out;
out:
    if (st) {
        boot_drop_connection();
        return st;
    }
    boot.active = 1;
    boot.fence_seq = 0;
    *info = boot.info;
    return HINT_SUCCESS;
}

static int boot_check_key(const char *key)
{
    if (!key || !boot_key_valid((const unsigned char *)key, strlen(key))) {
        boot_log("invalid key: keys are 1 to %u bytes", BOOT_KEY_MAX);
        return HINT_ERR_ARG;
    }
    return HINT_SUCCESS;
}

static int store_put(const char *key, const void *val, size_t len)
{
    int st = HINT_SUCCESS;
    struct boot_buf b = {0};
    if (!boot.active)
        return HINT_ERR_NOT_INITIALIZED;
    if ((st = boot_check_key(key)))
        return st;
    if ((!val && len) || len > BOOT_VAL_MAX) {
        boot_log("put '%s': value of %zu bytes is NULL or larger than %u bytes", key, len,
                 BOOT_VAL_MAX);
        return HINT_ERR_ARG;
    }
    if (boot.info.singleton)
        return boot_local_put(key, val, len);
    boot_frame_begin(&b, BOOT_OP_PUT);
    boot_buf_u16(&b, (uint16_t)strlen(key));
    boot_buf_add(&b, key, strlen(key));
    boot_buf_u32(&b, (uint32_t)len);
    boot_buf_add(&b, val, len);
    boot_frame_end(&b, 0);
    if ((st = boot_send_frame(&b)))
        goto out;
    st = boot_expect_ok("PUT");
out:
    boot_buf_free(&b);
    return st;
}

/* The blocking store steps are what a rank waits in during hint_init and hint_finalize. */
static void boot_trace_begin(const char *step)
{
    trace.store_step = step;
    trace.start_ns = trace_now_ns();
}

static void boot_trace_end(void)
{
    trace.store_step = NULL;
    trace.start_ns = 0;
}

/* Receives a VALUE reply's body into val (at most cap bytes). */
static int boot_recv_value(const struct boot_hdr *h, void *val, size_t cap, size_t *len)
{
    unsigned char raw[4];
    int st;
    if (h->op != BOOT_OP_VALUE || h->len < 4) {
        boot_log("unexpected %s reply from hintrun's store to GET", boot_op_name(h->op));
        boot_drop_connection();
        return HINT_ERR_BOOTSTRAP;
    }
    if ((st = boot_recv_all(raw, 4)))
        return st;
    size_t vlen = boot_get_u32(raw);
    if (vlen != h->len - 4) {
        boot_log("malformed VALUE reply from hintrun's store");
        boot_drop_connection();
        return HINT_ERR_BOOTSTRAP;
    }
    size_t keep = vlen < cap ? vlen : cap;
    if ((st = boot_recv_all(val, keep)) || (st = boot_recv_discard(vlen - keep)))
        return st;
    *len = vlen;
    return vlen > cap ? HINT_ERR_TRUNCATE : HINT_SUCCESS;
}

static int store_get(const char *key, void *val, size_t cap, size_t *len)
{
    int st = HINT_SUCCESS;
    struct boot_buf b = {0};
    struct boot_hdr h;
    if (!boot.active)
        return HINT_ERR_NOT_INITIALIZED;
    if ((st = boot_check_key(key)))
        return st;
    if (!len || (!val && cap)) {
        boot_log("get '%s': NULL length pointer, or NULL buffer with capacity %zu", key, cap);
        return HINT_ERR_ARG;
    }
    if (boot.info.singleton)
        return boot_local_get(key, val, cap, len);
    boot_frame_begin(&b, BOOT_OP_GET);
    boot_buf_u16(&b, (uint16_t)strlen(key));
    boot_buf_add(&b, key, strlen(key));
    boot_frame_end(&b, 0);
    boot_trace_begin("get");
    if ((st = boot_send_frame(&b)) || (st = boot_recv_reply(&h, "GET")))
        goto out;
    st = boot_recv_value(&h, val, cap, len);
out:
    boot_trace_end();
    boot_buf_free(&b);
    return st;
}

static int store_fence(void)
{
    int st = HINT_SUCCESS;
    struct boot_buf b = {0};
    if (!boot.active)
        return HINT_ERR_NOT_INITIALIZED;
    if (boot.info.singleton)
        return HINT_SUCCESS;
    boot_frame_begin(&b, BOOT_OP_FENCE);
    boot_buf_u32(&b, boot.fence_seq + 1);
    boot_frame_end(&b, 0);
    boot_trace_begin("fence");
    if ((st = boot_send_frame(&b)) || (st = boot_expect_ok("FENCE")))
        goto out;
    boot.fence_seq++;
out:
    boot_trace_end();
    boot_buf_free(&b);
    return st;
}

static void store_abort(int code, const char *msg)
{
    int status = boot_abort_status(code);
    /* what the rank printed before aborting is usually the explanation: do not lose it */
    fflush(stdout);
    fflush(stderr);
    if (boot.active && !boot.info.singleton && boot.fd >= 0) {
        struct boot_buf b = {0};
        size_t mlen = msg ? strnlen(msg, BOOT_MSG_MAX) : 0;
        boot_frame_begin(&b, BOOT_OP_ABORT);
        boot_buf_u32(&b, (uint32_t)code);
        boot_buf_u16(&b, (uint16_t)mlen);
        boot_buf_add(&b, msg, mlen);
        boot_frame_end(&b, 0);
        /* hintrun prints msg and ends the job; wait for its OK so the abort code, not our own
           exit, is what the job reports */
        if (boot_send_frame(&b) == HINT_SUCCESS && boot_expect_ok("ABORT") == HINT_SUCCESS) {
            boot_buf_free(&b);
            _exit(status);
        }
        boot_buf_free(&b);
    }
    if (boot.active && !boot.info.singleton)
        fprintf(stderr, "hint: rank %d aborted the job with code %d%s%s\n", boot.info.rank, code,
                msg ? ": " : "", msg ? msg : "");
    else
        fprintf(stderr, "hint: abort with code %d%s%s\n", code, msg ? ": " : "", msg ? msg : "");
    _exit(status);
}

static void store_fini(void)
{
    if (!boot.active)
        return;
    if (boot.fd >= 0) {
        struct boot_buf b = {0};
        boot_frame_begin(&b, BOOT_OP_BYE);
        boot_frame_end(&b, 0);
        /* waiting for OK makes sure hintrun has handled all our earlier requests */
        if (boot_send_frame(&b) == HINT_SUCCESS)
            (void)boot_expect_ok("BYE");
        boot_buf_free(&b);
    }
    boot_drop_connection();
    boot_local_free();
    boot.active = 0;
}

static const struct boot_backend store_backend = {
    .name = "hintrun",
    .put = store_put,
    .get = store_get,
    .fence = store_fence,
    .abort = store_abort,
    .fini = store_fini,
};

static const struct boot_backend singleton_backend = {
    .name = "singleton",
    .put = store_put,
    .get = store_get,
    .fence = store_fence,
    .abort = store_abort,
    .fini = store_fini,
};

int boot_store_init(struct boot_info *info, const struct boot_backend **be)
{
    int st = store_init(info);
    if (st == HINT_SUCCESS)
        *be = info->singleton ? &singleton_backend : &store_backend;
    return st;
}
