/*
 * bcast shm — the root copies the message chunk by chunk (4 KiB) into a ring of 16 cells of the
 * group's collective slot; every other rank copies each chunk out and counts itself done, which
 * lets the root reuse that cell 16 chunks later: back-to-back small bcasts do not wait for the
 * readers. One copy in, P-1 copies out, in parallel
 * and pipelined. Needs all ranks on one node and a collective slot.
 * Cost: per chunk ~2 cache-line hand-overs + chunk/bandwidth; no message headers at all.
 * A derived datatype costs nothing extra: the root packs each chunk straight from its layout and
 * every other rank unpacks it straight into its own (the range calls resume at any byte).
 */
#include "collectives/algs.h"
#include "collectives/coll_shm.h"
#include "datatype/datatype.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

struct counter_wait {
    _Atomic uint64_t *word;
    uint64_t at_least;
};

static bool reached(void *arg)
{
    struct counter_wait *w = arg;
    return atomic_load_explicit(w->word, memory_order_acquire) >= w->at_least;
}

static void wait_counter(_Atomic uint64_t *word, uint64_t at_least)
{
    struct counter_wait w = {word, at_least};
    if (!reached(&w))
        rt_wait_until(reached, &w);
}

/* Bytes [off, off + n) of the message between the rank's buffer and the shared chunk. */
static void chunk_out(const struct coll_args *a, size_t off, size_t n, void *chunk)
{
    size_t done;
    if (a->rl.type == NULL)
        memcpy(chunk, a->rbuf + off, n);
    else
        dt_pack_range_rep(a->rbuf, a->rl.count, a->rl.type, off, chunk, n, &done, DT_REP_AUTO);
}

static void chunk_in(const struct coll_args *a, size_t off, size_t n, const void *chunk)
{
    size_t done;
    if (a->rl.type == NULL)
        memcpy(a->rbuf + off, chunk, n);
    else
        dt_unpack_range_rep(chunk, n, off, a->rbuf, a->rl.count, a->rl.type, &done, DT_REP_AUTO);
}

/* Root: whether chunk c may go into its cell, i.e. every reader has read chunk c - CELLS.
   Asking the cell of the newest chunk first frees up to CELLS chunks at once, so a root whose
   readers keep up reads a control line written by them once per CELLS chunks, not every call. */
static void wait_cell_free(struct coll_shm_slot *slot, struct coll_group *g, uint64_t c, uint64_t readers)
{
    if (c < g->bc_free)
        return;
    if (c > 0) {
        uint64_t last = c - 1;
        if (atomic_load_explicit(&slot->bc[last % COLL_BCAST_CELLS].done, memory_order_acquire) >=
            (last / COLL_BCAST_CELLS + 1) * readers) {
            g->bc_free = last + COLL_BCAST_CELLS + 1; /* chunk `last` read: all before it too */
            return;
        }
    }
    wait_counter(&slot->bc[c % COLL_BCAST_CELLS].done, (c / COLL_BCAST_CELLS) * readers);
    g->bc_free = c + 1;
}

int bcast_shm(struct coll_args *a)
{
    struct coll_group *cg = coll_group_of(a->g);
    struct coll_shm_slot *slot = coll_shm_slot(cg->slot);
    uint64_t readers = (uint64_t)a->size - 1;
    int root_world = a->g->world[a->root];
    for (size_t off = 0; off < a->block; off += COLL_BCAST_CHUNK) {
        size_t n = a->block - off < COLL_BCAST_CHUNK ? a->block - off : COLL_BCAST_CHUNK;
        uint64_t c = cg->bc_chunks++;
        int b = (int)(c % COLL_BCAST_CELLS);
        struct coll_bcast_ctl *ctl = &slot->bc[b];
        char *cell = n <= COLL_BCAST_INLINE ? ctl->inline_data : slot->data[b];
        if (a->rank == a->root) {
            wait_cell_free(slot, cg, c, readers);
            chunk_out(a, off, n, cell);
            atomic_store_explicit(&ctl->seq, c + 1, memory_order_release);
            coll_ring_members(a->g);
        } else {
            wait_counter(&ctl->seq, c + 1);
            chunk_in(a, off, n, cell);
            atomic_fetch_add_explicit(&ctl->done, 1, memory_order_acq_rel);
            rt_wake(root_world);
        }
    }
    if (coll_has_layout(a))
        coll_count_direct();
    return HINT_SUCCESS;
}
