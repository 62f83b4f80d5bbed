/*
 * transport/shm/cells.h — the point-to-point channels of the node segment
 * (transport/shm/segment.h places them): one channel per ordered pair of local ranks, each a
 * header line and SHM_NCELLS cells of a header line + payload bytes.
 *
 * A cell moves between its two owners through `state`: FREE (sender may fill it), FULL
 * (receiver owns it), CTS (a matched rendezvous header handed back to the sender as "send the
 * rest through cells"), DONE (the receiver copied the data itself: single copy, send complete).
 * The sender announces cells in order through the channel's index ring, so the receiver sees them
 * in send order even though cells are recycled out of order; cell seq % ncells is used whenever
 * it is free, so the receiver finds the next message without reading the channel header.
 * HELD: the receiver keeps an unexpected message in the cell (the sender sees it taken).
 * SPILLED: not a state of a shared cell but of the receiver's private copy of one (p2p.c copies
 * unexpected eager messages out once half a channel's cells are held, so the channel keeps moving).
 */
#ifndef HINT_TRANSPORT_SHM_CELLS_H
#define HINT_TRANSPORT_SHM_CELLS_H

#include "transport/shm/segment.h"

enum shm_cell_state { SHM_CELL_FREE = 0, SHM_CELL_FULL = 1, SHM_CELL_CTS = 2, SHM_CELL_DONE = 3, SHM_CELL_HELD = 4,
                      SHM_CELL_SPILLED = 5 /* a private copy of an unexpected eager cell (p2p.c), never shared */ };
/* How the data of a rendezvous message moves (the protocol table of p2p.c). */
enum shm_path { SHM_PATH_BOUNCE = 0, SHM_PATH_HEAP = 1, SHM_PATH_CMA = 2, SHM_NPATHS };
enum shm_cell_kind { SHM_EAGER = 1, SHM_RTS = 2, SHM_FRAG = 3 };

/* Header of a channel; written only by the sender. */
struct shm_chan {
    _Atomic uint64_t write_seq;        /* cells announced so far */
    uint32_t idx_ring[SHM_NCELLS];     /* idx_ring[seq % ncells] = cell index of cell seq */
    char pad[SHM_CACHE_LINE - 8 - 4 * SHM_NCELLS];
};
static_assert(sizeof(struct shm_chan) == SHM_CACHE_LINE, "channel header is one line");

/* Header of a cell; filled by the sender while FREE, read by the receiver while FULL. One line,
   and an eager message of up to SHM_INLINE bytes travels in it (data[]), so the line that says
   "full" also carries the data: one line crossing per small message. `seq` is the cell's place in
   the channel's send order: the receiver looks for message r in cell r % ncells first (where the
   sender puts it whenever that cell is free) and reads the channel header only when it is not
   there. */
#define SHM_INLINE 40
struct shm_cell {
    _Atomic uint32_t state;   /* enum shm_cell_state: the ownership hand-over */
    uint32_t seq;             /* low 32 bits of this cell's sequence number in the channel */
    uint32_t ctx;             /* context id of the group (messages of other groups never match) */
    int32_t tag;
    uint32_t len;             /* payload bytes in this cell (inline or after the header) */
    uint8_t kind;             /* enum shm_cell_kind */
    uint8_t path;             /* RTS: enum shm_path */
    int16_t sig;              /* EAGER/RTS: predefined kind of the send type (DT_NONE: mixed) */
    union {
        unsigned char data[SHM_INLINE]; /* EAGER with len <= SHM_INLINE: the payload */
        struct {
            uint64_t total;   /* RTS: bytes of the whole message (EAGER: len) */
            uint64_t msgid;   /* RTS/FRAG: sender-chosen id tying fragments to their header */
            uint64_t offset;  /* FRAG: where this payload goes in the message */
            uint64_t addr;    /* RTS: heap offset (HEAP) or sender address (CMA) of the data */
        } rdv;
    };
    /* payload follows (EAGER longer than SHM_INLINE, RTS on the bounce path, FRAG) */
};
static_assert(sizeof(struct shm_cell) == SHM_CACHE_LINE, "cell header is one line");
static_assert(offsetof(struct shm_cell, data) + SHM_INLINE == SHM_CACHE_LINE, "inline data fills the line");

static inline struct shm_chan *shm_chan(const struct shm_node *n, int src, int dst)
{
    return (struct shm_chan *)((char *)n->base + n->hdr->chan_off +
                               (size_t)(src * n->nlocal + dst) * n->hdr->chan_stride);
}
static inline struct shm_cell *shm_cell(const struct shm_node *n, struct shm_chan *c, uint32_t i)
{
    return (struct shm_cell *)((char *)c + SHM_CACHE_LINE + (size_t)i * n->hdr->cell_stride);
}
static inline void *shm_payload(struct shm_cell *cell) { return cell + 1; }

#endif
