/*
 * tests/launcher/lt_rank.c — the rank program of the launcher tests, run under hintrun.
 *   lt_rank kv ROUNDS            put/get/fence among all ranks, checked; prints "kv ok ..."
 *   lt_rank exit CODE RANK       RANK exits with CODE after a fence; the others sleep
 *   lt_rank crash SIG RANK       RANK makes a job shm object and a grandchild, then raises SIG
 *   lt_rank abort CODE RANK MSG  RANK calls boot_abort(CODE, MSG); the others sleep
 *   lt_rank sleep [ignore-term]  prints "ready ..." and sleeps forever
 *   lt_rank sleep leave-things   rank 0 first makes a job shm object and a grandchild
 *   lt_rank spam LINES           many lines, each written in pieces, to stdout and stderr
 *   lt_rank env NAME...          prints NAME=value (or "NAME unset"), and whether stdin is EOF
 *   lt_rank shm                  makes a job shm object and exits 0
 *   lt_rank partial              prints a line without its newline
 *   lt_rank orphan               rank 1 leaves; rank 0's fence and get must fail, not hang
 *   lt_rank raw                  malformed and unauthorised store clients (see raw_*)
 *   lt_rank fuzz N               N connections of random frames, then a working put/get/fence
 * Exit status 1 and a "FAIL" line on any unexpected result.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netdb.h>
#include <time.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot.h"
#include "runtime/boot_proto.h"

static struct boot_info info;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "lt_rank %d: FAIL: ", info.rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_forever(void)
{
    for (;;)
        pause();
}

static void init(void)
{
    int st = boot_init(&info);
    if (st)
        fail("boot_init returned %d", st);
}

static void fence(void)
{
    int st = boot_fence();
    if (st)
        fail("boot_fence returned %d", st);
}

static void put(const char *key, const void *val, size_t len)
{
    int st = boot_put(key, val, len);
    if (st)
        fail("boot_put(%s) returned %d", key, st);
}

/* Prints the facts the tests check afterwards: pid, jobid, store address. */
static void announce(const char *what)
{
    printf("%s rank %d pid %d jobid %s store %s\n", what, info.rank, (int)getpid(), info.jobid,
           getenv("HINT_STORE") ? getenv("HINT_STORE") : "none");
    fflush(stdout);
}

/* ---------------------------------------------------------------- kv */

static size_t kv_value(char *buf, size_t cap, int round, int rank)
{
    int n = snprintf(buf, cap, "v/%d/%d/%s/", round, rank, info.jobid);
    size_t len = (size_t)n + (size_t)((rank * 37 + round * 11) % 700);
    for (size_t i = (size_t)n; i < len && i < cap; i++)
        buf[i] = (char)('a' + (i + (size_t)rank) % 26);
    return len;
}

static void kv_check_env(void)
{
    const char *r = getenv("HINT_RANK"), *s = getenv("HINT_SIZE");
    if (info.singleton || !r || !s || atoi(r) != info.rank || atoi(s) != info.size ||
        info.local_rank != info.rank || info.local_size != info.size || info.node_id != 0 ||
        info.nnodes != 1 || strlen(info.jobid) != 16)
        fail("boot_info does not match the environment");
}

static void kv_rounds(int rounds)
{
    char key[64], want[1024], got[1024];
    for (int round = 0; round < rounds; round++) {
        snprintf(key, sizeof key, "k/%d/%d", round, info.rank);
        put(key, want, kv_value(want, sizeof want, round, info.rank));
        fence();
        for (int q = 0; q < info.size; q++) {
            size_t len = 0, wl = kv_value(want, sizeof want, round, q);
            snprintf(key, sizeof key, "k/%d/%d", round, q);
            int st = boot_get(key, got, sizeof got, &len);
            if (st || len != wl || memcmp(got, want, wl) != 0)
                fail("get %s: status %d, %zu bytes, expected %zu", key, st, len, wl);
        }
    }
}

/* Ranks ask for a key before rank 0 puts it: the store must defer the reply. */
static void kv_deferred(void)
{
    char got[16];
    size_t len = 0;
    if (info.rank == 0) {
        usleep(100000);
        put("late", "LATE", 4);
    }
    int st = boot_get("late", got, sizeof got, &len);
    if (st || len != 4 || memcmp(got, "LATE", 4) != 0)
        fail("deferred get: status %d", st);
}

/* A 1 MiB value, a truncated read of it, and a read after the truncation (stream in sync). */
static void kv_big(void)
{
    size_t big = BOOT_VAL_MAX, len = 0;
    unsigned char *v = malloc(big), *g = malloc(big);
    for (size_t i = 0; i < big; i++)
        v[i] = (unsigned char)(i * 131 + 7);
    if (info.rank == 0)
        put("big", v, big);
    int st = boot_get("big", g, 10, &len);
    if (st != HINT_ERR_TRUNCATE || len != big || memcmp(g, v, 10) != 0)
        fail("truncated get: status %d, len %zu", st, len);
    st = boot_get("big", g, big, &len);
    if (st || len != big || memcmp(g, v, big) != 0)
        fail("1 MiB get: status %d, len %zu", st, len);
    free(v);
    free(g);
}

/* Putting an existing key replaces its value. */
static void kv_replace(void)
{
    char got[8];
    size_t len = 0;
    if (info.rank == 0)
        put("x", "1", 1);
    fence();
    if (info.rank == info.size - 1)
        put("x", "22", 2);
    fence();
    int st = boot_get("x", got, sizeof got, &len);
    if (st || len != 2 || memcmp(got, "22", 2) != 0)
        fail("replaced key: status %d, len %zu", st, len);
}

static int mode_kv(int rounds)
{
    init();
    kv_check_env();
    kv_rounds(rounds);
    kv_deferred();
    kv_big();
    kv_replace();
    if (info.rank == 0 && boot_put("", "a", 1) != HINT_ERR_ARG)
        fail("empty key accepted");
    fence();
    boot_fini();
    printf("kv ok rank %d size %d\n", info.rank, info.size);
    return 0;
}

/* ---------------------------------------------------------------- failures */

static int mode_exit(int code, int who)
{
    init();
    announce("started");
    fence();
    if (info.rank != who)
        sleep_forever();
    printf("exit at %.6f\n", now());
    fflush(stdout);
    exit(code);
}

static void make_shm(const char *suffix)
{
    char name[128];
    snprintf(name, sizeof name, "/hint-%u-%s-%s", (unsigned)getuid(), info.jobid, suffix);
    int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0)
        fail("shm_open(%s): %s", name, strerror(errno));
    close(fd);
}

static int mode_crash(int sig, int who)
{
    init();
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core); /* a core dump would only slow the test down */
    announce("started");
    if (info.rank == who) {
        make_shm("crash");
        pid_t g = fork();
        if (g == 0)
            sleep_forever(); /* stays in the rank's process group */
        printf("grandchild %d\n", (int)g);
    }
    fflush(stdout);
    fence();
    if (info.rank != who)
        sleep_forever();
    printf("crash at %.6f\n", now());
    fflush(stdout);
    signal(sig, SIG_DFL); /* a sanitizer's handler must not turn the signal into an exit */
    raise(sig);
    return 1;
}

static int mode_abort(int code, int who, const char *msg)
{
    init();
    announce("started");
    fence();
    if (info.rank != who)
        sleep_forever();
    boot_abort(code, msg);
    return 1;
}

static int mode_sleep(const char *how)
{
    init();
    if (strcmp(how, "ignore-term") == 0)
        signal(SIGTERM, SIG_IGN);
    if (strcmp(how, "leave-things") == 0 && info.rank == 0) {
        make_shm("left");
        pid_t g = fork();
        if (g == 0)
            sleep_forever(); /* stays in the rank's process group */
        printf("grandchild %d\n", (int)g);
    }
    announce("ready");
    sleep_forever();
    return 1;
}

/* ---------------------------------------------------------------- output */

/* Writes s in three pieces so hintrun has to put lines back together. */
static void write_pieces(int fd, const char *s, size_t n)
{
    size_t a = n / 3, b = 2 * n / 3;
    if (write(fd, s, a) < 0 || write(fd, s + a, b - a) < 0 || write(fd, s + b, n - b) < 0)
        exit(1);
}

static int mode_spam(int lines)
{
    init();
    char line[512];
    for (int i = 0; i < lines; i++) {
        int n = snprintf(line, sizeof line, "rank %d line %d ", info.rank, i);
        int pay = (i * 7 + info.rank) % 200;
        for (int k = 0; k < pay; k++)
            line[n + k] = (char)('a' + (i + k) % 26);
        n += pay;
        line[n++] = '\n';
        write_pieces(1, line, (size_t)n);
        if (i % 10 == 0) {
            n = snprintf(line, sizeof line, "rank %d eline %d\n", info.rank, i);
            write_pieces(2, line, (size_t)n);
        }
    }
    boot_fini(); /* exiting 0 without it fails the job */
    return 0;
}

static int mode_env(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *v = getenv(argv[i]);
        if (v)
            printf("%s=%s\n", argv[i], v);
        else
            printf("%s unset\n", argv[i]);
    }
    char c;
    printf("stdin %s\n", read(0, &c, 1) == 0 ? "eof" : "not eof");
    return 0;
}

static int mode_shm(void)
{
    init();
    make_shm("normal");
    announce("made shm");
    boot_fini();
    return 0;
}

/* Rank 1 leaves without entering the fence that rank 0 waits in: the store must fail the
   fence, and a get that nobody can satisfy, instead of hanging. */
static int mode_orphan(void)
{
    char buf[8];
    size_t len;
    init();
    if (info.rank != 0) {
        boot_fini();
        return 0;
    }
    int st = boot_fence();
    printf("fence %s\n", st == HINT_ERR_BOOTSTRAP ? "failed as expected" : "did not fail");
    st = boot_get("never-put", buf, sizeof buf, &len);
    printf("get %s\n", st == HINT_ERR_BOOTSTRAP ? "failed as expected" : "did not fail");
    boot_fini();
    return 0;
}

/* ---------------------------------------------------------------- raw clients */

/* A store across hosts (hintrun --host): the same refusals over TCP. */
static int raw_connect_tcp(const char *s)
{
    char host[256], port[16];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    if (boot_tcp_split(s + 4, host, sizeof host, port, sizeof port) != 0 ||
        getaddrinfo(host, port, &hints, &ai) != 0)
        fail("bad tcp: HINT_STORE %s", s);
    int fd = socket(ai->ai_family, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)
        fail("connect to %s: %s", s, strerror(errno));
    freeaddrinfo(ai);
    return fd;
}

static int raw_connect(void)
{
    struct sockaddr_un sa;
    socklen_t salen;
    const char *s = getenv("HINT_STORE");
    if (s && strncmp(s, "tcp:", 4) == 0)
        return raw_connect_tcp(s);
    if (!s || strncmp(s, "unix:", 5) != 0 || boot_unix_addr(s + 5, &sa, &salen) != 0)
        fail("no unix: HINT_STORE");
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen) != 0)
        fail("connect: %s", strerror(errno));
    return fd;
}

static void raw_send(int fd, const void *p, size_t n)
{
    if (send(fd, p, n, MSG_NOSIGNAL) != (ssize_t)n)
        fail("raw send: %s", strerror(errno));
}

/* A frame with any header values, the body possibly shorter than the length claims. */
static void raw_frame(int fd, uint32_t magic, uint16_t ver, uint16_t op, uint32_t len,
                      const void *body, size_t blen)
{
    unsigned char h[BOOT_HDR_LEN + 256];
    if (blen > 256)
        fail("raw_frame: body too long for the test");
    boot_put_u32(h, magic);
    boot_put_u16(h + 4, ver);
    boot_put_u16(h + 6, op);
    boot_put_u32(h + 8, len);
    if (blen)
        memcpy(h + BOOT_HDR_LEN, body, blen);
    /* one send: the store may refuse on the header and close before a second one */
    raw_send(fd, h, BOOT_HDR_LEN + blen);
}

static void raw_hello(int fd, uint32_t rank, const char *token)
{
    unsigned char b[8 + BOOT_TOKEN_LEN];
    boot_put_u32(b, rank);
    boot_put_u32(b + 4, (uint32_t)getpid());
    memcpy(b + 8, token, BOOT_TOKEN_LEN);
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_HELLO, sizeof b, b, sizeof b);
}

static int raw_recv_all(int fd, void *p, size_t n)
{
    unsigned char *c = p;
    while (n > 0) {
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        if (poll(&pfd, 1, 5000) != 1)
            fail("no reply from the store within 5 s");
        ssize_t k = recv(fd, c, n, 0);
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads one reply; returns its op, with an ERROR's message in msg. */
static int raw_reply(int fd, char *msg, size_t cap)
{
    unsigned char h[BOOT_HDR_LEN], body[8192];
    struct boot_hdr hd;
    msg[0] = '\0';
    if (raw_recv_all(fd, h, sizeof h))
        fail("connection closed without a reply");
    boot_hdr_decode(h, &hd);
    if (boot_hdr_check(&hd, 0) || hd.len > sizeof body || raw_recv_all(fd, body, hd.len))
        fail("malformed reply from the store");
    if (hd.op == BOOT_OP_ERROR && hd.len >= 6) {
        size_t ml = boot_get_u16(body + 4);
        snprintf(msg, cap, "%.*s", (int)(ml < hd.len - 6 ? ml : hd.len - 6), body + 6);
    }
    return hd.op;
}

/* Expects an ERROR reply mentioning want, then the store closing the connection. */
static void raw_expect_refusal(int fd, const char *want, const char *what)
{
    char msg[256], c;
    int op = raw_reply(fd, msg, sizeof msg);
    if (op != BOOT_OP_ERROR || !strstr(msg, want))
        fail("%s: expected an ERROR with '%s', got %s '%s'", what, want, boot_op_name(op), msg);
    if (raw_recv_all(fd, &c, 1) == 0)
        fail("%s: the store kept the connection open", what);
    close(fd);
    printf("raw: %s refused: %s\n", what, msg);
}

static void raw_expect_ok(int fd, const char *what)
{
    char msg[256];
    int op = raw_reply(fd, msg, sizeof msg);
    if (op != BOOT_OP_OK)
        fail("%s: expected OK, got %s '%s'", what, boot_op_name(op), msg);
}

/* A connection that has said a good HELLO. */
static int raw_authed(void)
{
    int fd = raw_connect();
    raw_hello(fd, (uint32_t)info.rank, getenv("HINT_TOKEN"));
    raw_expect_ok(fd, "HELLO");
    return fd;
}

static void raw_unauthenticated(void)
{
    int fd = raw_connect();
    raw_hello(fd, (uint32_t)info.rank, "0123456789abcdef0123456789abcdef");
    raw_expect_refusal(fd, "wrong job token", "wrong token");
    fd = raw_connect();
    raw_send(fd, "GET / HTTP/1.0\r\n\r\n", 18);
    raw_expect_refusal(fd, "bad magic", "garbage");
    fd = raw_connect();
    raw_frame(fd, BOOT_PROTO_MAGIC, 7, BOOT_OP_HELLO, 40, NULL, 0);
    raw_expect_refusal(fd, "version", "other version");
    fd = raw_connect();
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_HELLO, 0xfffffff0u, NULL, 0);
    raw_expect_refusal(fd, "too long", "4 GiB HELLO");
    fd = raw_connect();
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_PUT, 20, "0123456789abcdefghij",
              20);
    raw_expect_refusal(fd, "HELLO", "PUT before HELLO");
    fd = raw_connect();
    raw_hello(fd, (uint32_t)info.size, getenv("HINT_TOKEN"));
    raw_expect_refusal(fd, "rank outside", "rank out of range");
    close(raw_connect()); /* a client that leaves at once */
    fd = raw_connect();
    raw_send(fd, "HINB\x01", 5); /* and one that leaves mid-header */
    close(fd);
}

static void raw_authenticated(void)
{
    unsigned char b[64];
    int fd = raw_authed();
    boot_put_u16(b, 300); /* key length beyond the body */
    memcpy(b + 2, "shortkey", 8);
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_PUT, 10, b, 10);
    raw_expect_refusal(fd, "malformed PUT", "PUT with a bad key length");
    fd = raw_authed();
    boot_put_u16(b, 0);
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_GET, 2, b, 2);
    raw_expect_refusal(fd, "malformed GET", "GET of an empty key");
    fd = raw_authed();
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, 42, 0, NULL, 0);
    raw_expect_refusal(fd, "unknown operation", "unknown op");
    fd = raw_authed();
    boot_put_u32(b, 5);
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_FENCE, 4, b, 4);
    raw_expect_refusal(fd, "out of sequence", "fence 5 first");
    fd = raw_authed();
    raw_hello(fd, (uint32_t)info.rank, getenv("HINT_TOKEN"));
    raw_expect_refusal(fd, "second HELLO", "second HELLO");
    fd = raw_authed(); /* a good client that says BYE */
    raw_frame(fd, BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_BYE, 0, NULL, 0);
    raw_expect_ok(fd, "BYE");
    close(fd);
}

static int mode_raw(void)
{
    info.rank = atoi(getenv("HINT_RANK") ? getenv("HINT_RANK") : "0");
    info.size = atoi(getenv("HINT_SIZE") ? getenv("HINT_SIZE") : "1");
    raw_unauthenticated();
    raw_authenticated();
    /* the store survived all that: the real client still works */
    init();
    int fd = raw_connect();
    raw_hello(fd, (uint32_t)info.rank, getenv("HINT_TOKEN"));
    raw_expect_refusal(fd, "already has an open connection", "second connection of a rank");
    char key[32], got[32];
    size_t len;
    snprintf(key, sizeof key, "raw%d", info.rank);
    put(key, "alive", 5);
    fence();
    snprintf(key, sizeof key, "raw%d", (info.rank + 1) % info.size);
    if (boot_get(key, got, sizeof got, &len) || len != 5 || memcmp(got, "alive", 5) != 0)
        fail("get after the raw clients");
    boot_fini();
    printf("raw ok rank %d\n", info.rank);
    return 0;
}

/* Random frames (a fixed seed per rank) on many connections, authenticated or not, cut off at
   random points. FENCE and ABORT are left out after a good HELLO: well-formed ones would change
   the job itself. The store must survive it all and still serve the real client. */
static void fuzz_connection(unsigned *seed)
{
    unsigned char b[BOOT_HDR_LEN + 256];
    int fd = raw_connect();
    int authed = rand_r(seed) % 2;
    if (authed)
        raw_hello(fd, (uint32_t)info.rank, getenv("HINT_TOKEN"));
    for (int f = 0, nf = 1 + rand_r(seed) % 4; f < nf; f++) {
        uint16_t op = (uint16_t)(rand_r(seed) % 70);
        if (authed && (op == BOOT_OP_FENCE || op == BOOT_OP_ABORT))
            op = BOOT_OP_GET;
        uint32_t len = (uint32_t)rand_r(seed);
        if (rand_r(seed) % 8)
            len %= 300; /* mostly plausible lengths, sometimes anything */
        size_t blen = (size_t)(rand_r(seed) % 257);
        for (size_t i = 0; i < blen; i++)
            b[BOOT_HDR_LEN + i] = (unsigned char)rand_r(seed);
        boot_put_u32(b, rand_r(seed) % 16 ? BOOT_PROTO_MAGIC : (uint32_t)rand_r(seed));
        boot_put_u16(b + 4, (uint16_t)(rand_r(seed) % 16 ? BOOT_PROTO_VERSION : 2));
        boot_put_u16(b + 6, op);
        boot_put_u32(b + 8, len);
        size_t n = BOOT_HDR_LEN + blen;
        if (rand_r(seed) % 4 == 0)
            n = (size_t)rand_r(seed) % n; /* cut off mid-frame */
        if (send(fd, b, n, MSG_NOSIGNAL) < 0)
            break; /* the store closed on us: that is allowed */
    }
    close(fd);
}

static int mode_fuzz(int iterations)
{
    const char *base = getenv("LT_FUZZ_SEED"); /* to explore by hand; the test uses 12345 */
    unsigned seed = (base ? (unsigned)atoi(base) : 12345u) +
                    (unsigned)atoi(getenv("HINT_RANK") ? getenv("HINT_RANK") : "0");
    info.rank = atoi(getenv("HINT_RANK") ? getenv("HINT_RANK") : "0");
    for (int i = 0; i < iterations; i++)
        fuzz_connection(&seed);
    init();
    char key[32], got[32];
    size_t len;
    snprintf(key, sizeof key, "fuzz%d", info.rank);
    put(key, "alive", 5);
    fence();
    snprintf(key, sizeof key, "fuzz%d", (info.rank + 1) % info.size);
    if (boot_get(key, got, sizeof got, &len) || len != 5 || memcmp(got, "alive", 5) != 0)
        fail("get after fuzzing");
    boot_fini();
    printf("fuzz ok rank %d\n", info.rank);
    return 0;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    const char *m = argc > 1 ? argv[1] : "";
    int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
    if (strcmp(m, "kv") == 0)
        return mode_kv(a > 0 ? a : 1);
    if (strcmp(m, "exit") == 0)
        return mode_exit(a, b);
    if (strcmp(m, "crash") == 0)
        return mode_crash(a, b);
    if (strcmp(m, "abort") == 0)
        return mode_abort(a, b, argc > 4 ? argv[4] : NULL);
    if (strcmp(m, "sleep") == 0)
        return mode_sleep(argc > 2 ? argv[2] : "");
    if (strcmp(m, "spam") == 0)
        return mode_spam(a);
    if (strcmp(m, "env") == 0)
        return mode_env(argc - 2, argv + 2);
    if (strcmp(m, "shm") == 0)
        return mode_shm();
    if (strcmp(m, "partial") == 0) {
        printf("no newline");
        return 0;
    }
    if (strcmp(m, "orphan") == 0)
        return mode_orphan();
    if (strcmp(m, "raw") == 0)
        return mode_raw();
    if (strcmp(m, "fuzz") == 0)
        return mode_fuzz(a);
    fprintf(stderr, "lt_rank: unknown mode '%s'\n", m);
    return 2;
}
