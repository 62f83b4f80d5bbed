/* runtime/boot_proto.c — encoding, decoding and checks of bootstrap store frames (see
   boot_proto.h). Compiled into libhint and into hintrun, so it depends on nothing else. */
#include "runtime/boot_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

void boot_put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

void boot_put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    p[2] = (unsigned char)(v >> 16);
    p[3] = (unsigned char)(v >> 24);
}

uint16_t boot_get_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | (unsigned)p[1] << 8);
}

uint32_t boot_get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static int buf_reserve(struct boot_buf *b, size_t n)
{
    if (b->failed)
        return 0;
    if (n > SIZE_MAX - b->len) {
        b->failed = 1;
        return 0;
    }
    if (b->len + n <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < b->len + n)
        cap *= 2;
    unsigned char *d = realloc(b->data, cap);
    if (!d) {
        b->failed = 1;
        return 0;
    }
    b->data = d;
    b->cap = cap;
    return 1;
}

void boot_buf_add(struct boot_buf *b, const void *p, size_t n)
{
    if (n == 0 || !buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

void boot_buf_u16(struct boot_buf *b, uint16_t v)
{
    unsigned char raw[2];
    boot_put_u16(raw, v);
    boot_buf_add(b, raw, sizeof raw);
}

void boot_buf_u32(struct boot_buf *b, uint32_t v)
{
    unsigned char raw[4];
    boot_put_u32(raw, v);
    boot_buf_add(b, raw, sizeof raw);
}

void boot_buf_free(struct boot_buf *b)
{
    free(b->data);
    *b = (struct boot_buf){0};
}

void boot_frame_begin(struct boot_buf *b, enum boot_op op)
{
    boot_buf_u32(b, BOOT_PROTO_MAGIC);
    boot_buf_u16(b, BOOT_PROTO_VERSION);
    boot_buf_u16(b, (uint16_t)op);
    boot_buf_u32(b, 0); /* body length, patched by boot_frame_end */
}

void boot_frame_end(struct boot_buf *b, size_t frame_start)
{
    if (b->failed || b->len < frame_start + BOOT_HDR_LEN)
        return;
    boot_put_u32(b->data + frame_start + 8, (uint32_t)(b->len - frame_start - BOOT_HDR_LEN));
}

void boot_hdr_decode(const unsigned char raw[BOOT_HDR_LEN], struct boot_hdr *h)
{
    h->magic = boot_get_u32(raw);
    h->version = boot_get_u16(raw + 4);
    h->op = boot_get_u16(raw + 6);
    h->len = boot_get_u32(raw + 8);
}

size_t boot_op_body_max(enum boot_op op)
{
    switch (op) {
    case BOOT_OP_HELLO: return 8 + BOOT_TOKEN_LEN;
    case BOOT_OP_PUT: return BOOT_BODY_MAX;
    case BOOT_OP_GET: return 2 + BOOT_KEY_MAX;
    case BOOT_OP_FENCE: return 4;
    case BOOT_OP_ABORT: return 4 + 2 + BOOT_MSG_MAX;
    case BOOT_OP_BYE: return 0;
    case BOOT_OP_AGENT: return 8 + BOOT_TOKEN_LEN;
    case BOOT_OP_EXITED: return 16;
    case BOOT_OP_OK: return 0;
    case BOOT_OP_VALUE: return 4 + BOOT_VAL_MAX;
    case BOOT_OP_ERROR: return 4 + 2 + BOOT_MSG_MAX;
    }
    return 0;
}

const char *boot_op_name(unsigned op)
{
    switch (op) {
    case BOOT_OP_HELLO: return "HELLO";
    case BOOT_OP_PUT: return "PUT";
    case BOOT_OP_GET: return "GET";
    case BOOT_OP_FENCE: return "FENCE";
    case BOOT_OP_ABORT: return "ABORT";
    case BOOT_OP_BYE: return "BYE";
    case BOOT_OP_AGENT: return "AGENT";
    case BOOT_OP_EXITED: return "EXITED";
    case BOOT_OP_OK: return "OK";
    case BOOT_OP_VALUE: return "VALUE";
    case BOOT_OP_ERROR: return "ERROR";
    }
    return "unknown";
}

static int op_is_request(unsigned op)
{
    return op >= BOOT_OP_HELLO && op <= BOOT_OP_EXITED;
}

static int op_is_reply(unsigned op)
{
    return op >= BOOT_OP_OK && op <= BOOT_OP_ERROR;
}

const char *boot_hdr_check(const struct boot_hdr *h, int to_server)
{
    if (h->magic != BOOT_PROTO_MAGIC)
        return "bad magic (not a hint bootstrap frame)";
    if (h->version != BOOT_PROTO_VERSION)
        return "unsupported protocol version";
    if (to_server ? !op_is_request(h->op) : !op_is_reply(h->op))
        return "unknown operation";
    if (h->len > boot_op_body_max((enum boot_op)h->op))
        return "frame body too long for its operation";
    return NULL;
}

uint16_t boot_rd_u16(struct boot_rd *r)
{
    const unsigned char *p = boot_rd_bytes(r, 2);
    return p ? boot_get_u16(p) : 0;
}

uint32_t boot_rd_u32(struct boot_rd *r)
{
    const unsigned char *p = boot_rd_bytes(r, 4);
    return p ? boot_get_u32(p) : 0;
}

const unsigned char *boot_rd_bytes(struct boot_rd *r, size_t n)
{
    static const unsigned char empty[1];
    if (r->bad || n > r->len - r->off) {
        r->bad = 1;
        return NULL;
    }
    if (n == 0)
        return empty; /* never NULL + 0, and never NULL for a valid empty read */
    const unsigned char *p = r->p + r->off;
    r->off += n;
    return p;
}

int boot_key_valid(const unsigned char *key, size_t len)
{
    return key && len >= 1 && len <= BOOT_KEY_MAX && !memchr(key, 0, len);
}

int boot_is_hex(const char *s, size_t n)
{
    if (!s)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
            return 0;
    }
    return s[n] == '\0';
}

int boot_abort_status(int code)
{
    return code >= 1 && code <= 255 ? code : 1;
}

int boot_ct_equal(const void *a, const void *b, size_t n)
{
    /* volatile keeps the compiler from turning the loop into an early-exit memcmp */
    const volatile unsigned char *x = a, *y = b;
    unsigned char diff = 0;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned char)(x[i] ^ y[i]);
    return diff == 0;
}

int boot_unix_addr(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
    size_t n = strlen(path);
    *sa = (struct sockaddr_un){.sun_family = AF_UNIX};
    if (n == 0 || (path[0] == '@' && n == 1) || n >= sizeof sa->sun_path)
        return -1;
    memcpy(sa->sun_path, path, n);
    if (path[0] == '@') {
        /* abstract: the name is exactly these bytes after a leading NUL, no terminator */
        sa->sun_path[0] = '\0';
        *len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
    } else {
        *len = (socklen_t)sizeof *sa;
    }
    return 0;
}

int boot_tcp_split(const char *addr, char *host, size_t hcap, char *port, size_t pcap)
{
    const char *h = addr, *colon;
    size_t hlen;
    if (addr[0] == '[') {
        const char *close = strchr(addr, ']');
        if (!close || close[1] != ':')
            return -1;
        h = addr + 1;
        hlen = (size_t)(close - h);
        colon = close + 1;
    } else {
        colon = strrchr(addr, ':');
        if (!colon)
            return -1;
        hlen = (size_t)(colon - addr);
    }
    size_t plen = strlen(colon + 1);
    if (hlen == 0 || hlen >= hcap || plen == 0 || plen >= pcap)
        return -1;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, colon + 1, plen + 1);
    return 0;
}

int boot_connect_timeout(int fd, const struct sockaddr *sa, socklen_t salen, int ms)
{
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int rc = connect(fd, sa, salen), err = rc == 0 ? 0 : errno;
    if (err == EINPROGRESS || err == EINTR) {
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        do
            rc = poll(&p, 1, ms);
        while (rc < 0 && errno == EINTR);
        socklen_t len = sizeof err;
        if (rc == 0)
            err = ETIMEDOUT;
        else if (rc < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
            err = errno;
    }
    fcntl(fd, F_SETFL, fl);
    return err;
}
