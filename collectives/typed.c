/*
 * collectives/typed.c — derived datatypes in alltoall(v), allgather(v) and bcast. api.c hands a
 * call whose send or receive type is derived (the v variants: when its extent is positive) to
 * selection as it is, with the user's buffers and their layouts (struct coll_layout), so every
 * rank picks the same algorithm whatever types it passed. An algorithm marked `typed` copies
 * straight from and to the layouts: the staged ones and bcast shm pack into and unpack from
 * their shared areas with the rank's own type, the copy orders walk both peers' flattened
 * pieces over the shared heap, bcast heap unpacks straight out of the root's buffer. Any other
 * algorithm runs on packed scratch copies (coll_run_packed): one extra copy on each derived side.
 */
#include <stdlib.h>

#include "collectives/coll.h"
#include "datatype/datatype.h"
#include "runtime/runtime.h"

static struct {
    unsigned long direct, packed;
} stats;

static ptrdiff_t block_stride(const struct coll_layout *l, size_t block)
{
    return l->type ? (ptrdiff_t)l->count * l->extent : (ptrdiff_t)block;
}

const char *coll_send_block(const struct coll_args *a, int d)
{
    return a->sbuf + d * block_stride(&a->sl, a->block);
}

char *coll_recv_block(const struct coll_args *a, int s) { return a->rbuf + s * block_stride(&a->rl, a->block); }

/* A derived side's pieces when it has a list (the tight loops of dt_copy_flat beat the
   resumable range calls on small blocks); NULL: use the range calls. */
static bool flat_of(const struct coll_layout *l, struct dt_flat *f)
{
    f->iov = dt_iov(l->type, &f->niov);
    f->extent = l->extent;
    return f->iov != NULL;
}

/* The types were checked and the block sizes agree, so the range calls cannot fail here. */
void coll_pack_block(const struct coll_args *a, int d, void *out)
{
    size_t done;
    struct dt_flat f, bytes = {0};
    if (a->sl.type == NULL)
        memcpy(out, coll_send_block(a, d), a->block);
    else if (flat_of(&a->sl, &f))
        dt_copy_flat(coll_send_block(a, d), &f, out, &bytes, a->block);
    else
        dt_pack_range_rep(coll_send_block(a, d), a->sl.count, a->sl.type, 0, out, a->block, &done, DT_REP_AUTO);
}

void coll_unpack_block(const struct coll_args *a, int s, const void *in)
{
    size_t done;
    struct dt_flat f, bytes = {0};
    if (a->rl.type == NULL)
        memcpy(coll_recv_block(a, s), in, a->block);
    else if (flat_of(&a->rl, &f))
        dt_copy_flat(in, &bytes, coll_recv_block(a, s), &f, a->block);
    else
        dt_unpack_range_rep(in, a->block, 0, coll_recv_block(a, s), a->rl.count, a->rl.type, &done, DT_REP_AUTO);
}

static int blocks_sent(const struct coll_args *a) { return a->op_id == COLL_ALLGATHER ? 1 : a->size; }

/* Dense packed blocks of a v side: counts stay, displacements become the running sum. */
static int dense_displs(const size_t *counts, int P, size_t **displs, size_t *total)
{
    *total = 0;
    if ((*displs = malloc((size_t)P * sizeof **displs)) == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; p < P; p++) {
        (*displs)[p] = *total;
        *total += counts[p];
    }
    return HINT_SUCCESS;
}

/* bytes of data of layout l at base (a block of a v side) to or from dense bytes at dense. */
static void pack_v(const char *base, const struct coll_layout *l, size_t bytes, char *dense)
{
    size_t done, n = bytes / dt_size(l->type);
    dt_pack_range_rep(base, n, l->type, 0, dense, bytes, &done, DT_REP_AUTO);
}

static void unpack_v(const char *dense, size_t bytes, char *base, const struct coll_layout *l)
{
    size_t done, n = bytes / dt_size(l->type);
    dt_unpack_range_rep(dense, bytes, 0, base, n, l->type, &done, DT_REP_AUTO);
}

/* alltoallv / allgatherv: every block packed to its own dense place. */
static int run_packed_v(struct coll_args *a, int (*run)(struct coll_args *))
{
    int P = a->size;
    bool a2a = a->op_id == COLL_ALLTOALLV;
    struct coll_args packed = *a;
    size_t *sd = NULL, *rd = NULL, stotal = a->block, rtotal;
    char *stmp = NULL, *rtmp = NULL;
    int st = dense_displs(a->rcounts, P, &rd, &rtotal);
    if (st == HINT_SUCCESS && a2a)
        st = dense_displs(a->scounts, P, &sd, &stotal);
    if (st == HINT_SUCCESS && a->sl.type && (st = coll_scratch(stotal, (void **)&stmp)) == HINT_SUCCESS) {
        for (int d = 0; d < (a2a ? P : 1); d++)
            pack_v(a->sbuf + (a2a ? a->sdispls[d] : 0), &a->sl, a2a ? a->scounts[d] : a->block,
                   stmp + (a2a ? sd[d] : 0));
        packed.sbuf = stmp;
        if (a2a)
            packed.sdispls = sd;
    }
    if (st == HINT_SUCCESS && a->rl.type && (st = coll_scratch(rtotal, (void **)&rtmp)) == HINT_SUCCESS) {
        packed.rbuf = rtmp;
        packed.rdispls = rd;
    }
    if (st == HINT_SUCCESS) {
        packed.sl = packed.rl = (struct coll_layout){0};
        st = run(&packed);
    }
    for (int s = 0; st == HINT_SUCCESS && rtmp && s < P; s++)
        unpack_v(rtmp + rd[s], a->rcounts[s], a->rbuf + a->rdispls[s], &a->rl);
    free(stmp);
    free(rtmp);
    free(sd);
    free(rd);
    return st;
}

/* bcast: the root packs its whole message, the others unpack it. */
static int run_packed_bcast(struct coll_args *a, int (*run)(struct coll_args *))
{
    struct coll_args packed = *a;
    void *tmp;
    size_t done;
    int st = coll_scratch(a->block, &tmp);
    if (st != HINT_SUCCESS)
        return st;
    if (a->rank == a->root)
        dt_pack_range_rep(a->rbuf, a->rl.count, a->rl.type, 0, tmp, a->block, &done, DT_REP_AUTO);
    packed.rbuf = tmp;
    packed.rl = (struct coll_layout){0};
    st = run(&packed);
    if (st == HINT_SUCCESS && a->rank != a->root)
        dt_unpack_range_rep(tmp, a->block, 0, a->rbuf, a->rl.count, a->rl.type, &done, DT_REP_AUTO);
    free(tmp);
    return st;
}

int coll_run_packed(struct coll_args *a, int (*run)(struct coll_args *))
{
    stats.packed++;
    if (a->op_id == COLL_BCAST)
        return run_packed_bcast(a, run);
    if (a->op_id == COLL_ALLTOALLV || a->op_id == COLL_ALLGATHERV)
        return run_packed_v(a, run);
    int P = a->size, ns = blocks_sent(a);
    size_t b = a->block;
    void *stmp = NULL, *rtmp = NULL;
    struct coll_args packed = *a;
    int st = HINT_SUCCESS;
    if (a->sl.type && (st = coll_scratch(b * (size_t)ns, &stmp)) == HINT_SUCCESS) {
        for (int d = 0; d < ns; d++)
            coll_pack_block(a, d, (char *)stmp + (size_t)d * b);
        packed.sbuf = stmp;
    }
    if (st == HINT_SUCCESS && a->rl.type && (st = coll_scratch(b * (size_t)P, &rtmp)) == HINT_SUCCESS)
        packed.rbuf = rtmp;
    if (st == HINT_SUCCESS) {
        packed.sl = packed.rl = (struct coll_layout){0};
        st = run(&packed);
    }
    if (st == HINT_SUCCESS && rtmp)
        for (int s = 0; s < P; s++)
            coll_unpack_block(a, s, (char *)rtmp + (size_t)s * b);
    free(stmp);
    free(rtmp);
    return st;
}

void coll_count_direct(void) { stats.direct++; }

void coll_stats_report(void)
{
    if (rt_cfg_long("HINT_COLL_STATS") && stats.direct + stats.packed > 0)
        RT_ERR("coll", "derived-type bcast/alltoall(v)/allgather(v) calls: %lu copied straight from and to the layouts, "
               "%lu staged through packed bytes", stats.direct, stats.packed);
    stats.direct = stats.packed = 0;
}
