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

/* The readers wait for the root's number polling its line itself first (coll_spin), as the staged
   algorithms do: rt_wait_until's pass between two looks (progress hooks, clock, doorbell) made
   an arrival wait half of one on average before it was seen. */
static void wait_counter(_Atomic uint64_t *word, uint64_t at_least)
{
    struct counter_wait w = {word, at_least};
    if (!reached(&w) && !coll_spin(reached, &w))
        rt_wait_until(reached, &w);
}

/* Ask for the line the root writes next in the modified state now (x86 prefetchw, a hint that
   waits for nothing): its readers read it COLL_BCAST_CELLS - 1 chunks ago, so their shared copies
   are given up while this rank returns and makes its next call, not inside that call, whose
   wake fence would wait for them. */
static inline void claim_line(void *line)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw %0" ::"m"(*(char *)line));
#else
    (void)line;
#endif
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
   Where the ranks fit the cores (the wait spins), the root past the first CELLS chunks waits for
   chunk c - CELLS / 2 instead, which frees the cells of the next CELLS / 2 + 1 chunks at once: it
   then reads a count line the readers write once per CELLS / 2 + 1 chunks, not every call. Asked
   without waiting, a reader one chunk behind let the root run the whole ring ahead and then wait
   for chunk c - CELLS every call, each look taking the count line back from the reader (issue 18,
   bcast 8 B at P=2, loaded machine, best of 5 runs: 0.101-0.130 us before, 0.147-0.153 with the
   counts on lines of their own, 0.084-0.091 waiting for half the ring, 0.082-0.089 with the
   readers' tight spin and claim_line too; Open MPI 0.072-0.076). Oversubscribed, each wait may
   cost a hand-off: the root runs the whole ring ahead and waits only for chunk c - CELLS (asking
   for chunk c - 1 first, which frees the ring at once when the readers keep up). */
static void wait_cell_free(struct coll_shm_slot *slot, struct coll_group *g, uint64_t c, uint64_t readers)
{
    if (c < g->bc_free)
        return;
    if (c < COLL_BCAST_CELLS) { /* cells never written */
        g->bc_free = COLL_BCAST_CELLS;
        return;
    }
    uint64_t ask = rt.boot.oversubscribed ? c - 1 : c - COLL_BCAST_CELLS / 2;
    struct counter_wait w = {&slot->bc_done[ask % COLL_BCAST_CELLS].n, (ask / COLL_BCAST_CELLS + 1) * readers};
    if (!rt.boot.oversubscribed || reached(&w)) {
        wait_counter(w.word, w.at_least);
        g->bc_free = ask + COLL_BCAST_CELLS + 1; /* chunk `ask` read: all before it too */
        return;
    }
    wait_counter(&slot->bc_done[c % COLL_BCAST_CELLS].n, (c / COLL_BCAST_CELLS) * readers);
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
            if (c + 1 < cg->bc_free) { /* the next cell is free: its lines can be taken now */
                claim_line(&slot->bc[(c + 1) % COLL_BCAST_CELLS]);
                if (n > COLL_BCAST_INLINE)
                    claim_line(slot->data[(c + 1) % COLL_BCAST_CELLS]);
            }
        } else {
            wait_counter(&ctl->seq, c + 1);
            chunk_in(a, off, n, cell);
            atomic_fetch_add_explicit(&slot->bc_done[b].n, 1, memory_order_acq_rel);
            rt_wake(root_world);
        }
    }
    if (coll_has_layout(a))
        coll_count_direct();
    return HINT_SUCCESS;
}
