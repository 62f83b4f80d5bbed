/*
 * collectives/group_state.c — what the collectives keep per group (struct coll_group, a part of
 * the group: runtime/group.h) and the node area their shared-memory algorithms use
 * (collectives/coll_shm.h): asking the runtime for the area, handing its slots to groups, and
 * the component hooks hint_init and hint_finalize call (lib/components.c).
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/coll_shm.h"
#include "collectives/copy.h"
#include "collectives/rules.h"
#include "collectives/nbc_heap.h"
#include "runtime/group.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"

struct coll_shm_area coll_shm;
int coll_group_key = -1;
static int area_id = -1;

size_t coll_shm_bytes(int nlocal) { return (size_t)COLL_SHM_SLOTS * coll_shm_slot_stride(nlocal); }

/* The area as this rank mapped it; NULL base when no transport maps node memory. */
static void map_area(void)
{
    int nlocal = rt.boot.local_size;
    coll_shm.base = rt_node_area(area_id);
    coll_shm.slot_stride = coll_shm_slot_stride(nlocal);
    coll_shm.member_stride = coll_shm_member_stride(nlocal);
    /* the world's slot is what every first collective on the world touches: map it now */
    if (coll_shm.base)
        rt_prefault(coll_shm_slot(0), coll_shm.slot_stride);
}

/* Take a free slot for a group of `members` ranks (reset, refs = members); -1 when none. */
static int slot_acquire(int members)
{
    for (int i = 1; i < COLL_SHM_SLOTS; i++) {
        struct coll_shm_slot *s = coll_shm_slot(i);
        uint32_t expect = 0;
        if (!atomic_compare_exchange_strong(&s->used, &expect, 1))
            continue;
        /* Nobody else touches a slot between its release and the message that hands it out. */
        atomic_store(&s->arrive, 0);
        atomic_store(&s->release, 0);
        for (int b = 0; b < COLL_BCAST_CELLS; b++) {
            atomic_store(&s->bc[b].seq, 0);
            atomic_store(&s->bc_done[b].n, 0);
        }
        /* A member's flag and offsets are the previous group's: a staged collective of the
           new group (whose calls count from 1 again) would take them for its own. */
        for (int m = 0; m < rt.boot.local_size; m++) {
            struct coll_shm_member *mem = coll_shm_member(i, m);
            memset(mem, 0, coll_shm.member_stride);
            mem->soff = mem->roff = UINT64_MAX;
        }
        atomic_fetch_add(&s->generation, 1);
        atomic_store(&s->refs, (uint32_t)members);
        return i;
    }
    return -1;
}

/* A member is done with the slot; the last one frees it. */
static void slot_release(int slot)
{
    struct coll_shm_slot *s = coll_shm_slot(slot);
    if (atomic_fetch_sub(&s->refs, 1) == 1)
        atomic_store(&s->used, 0);
}

/* Slot 0 belongs to the world from the start when the world lies on one node; every rank marks
   it (the same stores), before any rank can free the world (that comes after finalize's fence).
   A world spanning nodes has no slot: slot 0 of each node stays unused. */
static int world_slot(const struct coll_group *cg)
{
    if (coll_shm.base == NULL || cg->nodes != 1)
        return -1;
    struct coll_shm_slot *s = coll_shm_slot(0);
    atomic_store(&s->used, 1);
    atomic_store(&s->refs, (uint32_t)rt.boot.local_size);
    return 0;
}

/* A new group's slot: its rank 0 takes one and tells the others. Without one (all taken, or
   members on several nodes) the node-only algorithms do not apply. Whether the members share
   one node is the same answer on every member (the node map is the same everywhere), so a
   group spanning nodes sends nothing here and no member waits for a slot. */
static int group_slot(hint_group g, const struct coll_group *cg, int *slot)
{
    *slot = -1;
    if (g->size == 1 || cg->nodes != 1 || coll_shm.base == NULL)
        return HINT_SUCCESS;
    int st = HINT_SUCCESS;
    if (g->rank == 0) {
        *slot = slot_acquire(g->size);
        for (int r = 1; r < g->size; r++)
            CHECK_GOTO(p2p_send_bytes(slot, sizeof *slot, r, GRP_TAG_SLOT, g), out);
    } else {
        CHECK_GOTO(p2p_recv_bytes(slot, sizeof *slot, 0, GRP_TAG_SLOT, g), out);
    }
out:
    return st;
}

/* The group's shape from the node map: how many nodes its members are on and the most members
   on one of them (uneven splits give the largest). Nodes are blocks of consecutive world ranks,
   so counting needs no memory (an allocation failing on one member only would make the members
   see different shapes, and so pick different algorithms). */
static void group_shape(hint_group g, struct coll_group *cg)
{
    cg->nodes = cg->ppn = 0;
    for (int k = 0; k < rt.boot.nnodes; k++) {
        int on = 0, first = rt_node_first(k), end = first + rt_node_size(k);
        for (int w = first; w < end; w++)
            on += g->from_world[w] >= 0;
        cg->nodes += on > 0;
        cg->ppn = on > cg->ppn ? on : cg->ppn;
    }
}

/* The shape first (it decides whether there is a slot to hand out), then the slot: every member
   takes part in that exchange before anything can fail on one member alone. */
static int coll_group_create(hint_group g, bool world)
{
    if (world)
        map_area();
    struct coll_group shape = {.slot = -1};
    group_shape(g, &shape);
    int st = world ? (shape.slot = world_slot(&shape), HINT_SUCCESS) : group_slot(g, &shape, &shape.slot);
    if (st != HINT_SUCCESS)
        return st;
    struct coll_group *cg = malloc(sizeof *cg);
    if (cg == NULL) {
        if (shape.slot >= 0)
            slot_release(shape.slot);
        return HINT_ERR_NOMEM;
    }
    *cg = shape;
    grp_part_set(g, coll_group_key, cg);
    if (world && cg->slot >= 0)
        coll_order_prepare(g);
    return HINT_SUCCESS;
}

static void owned_free(struct coll_owned *o)
{
    if (o->p && o->free)
        o->free(o->p);
    *o = (struct coll_owned){0};
}

/* The slot first: the staging areas are released once every member has let go of it. */
static void coll_group_destroy(hint_group g, void *p)
{
    struct coll_group *cg = p;
    if (cg->slot >= 0 && coll_shm.base)
        slot_release(cg->slot);
    owned_free(&cg->order);
    owned_free(&cg->tune);
    owned_free(&cg->stage);
    owned_free(&cg->neighbor);
    owned_free(&cg->hier);
    grp_part_set(g, coll_group_key, NULL);
    free(cg);
}

static const struct grp_part_ops coll_part = {"collectives", coll_group_create, NULL, coll_group_destroy};

void coll_group_attach(hint_group g, struct coll_group *cg)
{
    if (coll_group_key < 0)
        coll_group_key = grp_part_register(&coll_part);
    grp_part_set(g, coll_group_key, cg);
}

int coll_setup(void)
{
    coll_group_key = grp_part_register(&coll_part);
    area_id = rt_node_area_add("collectives", coll_shm_bytes);
    if (nbc_heap_setup() != HINT_SUCCESS)
        return HINT_ERR_INTERNAL;
    /* The copy orders' threshold (L2 / ranks) reads five sysfs files, 20 system calls: here
       rather than in the first alltoall or allgather of 2 KiB and up (issue 18, first calls). */
    (void)copy_l2_bytes();
    coll_order_setup();
    /* The defaults' per-operation shape caches (rules.c) are 3 pages of .bss, each first written
       by the first call of some operation, and the rows their rules are built in (rules.h) a few
       more: mapped here instead, as the world's slot above. */
    rt_prefault(rules_default(), sizeof *rules_default());
    rt_prefault(coll_default_rows, (size_t)coll_default_nsrc * sizeof *coll_default_rows); /* their rows */
    return coll_group_key < 0 || area_id < 0 ? HINT_ERR_INTERNAL : HINT_SUCCESS;
}

void coll_fini(void)
{
    coll_stats_report();
    coll_staging_release_all(); /* after the fence: no peer reads them any more */
    coll_shm = (struct coll_shm_area){0};
}
