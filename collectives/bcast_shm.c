/*
 * bcast shm — the root copies the message chunk by chunk (32 KiB) into a double buffer of the
 * group's collective slot; every other rank copies each chunk out and counts itself done, which
 * lets the root reuse that buffer two chunks later. One copy in, P-1 copies out, in parallel
 * and pipelined. Needs all ranks on one node and a collective slot.
 * Cost: per chunk ~2 cache-line hand-overs + chunk/bandwidth; no message headers at all.
 */
#include "collectives/algs.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "transport/shm/shm.h"


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

int bcast_shm(struct coll_args *a)
{
    struct shm_coll_slot *slot = shm_coll_slot(rt.shm, a->g->shm_slot);
    uint64_t readers = (uint64_t)a->size - 1;
    int root_world = a->g->world[a->root];
    for (size_t off = 0; off < a->block; off += SHM_COLL_CHUNK) {
        size_t n = a->block - off < SHM_COLL_CHUNK ? a->block - off : SHM_COLL_CHUNK;
        uint64_t c = a->g->bc_chunks++;
        int b = (int)(c % 2);
        if (a->rank == a->root) {
            wait_counter(&slot->done[b], (c / 2) * readers); /* everyone read its previous chunk */
            memcpy(slot->data[b], a->rbuf + off, n);
            atomic_store_explicit(&slot->seq[b], c + 1, memory_order_release);
            coll_ring_members(a->g);
        } else {
            wait_counter(&slot->seq[b], c + 1);
            memcpy(a->rbuf + off, slot->data[b], n);
            atomic_fetch_add_explicit(&slot->done[b], 1, memory_order_acq_rel);
            shm_wake(rt.shm, root_world);
        }
    }
    return HINT_SUCCESS;
}
