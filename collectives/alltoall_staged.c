/*
 * alltoall staged and allgather staged — small blocks, one synchronisation (collectives/staging.c):
 * each rank copies its P blocks into its staging area, publishes, waits for every rank's and
 * copies its block out of each rank's area. The send buffer is free once staged and the receive
 * buffer is only written by its owner, so no barrier. Needs the shared heap (staging areas every
 * rank can read), a collective slot, and blocks of at most coll_stage_block(P) bytes (allgather:
 * coll_stage_area(P), its one block may fill the area).
 * Cost: 2 copies of P blocks per rank, 1 flag store and P flag loads; no message.
 * allgather staged is the same with one staged block per rank, which every rank copies out.
 * Derived datatypes cost nothing extra: staging packs from the sender's layout and copying out
 * unpacks into the receiver's, each with its own type.
 */
#include <stdint.h>

#include "collectives/algs.h"
#include "collectives/coll_shm.h"

bool allgather_staged_ok(const struct coll_args *a) { return coll_heap_ok(a) && a->block <= coll_stage_area(a->size); }

bool alltoall_staged_ok(const struct coll_args *a) { return coll_heap_ok(a) && a->block <= coll_stage_block(a->size); }

/* alltoall's blocks of whole lines start on a line: a compact call's data begins 16 bytes into
   its head's first line (after the flag), where 64-byte blocks would each straddle two lines, so
   a reader would pull two lines per peer and the writer dirty P + 1. Every rank's staging areas
   sit at the same offsets within line-aligned mappings, so the sender (from its own address) and
   each reader (from the sender's, as mapped here) find the same padding. */
static size_t line_pad(const char *p, size_t stride)
{
    return stride % COLL_CACHE_LINE ? 0 : (size_t)(-(uintptr_t)p & (COLL_CACHE_LINE - 1));
}

static int staged(struct coll_args *a, bool allgather)
{
    size_t stride = coll_stage_stride(a);
    size_t slack = !allgather && stride % COLL_CACHE_LINE == 0 ? COLL_CACHE_LINE - 1 : 0;
    char *mine = coll_stage_begin(a, allgather ? a->block : (size_t)a->size * stride + slack);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    if (slack)
        mine += line_pad(mine, stride);
    /* alltoall: the block for itself goes straight from the send buffer to its place in the
       receive buffer (a contiguous receive side), while the peers stage theirs, instead of into
       its own area and out again (issue 18, 2 KiB at P=2: 1802 -> 1568 instructions a call outside
       waiting, 2 KiB fewer copied). In place it sends from a copy (api.c); a block that is its own
       place already stays.
       allgather's one send block is staged for the peers anyway. */
    bool direct = !allgather && a->rl.type == NULL;
    for (int d = 0; d < (allgather ? 1 : a->size); d++)
        if (!direct || d != a->rank)
            coll_pack_block(a, d, mine + (size_t)d * stride);
    coll_stage_post(a);
    if (direct && coll_recv_block(a, a->rank) != coll_send_block(a, a->rank))
        coll_pack_block(a, a->rank, coll_recv_block(a, a->rank));
    int st = coll_stage_wait_all(a);
    if (st != HINT_SUCCESS)
        return st;
    size_t at = allgather ? 0 : (size_t)a->rank * stride;
    for (int src = 0; src < a->size; src++) {
        if (src == a->rank && direct)
            continue;
        const char *from = coll_stage_half(a, src);
        coll_unpack_block(a, src, from + (slack ? line_pad(from, stride) : 0) + at);
    }
    if (coll_has_layout(a))
        coll_count_direct();
    return HINT_SUCCESS;
}

int alltoall_staged(struct coll_args *a) { return staged(a, false); }
int allgather_staged(struct coll_args *a) { return staged(a, true); }
