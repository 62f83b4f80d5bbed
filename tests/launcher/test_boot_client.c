/*
 * tests/launcher/test_boot_client.c — the bootstrap client in-process: singleton mode,
 * environment validation, argument checks, the frame helpers, and a fake store that vanishes
 * (every blocking call must then fail with HINT_ERR_BOOTSTRAP, never hang). Criterion runs each
 * test in its own process, so setenv and the client's static state do not leak between tests.
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot.h"
#include "runtime/boot_proto.h"

#define TOKEN "00112233445566778899aabbccddeeff"

static void clear_env(void)
{
    const char *names[] = {"HINT_RANK", "HINT_SIZE", "HINT_LOCAL_RANK", "HINT_LOCAL_SIZE",
        "HINT_NODE_ID", "HINT_NNODES", "HINT_JOBID", "HINT_STORE", "HINT_TOKEN",
        "HINT_OVERSUBSCRIBED", "HINT_LAUNCHER_PID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        unsetenv(names[i]);
}

/* A complete, valid rank environment pointing at store path. */
static void good_env(const char *store)
{
    clear_env();
    setenv("HINT_RANK", "1", 1);
    setenv("HINT_SIZE", "2", 1);
    setenv("HINT_LOCAL_RANK", "1", 1);
    setenv("HINT_LOCAL_SIZE", "2", 1);
    setenv("HINT_NODE_ID", "0", 1);
    setenv("HINT_NNODES", "1", 1);
    setenv("HINT_JOBID", "0123456789abcdef", 1);
    setenv("HINT_STORE", store, 1);
    setenv("HINT_TOKEN", TOKEN, 1);
    setenv("HINT_OVERSUBSCRIBED", "0", 1);
    setenv("HINT_LAUNCHER_PID", "1", 1);
}

Test(boot_client, before_init)
{
    size_t len;
    char b[4];
    cr_expect_eq(boot_put("k", "v", 1), HINT_ERR_NOT_INITIALIZED);
    cr_expect_eq(boot_get("k", b, sizeof b, &len), HINT_ERR_NOT_INITIALIZED);
    cr_expect_eq(boot_fence(), HINT_ERR_NOT_INITIALIZED);
    boot_fini(); /* harmless */
}

Test(boot_client, singleton)
{
    struct boot_info info;
    char buf[8];
    size_t len = 0;
    clear_env();
    cr_assert_eq(boot_init(&info), HINT_SUCCESS);
    cr_expect(info.singleton);
    cr_expect_eq(info.rank, 0);
    cr_expect_eq(info.size, 1);
    cr_expect_eq(info.local_size, 1);
    cr_expect_eq(info.nnodes, 1);
    cr_expect_eq(strlen(info.jobid), 16);
    cr_expect(boot_is_hex(info.jobid, 16), "jobid %s", info.jobid);
    cr_expect_eq(boot_put("addr", "abc", 3), HINT_SUCCESS);
    cr_expect_eq(boot_put("addr", "abcd", 4), HINT_SUCCESS); /* replaced */
    cr_expect_eq(boot_get("addr", buf, sizeof buf, &len), HINT_SUCCESS);
    cr_expect_eq(len, 4);
    cr_expect_eq(memcmp(buf, "abcd", 4), 0);
    cr_expect_eq(boot_get("addr", buf, 2, &len), HINT_ERR_TRUNCATE);
    cr_expect_eq(len, 4);
    cr_expect_eq(boot_get("missing", buf, sizeof buf, &len), HINT_ERR_BOOTSTRAP);
    cr_expect_eq(boot_fence(), HINT_SUCCESS);
    boot_fini();
    cr_expect_eq(boot_put("k", "v", 1), HINT_ERR_NOT_INITIALIZED);
}

Test(boot_client, bad_arguments)
{
    struct boot_info info;
    char longkey[300];
    size_t len;
    clear_env();
    cr_expect_eq(boot_init(NULL), HINT_ERR_ARG);
    cr_assert_eq(boot_init(&info), HINT_SUCCESS);
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    cr_expect_eq(boot_put(NULL, "v", 1), HINT_ERR_ARG);
    cr_expect_eq(boot_put("", "v", 1), HINT_ERR_ARG);
    cr_expect_eq(boot_put(longkey, "v", 1), HINT_ERR_ARG);
    longkey[255] = '\0';
    cr_expect_eq(boot_put(longkey, "v", 1), HINT_SUCCESS); /* 255 bytes is the limit */
    cr_expect_eq(boot_put("k", NULL, 1), HINT_ERR_ARG);
    cr_expect_eq(boot_put("k", NULL, 0), HINT_SUCCESS);
    cr_expect_eq(boot_put("k", "v", BOOT_VAL_MAX + 1), HINT_ERR_ARG);
    cr_expect_eq(boot_get("k", NULL, 4, &len), HINT_ERR_ARG);
    cr_expect_eq(boot_get("k", NULL, 0, NULL), HINT_ERR_ARG);
    cr_expect_eq(boot_get("k", NULL, 0, &len), HINT_SUCCESS);
    cr_expect_eq(len, 0);
    boot_fini();
}

/* One malformed variable at a time: boot_init fails cleanly with HINT_ERR_BOOTSTRAP. */
Test(boot_client, malformed_environment)
{
    const char *cases[][2] = {
        {"HINT_RANK", "abc"}, {"HINT_RANK", "2"}, {"HINT_RANK", "-1"}, {"HINT_RANK", ""},
        {"HINT_SIZE", "0"}, {"HINT_SIZE", "99999999999"}, {"HINT_LOCAL_RANK", "5"},
        {"HINT_LOCAL_SIZE", "3"}, {"HINT_NODE_ID", "1"}, {"HINT_NNODES", "x"},
        {"HINT_JOBID", "0123"}, {"HINT_JOBID", "0123456789abcdeg"}, {"HINT_TOKEN", "short"},
        {"HINT_OVERSUBSCRIBED", "2"}, {"HINT_LAUNCHER_PID", "0"}, {"HINT_STORE", "tcp:no-port"},
        {"HINT_STORE", "tcp:[::1"}, {"HINT_STORE", "tcp:127.0.0.1:"},
        {"HINT_STORE", "unix:"}, {"HINT_STORE", "/no/prefix"},
        {"HINT_STORE", "unix:/nonexistent/hint-store"}, {"HINT_STORE", "unix:@"},
        {"HINT_STORE", "unix:@hint-no-such-abstract-store"},
        {"HINT_TOKEN", NULL}, {"HINT_SIZE", NULL}, {"HINT_LAUNCHER_PID", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct boot_info info;
        good_env("unix:/nonexistent/hint-store");
        if (cases[i][1])
            setenv(cases[i][0], cases[i][1], 1);
        else
            unsetenv(cases[i][0]);
        cr_expect_eq(boot_init(&info), HINT_ERR_BOOTSTRAP, "%s='%s' accepted", cases[i][0],
                     cases[i][1] ? cases[i][1] : "(unset)");
    }
}

/* ---------------------------------------------------------------- a fake store */

struct fake {
    char dir[64], path[128];
    int listen_fd;
    int replies;   /* requests to answer with OK (HELLO included) before hanging up */
};

static int read_frame(int fd, struct boot_hdr *h, unsigned char *body, size_t cap)
{
    unsigned char raw[BOOT_HDR_LEN];
    if (recv(fd, raw, sizeof raw, MSG_WAITALL) != (ssize_t)sizeof raw)
        return -1;
    boot_hdr_decode(raw, h);
    if (boot_hdr_check(h, 1) || h->len > cap)
        return -1;
    if (h->len && recv(fd, body, h->len, MSG_WAITALL) != (ssize_t)h->len)
        return -1;
    return 0;
}

static void *fake_serve(void *arg)
{
    struct fake *f = arg;
    int fd = accept(f->listen_fd, NULL, NULL);
    static unsigned char body[BOOT_BODY_MAX];
    for (int i = 0; fd >= 0 && i < f->replies; i++) {
        struct boot_hdr h;
        if (read_frame(fd, &h, body, sizeof body))
            break;
        struct boot_buf b = {0};
        boot_frame_begin(&b, BOOT_OP_OK);
        boot_frame_end(&b, 0);
        if (send(fd, b.data, b.len, MSG_NOSIGNAL) < 0)
            break;
        boot_buf_free(&b);
    }
    if (fd >= 0) {
        struct boot_hdr h;
        (void)read_frame(fd, &h, body, sizeof body); /* the request left unanswered */
        close(fd);
    }
    return NULL;
}

static void fake_start(struct fake *f, pthread_t *t)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char store[160];
    snprintf(f->dir, sizeof f->dir, "/tmp/hint-lt-XXXXXX");
    cr_assert(mkdtemp(f->dir));
    snprintf(f->path, sizeof f->path, "%s/s", f->dir);
    cr_assert_lt(strlen(f->path), sizeof sa.sun_path);
    memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
    f->listen_fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert(f->listen_fd >= 0 && bind(f->listen_fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
              listen(f->listen_fd, 4) == 0);
    snprintf(store, sizeof store, "unix:%s", f->path);
    good_env(store);
    cr_assert_eq(pthread_create(t, NULL, fake_serve, f), 0);
}

static void fake_stop(struct fake *f, pthread_t t)
{
    pthread_join(t, NULL);
    close(f->listen_fd);
    unlink(f->path);
    rmdir(f->dir);
}

/* The store answers HELLO (and `ok` more requests), then vanishes mid-request. */
static void vanish_case(int ok, int which)
{
    struct fake f = {.replies = 1 + ok};
    pthread_t t;
    struct boot_info info;
    char buf[8];
    size_t len;
    fake_start(&f, &t);
    cr_assert_eq(boot_init(&info), HINT_SUCCESS);
    cr_expect_eq(info.rank, 1);
    cr_expect_eq(info.size, 2);
    cr_expect_str_eq(info.jobid, "0123456789abcdef");
    cr_expect_not(info.singleton);
    for (int i = 0; i < ok; i++)
        cr_expect_eq(boot_put("k", "v", 1), HINT_SUCCESS);
    int st = which == 0 ? boot_get("k", buf, sizeof buf, &len)
           : which == 1 ? boot_fence()
                        : boot_put("k", "v", 1);
    cr_expect_eq(st, HINT_ERR_BOOTSTRAP, "call %d after the store vanished: %d", which, st);
    /* and every later call fails at once */
    cr_expect_eq(boot_put("k", "v", 1), HINT_ERR_BOOTSTRAP);
    cr_expect_eq(boot_fence(), HINT_ERR_BOOTSTRAP);
    boot_fini();
    fake_stop(&f, t);
}

Test(boot_client, store_vanishes_in_get, .timeout = 20) { vanish_case(1, 0); }
Test(boot_client, store_vanishes_in_fence, .timeout = 20) { vanish_case(0, 1); }
Test(boot_client, store_vanishes_in_put, .timeout = 20) { vanish_case(2, 2); }

/* ---------------------------------------------------------------- frame helpers */

Test(boot_proto, header_checks)
{
    struct boot_hdr h = {BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_GET, 10};
    cr_expect_null(boot_hdr_check(&h, 1));
    cr_expect_not_null(boot_hdr_check(&h, 0)); /* a request is no reply */
    h.len = 2 + BOOT_KEY_MAX + 1;
    cr_expect_not_null(boot_hdr_check(&h, 1));
    h = (struct boot_hdr){BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_PUT, BOOT_BODY_MAX};
    cr_expect_null(boot_hdr_check(&h, 1));
    h.len = BOOT_BODY_MAX + 1;
    cr_expect_not_null(boot_hdr_check(&h, 1));
    h = (struct boot_hdr){BOOT_PROTO_MAGIC + 1, BOOT_PROTO_VERSION, BOOT_OP_BYE, 0};
    cr_expect_not_null(boot_hdr_check(&h, 1));
    h = (struct boot_hdr){BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION + 1, BOOT_OP_BYE, 0};
    cr_expect_not_null(boot_hdr_check(&h, 1));
    h = (struct boot_hdr){BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, 0, 0};
    cr_expect_not_null(boot_hdr_check(&h, 1));
    h = (struct boot_hdr){BOOT_PROTO_MAGIC, BOOT_PROTO_VERSION, BOOT_OP_VALUE, 4};
    cr_expect_null(boot_hdr_check(&h, 0));
}

Test(boot_proto, encode_decode)
{
    struct boot_buf b = {0};
    boot_frame_begin(&b, BOOT_OP_PUT);
    boot_buf_u16(&b, 3);
    boot_buf_add(&b, "key", 3);
    boot_buf_u32(&b, 0xdeadbeef);
    boot_frame_end(&b, 0);
    cr_assert_not(b.failed);
    cr_assert_eq(b.len, BOOT_HDR_LEN + 9);
    /* explicit little-endian on the wire, whatever the host */
    cr_expect_eq(memcmp(b.data, "HINB", 4), 0);
    cr_expect_eq(b.data[8], 9);
    cr_expect_eq(b.data[BOOT_HDR_LEN + 5], 0xef);
    struct boot_hdr h;
    boot_hdr_decode(b.data, &h);
    cr_expect_eq(h.op, BOOT_OP_PUT);
    cr_expect_eq(h.len, 9);
    struct boot_rd r = {.p = b.data + BOOT_HDR_LEN, .len = h.len};
    cr_expect_eq(boot_rd_u16(&r), 3);
    cr_expect_eq(memcmp(boot_rd_bytes(&r, 3), "key", 3), 0);
    cr_expect_eq(boot_rd_u32(&r), 0xdeadbeef);
    cr_expect_not(r.bad);
    cr_expect_null(boot_rd_bytes(&r, 1)); /* past the end */
    cr_expect(r.bad);
    boot_buf_free(&b);
}

Test(boot_proto, small_helpers)
{
    cr_expect(boot_key_valid((const unsigned char *)"a", 1));
    cr_expect_not(boot_key_valid((const unsigned char *)"a\0b", 3));
    cr_expect_not(boot_key_valid((const unsigned char *)"", 0));
    cr_expect(boot_is_hex("09afAF", 6));
    cr_expect_not(boot_is_hex("09afAF0", 6));
    cr_expect_not(boot_is_hex("09afg", 5));
    cr_expect(boot_ct_equal("abcd", "abcd", 4));
    cr_expect_not(boot_ct_equal("abcd", "abce", 4));
    cr_expect_eq(boot_abort_status(3), 3);
    cr_expect_eq(boot_abort_status(0), 1);
    cr_expect_eq(boot_abort_status(256), 1);
    cr_expect_eq(boot_abort_status(-5), 1);
}

/* Store addresses: a path is a socket file; "@name" an abstract socket whose address length
   covers exactly the name (a longer one would name another socket). */
Test(boot_client, unix_addresses)
{
    struct sockaddr_un sa;
    socklen_t len;
    cr_assert_eq(boot_unix_addr("@hint-0-abc", &sa, &len), 0);
    cr_expect_eq(sa.sun_path[0], '\0');
    cr_expect_eq(memcmp(sa.sun_path + 1, "hint-0-abc", 10), 0);
    cr_expect_eq(len, offsetof(struct sockaddr_un, sun_path) + 11);
    cr_assert_eq(boot_unix_addr("/tmp/x/store", &sa, &len), 0);
    cr_expect_str_eq(sa.sun_path, "/tmp/x/store");
    cr_expect_eq(len, sizeof sa);
    char longp[200];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    cr_expect_eq(boot_unix_addr(longp, &sa, &len), -1);
    cr_expect_eq(boot_unix_addr("", &sa, &len), -1);
    cr_expect_eq(boot_unix_addr("@", &sa, &len), -1);
}
