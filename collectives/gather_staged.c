/*
 * gather staged and scatter staged — small blocks through the staging areas (collectives/staging.c),
 * no barrier. gather: every rank stages its block and posts; the non-roots leave at once, the
 * root waits for all and copies the blocks out. scatter: the root stages the P blocks and posts
 * (and leaves); every other rank waits for the root's post and copies its block out.
 * Needs the shared heap, a collective slot and blocks of at most coll_stage_area(P) bytes (gather:
 * P * 8 KiB up to 8 ranks) or coll_stage_block(P) (scatter: 8 KiB).
 * Cost: 2 copies per block, one flag store per rank, the readers' flag loads.
 */
#include "collectives/algs.h"

/* gather stages one block per rank, which may fill the rank's whole area; scatter's root stages
   all P blocks, so each at most one area block. */
bool gather_staged_ok(const struct coll_args *a) { return coll_heap_ok(a) && a->block <= coll_stage_area(a->size); }
bool scatter_staged_ok(const struct coll_args *a) { return coll_heap_ok(a) && a->block <= coll_stage_block(a->size); }

int gather_staged(struct coll_args *a)
{
    char *mine = coll_stage_begin(a, a->block);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    if (a->rank != a->root) {
        rt_memcpy(mine, a->sbuf, a->block);
        coll_stage_post(a);
        return HINT_SUCCESS;
    }
    coll_stage_post(a);
    copy_bytes(a->rbuf + (size_t)a->root * a->block, a->sbuf, a->block); /* in place: the same bytes */
    int st = coll_stage_wait_all(a);
    if (st != HINT_SUCCESS)
        return st;
    for (int p = 0; p < a->size; p++)
        if (p != a->root)
            rt_memcpy(a->rbuf + (size_t)p * a->block, coll_stage_half(a, p), a->block);
    return HINT_SUCCESS;
}

int scatter_staged(struct coll_args *a)
{
    size_t stride = coll_stage_stride(a);
    char *mine = coll_stage_begin(a, (size_t)a->size * stride);
    if (mine == NULL)
        return HINT_ERR_NOMEM;
    if (a->rank == a->root)
        for (int p = 0; p < a->size; p++)
            rt_memcpy(mine + (size_t)p * stride, a->sbuf + (size_t)p * a->block, a->block);
    coll_stage_post(a);
    if (a->rank == a->root) {
        copy_bytes(a->rbuf, a->sbuf + (size_t)a->root * a->block, a->block);
        return HINT_SUCCESS;
    }
    int st = coll_stage_wait(a, a->root);
    if (st != HINT_SUCCESS)
        return st;
    rt_memcpy(a->rbuf, coll_stage_half(a, a->root) + (size_t)a->rank * stride, a->block);
    return HINT_SUCCESS;
}
