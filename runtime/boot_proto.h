/*
 * runtime/boot_proto.h — wire protocol of the bootstrap store, shared by hintrun (server) and
 * libhint (client, runtime/boot_client.c).
 *
 * The protocol is a byte stream of frames, so it runs unchanged over a Unix socket today and
 * over TCP between hosts later: no pointers, no native struct layout, every integer explicitly
 * little-endian, a version in every frame, and hard limits checked before any allocation.
 *
 * Frame = 12-byte header + body:
 *   u32 magic    BOOT_PROTO_MAGIC ("HINB" on the wire)
 *   u16 version  BOOT_PROTO_VERSION; a peer speaking another version is refused
 *   u16 op       enum boot_op
 *   u32 len      body bytes that follow (checked against the op's limit before reading them)
 *
 * Bodies (client -> server):
 *   HELLO  u32 rank, u32 pid, u8 token[32]   must be the first frame; token = HINT_TOKEN
 *   PUT    u16 klen, key[klen], u32 vlen, val[vlen]
 *   GET    u16 klen, key[klen]               reply deferred until the key exists
 *   FENCE  u32 seq                           1 for the first fence of the rank, then 2, ...
 *   ABORT  i32 code, u16 mlen, msg[mlen]
 *   BYE    (empty)                           hint_finalize (boot_fini): hintrun counts a rank
 *                                            that said HELLO and exits without BYE as failed
 *   AGENT  u32 node, u32 pid, u8 token[32]   instead of HELLO: the agent of host `node`
 *                                            (hintrun --agent, launcher/agent.c), not a rank
 *   EXITED u32 rank, u32 pid, u32 how, u32 status   agents only: a rank of theirs has exited
 *                                            (how: BOOT_EXIT_*; status: exit code or signal)
 * Replies (server -> client), exactly one per request, in request order:
 *   OK     (empty)                           HELLO, PUT, FENCE, ABORT, BYE
 *   VALUE  u32 vlen, val[vlen]               GET
 *   ERROR  u32 status (HINT_ERR_*), u16 mlen, msg[mlen]; the server may close afterwards
 * Keys are 1..255 bytes of any value except NUL; values 0..1 MiB.
 * The store listens on an abstract Unix socket ("unix:@name") and, for jobs across hosts, on TCP
 * ("tcp:HOST:PORT", "tcp:[IPv6]:PORT"); the token authenticates every connection on both.
 */
#ifndef HINT_RUNTIME_BOOT_PROTO_H
#define HINT_RUNTIME_BOOT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/un.h>

#define BOOT_PROTO_MAGIC 0x424e4948u /* bytes 'H' 'I' 'N' 'B' */
#define BOOT_PROTO_VERSION 1u
#define BOOT_HDR_LEN 12u
#define BOOT_TOKEN_LEN 32u           /* hex digits */
#define BOOT_JOBID_LEN 16u           /* hex digits */
#define BOOT_KEY_MAX 255u
#define BOOT_VAL_MAX (1u << 20)
#define BOOT_MSG_MAX 4096u           /* abort and error messages */
/* Largest body of any frame: a PUT with the longest key and value. */
#define BOOT_BODY_MAX (2u + BOOT_KEY_MAX + 4u + BOOT_VAL_MAX)

enum boot_op {
    BOOT_OP_HELLO = 1,
    BOOT_OP_PUT = 2,
    BOOT_OP_GET = 3,
    BOOT_OP_FENCE = 4,
    BOOT_OP_ABORT = 5,
    BOOT_OP_BYE = 6,
    BOOT_OP_AGENT = 7,
    BOOT_OP_EXITED = 8,
    BOOT_OP_OK = 64,
    BOOT_OP_VALUE = 65,
    BOOT_OP_ERROR = 66,
};

/* EXITED's how */
enum boot_exit_how { BOOT_EXIT_STATUS = 0, BOOT_EXIT_SIGNAL = 1, BOOT_EXIT_CORE = 2 };

struct boot_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t op;
    uint32_t len;
};

/* A growable output buffer; on allocation failure it sets failed and ignores further writes,
   so a whole frame can be built and the failure checked once. */
struct boot_buf {
    unsigned char *data;
    size_t len, cap;
    int failed;
};

/* A bounds-checked reader over a received body; a read past the end sets bad. */
struct boot_rd {
    const unsigned char *p;
    size_t len, off;
    int bad;
};

void boot_put_u16(unsigned char *p, uint16_t v);
void boot_put_u32(unsigned char *p, uint32_t v);
uint16_t boot_get_u16(const unsigned char *p);
uint32_t boot_get_u32(const unsigned char *p);

void boot_buf_add(struct boot_buf *b, const void *p, size_t n);
void boot_buf_u16(struct boot_buf *b, uint16_t v);
void boot_buf_u32(struct boot_buf *b, uint32_t v);
void boot_buf_free(struct boot_buf *b);
/* Starts a frame of this op; boot_frame_end fills in its body length. */
void boot_frame_begin(struct boot_buf *b, enum boot_op op);
void boot_frame_end(struct boot_buf *b, size_t frame_start);

void boot_hdr_decode(const unsigned char raw[BOOT_HDR_LEN], struct boot_hdr *h);
/* Checks magic, version, that op is one a client (to_server = 1) or server may send, and that
   len is within that op's limit. Returns NULL when valid, else a message saying what is wrong. */
const char *boot_hdr_check(const struct boot_hdr *h, int to_server);
/* Upper bound on the body of op, used by boot_hdr_check. */
size_t boot_op_body_max(enum boot_op op);
const char *boot_op_name(unsigned op);

uint16_t boot_rd_u16(struct boot_rd *r);
uint32_t boot_rd_u32(struct boot_rd *r);
/* Returns a pointer to the next n bytes inside the body (not copied), NULL when too short. */
const unsigned char *boot_rd_bytes(struct boot_rd *r, size_t n);

/* 1 if key is a valid store key: 1..BOOT_KEY_MAX bytes, no NUL inside. */
int boot_key_valid(const unsigned char *key, size_t len);
/* 1 if s holds exactly n lowercase or uppercase hex digits. */
int boot_is_hex(const char *s, size_t n);
/* Exit status of a job aborted with code: code itself when in 1..255, else 1 (an abort is never
   a success, and exit statuses are 8 bits). */
int boot_abort_status(int code);
/* The socket address of a store path: "/path" is a socket file, "@name" a Linux abstract
   socket (no file at all, gone with the last descriptor: nothing to clean up even after a
   SIGKILL). Returns 0 with *len the address length to bind or connect with, -1 when path is
   empty or longer than a sockaddr_un holds. */
int boot_unix_addr(const char *path, struct sockaddr_un *sa, socklen_t *len);
/* Splits "HOST:PORT" or "[IPv6]:PORT" (the part after "tcp:") into host and port strings.
   Returns 0, or -1 when either part is missing or too long for its buffer. */
int boot_tcp_split(const char *addr, char *host, size_t hcap, char *port, size_t pcap);
/* One connect of fd (a fresh stream socket) to sa, waited for at most ms milliseconds, so an
   unreachable address is an error within that time, not a hang. Returns 0 or an errno value
   (ETIMEDOUT after ms). Used by the ranks' store client and by hintrun --agent. */
int boot_connect_timeout(int fd, const struct sockaddr *sa, socklen_t salen, int ms);
/* Compares n bytes in time independent of where they differ (for the token). */
int boot_ct_equal(const void *a, const void *b, size_t n);

#endif
