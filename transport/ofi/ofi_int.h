/*
 * transport/ofi/ofi_int.h — what fabric.c (set-up, wait object) and p2p.c (the protocol) share:
 * the fabric objects, the operations handed to libfabric and the wire header.
 */
#ifndef HINT_TRANSPORT_OFI_INT_H
#define HINT_TRANSPORT_OFI_INT_H

#include "transport/ofi/ofi_dl.h" /* before the rdma headers: renames what it opens */

#include <assert.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdbool.h>
#include <stdint.h>

struct hint_request_s;

/* Tag space: control messages (eager, ready-to-send, clear-to-send) all carry OFI_TAG_CTRL and
   land in the pre-posted pool (eager ones too large for it: OFI_TAG_LARGE, the large pool); rendezvous data carries OFI_TAG_DATA | id << OFI_CHUNK_BITS |
   chunk, with id unique per receiver (it chose the tag), so it can match nothing else. */
#define OFI_TAG_CTRL 0ull
#define OFI_TAG_LARGE 1ull /* eager messages above HINT_OFI_EAGER_MAX: the large pool (p2p.c) */
#define OFI_TAG_DATA (1ull << 63)
#define OFI_CHUNK_BITS 20

/* OFI_CREDIT: a header alone returning large eager credits (credit.c), outside the sequence. */
enum ofi_kind { OFI_EAGER = 1, OFI_RTS = 2, OFI_CTS = 3, OFI_RTS_READ = 4, OFI_FIN = 5, OFI_CREDIT = 6 };

/* Every control message starts with this; an eager one's payload follows, a RTS / CTS /
   RTS_READ / FIN carries struct ofi_rdv. */
struct ofi_hdr {
    uint32_t src;   /* world rank of the sender */
    uint8_t kind;   /* enum ofi_kind */
    uint8_t credits; /* any kind: large eager credits the sender returns to this rank (credit.c) */
    uint8_t pad[2];
    int32_t tag;    /* EAGER / RTS / RTS_READ: the message's tag */
    uint32_t ctx;   /* EAGER / RTS / RTS_READ: its group's context id */
    uint64_t bytes; /* EAGER / RTS / RTS_READ: the message's bytes; CTS / FIN: the bytes taken */
    uint32_t seq;   /* control messages from src to this rank, numbered from 0 (order check) */
    int32_t sig;    /* EAGER / RTS / RTS_READ: the datatype signature kind */
};
static_assert(sizeof(struct ofi_hdr) == 32, "the wire header is 32 bytes");

struct ofi_rdv {
    uint64_t cookie; /* the sender's request, echoed back in the CTS / FIN */
    uint64_t msgid;  /* the sender's id for it (checks the cookie) */
    uint64_t rtag;   /* CTS: the tag the receiver posted its data receives with */
    uint64_t raddr;  /* RTS_READ: where the receiver reads from (0 = the region's start unless
                        the provider wants virtual addresses, FI_MR_VIRT_ADDR) */
    uint64_t rkey;   /* RTS_READ: the sender's registration key */
};

enum ofi_op_type {
    OP_RX = 1,  /* a pool buffer posted for control messages (or held as an unexpected one) */
    OP_TX,      /* a control message leaving from a send slot */
    OP_COPY,    /* an unexpected control message copied out of the pool (malloc'd) */
    OP_DATA_TX, /* one chunk of rendezvous data leaving */
    OP_DATA_RX, /* one chunk of rendezvous data arriving */
    OP_READ,    /* one chunk of a message read from the sender's memory (fi_read) */
};

/* One operation handed to libfabric; its address is the completion's op_context. */
struct ofi_op {
    struct fi_context2 fctx; /* the provider's scratch (FI_CONTEXT / FI_CONTEXT2 modes) */
    uint8_t type;            /* enum ofi_op_type */
    uint8_t pool;            /* OP_RX: its pool (0 control, 1 large) */
    struct ofi_op *next;     /* free list, retry queue, out-of-order hold list */
    struct hint_request_s *r; /* OP_TX (eager / RTS / CTS) and data ops: the request */
    char *buf;               /* message or chunk memory */
    size_t len;
    void *desc;              /* its registration's descriptor (NULL when none is needed) */
    fi_addr_t addr;          /* send: the destination */
    uint64_t tag;            /* data ops: the tag; OP_READ: the remote key */
    uint64_t raddr;          /* OP_READ: the remote address */
    uint32_t src;            /* OP_RX / OP_COPY: the sender (from the header) */
    uint32_t seq;            /* OP_RX / OP_COPY: the header's sequence number */
    struct ofi_op *all;      /* data and copy ops: every one allocated, for fini */
    char *pay;               /* OP_TX of a large eager message: its payload (second iov), else NULL */
    void *paydesc;           /* its registration's descriptor */
};

struct ofi_state {
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    bool mr_local;           /* the provider needs registered buffers (FI_MR_LOCAL) */
    bool rma;                /* the endpoint has FI_RMA reads (large messages go by fi_read) */
    uint64_t mr_mode;        /* the provider's registration rules (FI_MR_*) */
    uint64_t next_key;       /* the next key we choose for a region (without FI_MR_PROV_KEY) */
    fi_addr_t *addr;         /* per world rank: its address (FI_ADDR_NOTAVAIL on this node) */
    uint32_t *eager_max;     /* per world rank: the largest eager payload its pool takes */
    uint32_t *large_max;     /* per world rank: the largest its large pool takes (0: none) */
    uint8_t *large_window;   /* per world rank: the large eager credits it grants this rank */
    size_t chunk;            /* largest data operation (the provider's max_msg_size) */
    int wait_fd;             /* the CQ's wait fd, -1 when the provider has none */
};

extern struct ofi_state ofi;

/* p2p.c */
int ofi_p2p_init(void);
void ofi_p2p_fini(void);
int ofi_p2p_pending(void);
bool ofi_p2p_busy(void);     /* sends wait for the provider (-FI_EAGAIN): poll, do not sleep */
bool ofi_p2p_moving(void);   /* data operations or large eager sends of this rank's in flight */
void ofi_isend(struct hint_request_s *r);
bool ofi_send_now(int world, const void *buf, size_t bytes, int tag, uint32_t ctx, int sig);
void ofi_deliver(struct hint_request_s *r, int src, void *msg);
bool ofi_send_alone(int world, const struct ofi_hdr *h); /* a header outside the sequence */
size_t ofi_msg_bytes(const void *msg); /* an unexpected message's bytes (probes) */
void ofi_progress(void);
unsigned long ofi_sent(void);
unsigned long long ofi_sent_bytes(void); /* data bytes of those messages */
unsigned long ofi_completions(void); /* CQ entries read so far */
/* fabric.c */
int ofi_register(void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc);
int ofi_register_key(void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc, uint64_t *key);
void ofi_fatal(const char *what, int rc);
size_t ofi_large_max(void); /* this rank's largest large eager payload (0: no large pool) */

/* credit.c: the large eager pool's flow control, credits per peer */
#define OFI_CREDIT_MAX 64 /* per sender and receiver: fits the header's uint8_t */
struct ofi_credits {
    uint8_t *have;   /* per world rank: large eager messages this rank may still send it */
    uint8_t *owed;   /* per world rank: its large eager messages taken here, not returned yet */
    uint8_t *listed; /* per world rank: in due */
    int *due;        /* ranks owed at least batch credits, to send alone at the next pass */
    int ndue;
    int *owing;      /* ranks owed any credit since the last flush before a sleep */
    uint8_t *owing_listed; /* per world rank: in owing */
    int nowing;
    int window, batch; /* credits this rank grants each rank on another node; half of it */
    size_t bound;    /* window x ranks on other nodes x large buffer */
    size_t copied, copied_peak; /* bytes of unexpected large messages copied out of the pool */
    unsigned long spent, starved, alone; /* large eager sends; rendezvous for want of one; returns alone */
    unsigned long before_sleep; /* of those, returns of fewer than batch before this rank slept */
};
extern struct ofi_credits ofi_cr;
int ofi_credit_window(size_t large); /* credits this rank grants each sender (0: keep no large pool) */
int ofi_credit_init(size_t large);
void ofi_credit_fini(void);
size_t ofi_credit_held_max(void);
void ofi_credit_taken(int src);  /* a receive took a large eager message from src */
void ofi_credit_owe_again(int peer, uint8_t n); /* a failed header's credits, owed again */
void ofi_credit_flush(void);     /* send what is owed alone (progress, while ndue) */
bool ofi_credit_flush_owed(void); /* send every credit owed alone (before sleeping); false: some could not go */
void ofi_credit_copied(long bytes);

/* A large eager message to world may go: spends a credit, else false (rendezvous). */
static inline bool ofi_credit_spend(int world)
{
    if (ofi_cr.have[world] == 0) {
        ofi_cr.starved++;
        return false;
    }
    ofi_cr.have[world]--;
    ofi_cr.spent++;
    return true;
}

/* What this rank owes world, for the header going there now. */
static inline uint8_t ofi_credit_piggyback(int world)
{
    uint8_t n = ofi_cr.owed[world];
    ofi_cr.owed[world] = 0;
    return n;
}

#endif
