/*
 * collectives/typed.c — derived datatypes in collectives. api.c hands every call whose send or
 * receive type is derived to selection as it is, with the user's buffers and their layouts
 * (struct coll_layout), so every rank picks the same algorithm whatever types it passed. An
 * algorithm marked `typed` copies straight from and to the layouts: the staged alltoall and
 * allgather and bcast shm pack into and unpack from their shared areas with the rank's own type,
 * the copy orders walk both peers' flattened pieces over the shared heap, bcast heap unpacks
 * straight out of the root's buffer. Every other algorithm runs on packed scratch copies
 * (coll_run_packed, the one place where packing around an algorithm happens): one extra copy on
 * each derived side. Reductions on a derived type run on the predefined kind it is made of.
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
        rt_memcpy(out, coll_send_block(a, d), a->block);
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
        rt_memcpy(coll_recv_block(a, s), in, a->block);
    else if (flat_of(&a->rl, &f))
        dt_copy_flat(in, &bytes, coll_recv_block(a, s), &f, a->block);
    else
        dt_unpack_range_rep(in, a->block, 0, coll_recv_block(a, s), a->rl.count, a->rl.type, &done, DT_REP_AUTO);
}

/* bytes of data of layout l at base to or from dense bytes. */
static void pack_run(const char *base, const struct coll_layout *l, size_t bytes, char *dense)
{
    size_t done;
    struct dt_flat f, flat = {0};
    if (flat_of(l, &f))
        dt_copy_flat(base, &f, dense, &flat, bytes);
    else
        dt_pack_range_rep(base, bytes / dt_size(l->type), l->type, 0, dense, bytes, &done, DT_REP_AUTO);
}

static void unpack_run(const char *dense, size_t bytes, char *base, const struct coll_layout *l)
{
    size_t done;
    struct dt_flat f, flat = {0};
    if (flat_of(l, &f))
        dt_copy_flat(dense, &flat, base, &f, bytes);
    else
        dt_unpack_range_rep(dense, bytes, 0, base, bytes / dt_size(l->type), l->type, &done, DT_REP_AUTO);
}

/* The blocks one side of this rank's call holds: n blocks, either of `block` bytes one layout
   stride apart, or (v) of the call's byte counts at its byte displacements. */
struct side {
    int n;
    bool v;
    size_t block;
};

static struct side side_of(const struct coll_args *a, bool send)
{
    int P = a->size;
    bool root = a->rank == a->root;
    struct side one = {1, false, a->block}, all = {P, false, a->block}, vall = {P, true, 0}, none = {0, false, 0};
    switch (a->op_id) {
    case COLL_ALLTOALL: return all;
    case COLL_ALLGATHER: return send ? one : all;
    case COLL_GATHER: return send ? one : root ? all : none;
    case COLL_SCATTER: return send ? (root ? all : none) : one;
    case COLL_ALLTOALLV: return vall;
    case COLL_ALLGATHERV: return send ? one : vall;
    case COLL_GATHERV: return send ? one : root ? vall : none;
    case COLL_SCATTERV: return send ? (root ? vall : none) : one;
    case COLL_REDUCE: return send || root ? one : none;
    case COLL_ALLREDUCE: return one;
    case COLL_REDUCE_SCATTER_BLOCK: return send ? (struct side){1, false, a->block * (size_t)P} : one;
    case COLL_SCAN: return one;
    case COLL_EXSCAN: return send || a->rank != 0 ? one : none; /* rank 0's output is left alone */
    case COLL_REDUCE_SCATTER: return send ? one : (struct side){1, false, a->rcounts[a->rank]};
    default: return none;
    }
}

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

/* One derived side as dense bytes: scratch for its blocks (packed when it is the send side)
   and, for a v side, their dense displacements. */
struct packed {
    char *tmp;
    size_t *displs;
};

static size_t block_bytes_of(const struct coll_args *a, bool send, struct side sd, int i)
{
    return sd.v ? (send ? a->scounts : a->rcounts)[i] : sd.block;
}

static const char *block_in(const struct coll_args *a, bool send, struct side sd, int i)
{
    const struct coll_layout *l = send ? &a->sl : &a->rl;
    const char *buf = send ? a->sbuf : a->rbuf;
    return sd.v ? buf + (send ? a->sdispls : a->rdispls)[i] : buf + i * (ptrdiff_t)l->count * l->extent;
}

static int pack_side(const struct coll_args *a, bool send, struct side sd, struct packed *pk)
{
    size_t total = sd.block * (size_t)sd.n;
    int st;
    if (sd.v)
        CHECK_GOTO(dense_displs(send ? a->scounts : a->rcounts, sd.n, &pk->displs, &total), out);
    CHECK_GOTO(coll_scratch(total ? total : 1, (void **)&pk->tmp), out);
    for (int i = 0; send && i < sd.n; i++)
        pack_run(block_in(a, true, sd, i), &a->sl, block_bytes_of(a, true, sd, i),
                 pk->tmp + (sd.v ? pk->displs[i] : (size_t)i * sd.block));
out:
    return st;
}

static void unpack_side(const struct coll_args *a, struct side sd, const struct packed *pk)
{
    for (int i = 0; i < sd.n; i++)
        unpack_run(pk->tmp + (sd.v ? pk->displs[i] : (size_t)i * sd.block), block_bytes_of(a, false, sd, i),
                   (char *)block_in(a, false, sd, i), &a->rl);
}

/* bcast: the root packs its whole message, the others unpack it. */
static int run_packed_bcast(struct coll_args *a, int (*run)(struct coll_args *))
{
    struct coll_args packed = *a;
    void *tmp = NULL;
    int st;
    CHECK_GOTO(coll_scratch(a->block, &tmp), out);
    if (a->rank == a->root)
        pack_run(a->rbuf, &a->rl, a->block, tmp);
    packed.rbuf = tmp;
    packed.rl = (struct coll_layout){0};
    CHECK_GOTO(run(&packed), out);
    if (a->rank != a->root)
        unpack_run(tmp, a->block, a->rbuf, &a->rl);
out:
    free(tmp);
    return st;
}

/* The one place where a call with derived sides meets an algorithm that knows only bytes: every
   derived side becomes dense scratch (the send side packed), the algorithm runs on those, the
   receive side is unpacked. Reductions keep their predefined kind (a->basic). */
int coll_run_packed(struct coll_args *a, int (*run)(struct coll_args *))
{
    stats.packed++;
    if (a->op_id == COLL_BCAST)
        return run_packed_bcast(a, run);
    struct side ss = side_of(a, true), rs = side_of(a, false);
    struct packed sp = {0}, rp = {0};
    struct coll_args packed = *a;
    int st;
    if (a->sl.type && ss.n > 0) {
        CHECK_GOTO(pack_side(a, true, ss, &sp), out);
        packed.sbuf = sp.tmp;
        if (ss.v)
            packed.sdispls = sp.displs;
    }
    if (a->rl.type && rs.n > 0) {
        CHECK_GOTO(pack_side(a, false, rs, &rp), out);
        packed.rbuf = rp.tmp;
        if (rs.v)
            packed.rdispls = rp.displs;
    }
    packed.sl = packed.rl = (struct coll_layout){0};
    CHECK_GOTO(run(&packed), out);
    if (rp.tmp)
        unpack_side(a, rs, &rp);
out:
    free(sp.tmp);
    free(sp.displs);
    free(rp.tmp);
    free(rp.displs);
    return st;
}

void coll_count_direct(void) { stats.direct++; }

void coll_stats_report(void)
{
    if (rt_cfg_long("HINT_COLL_STATS") && stats.direct + stats.packed > 0)
        RT_ERR("coll", "derived-type collective calls: %lu copied straight from and to the layouts, "
               "%lu staged through packed bytes", stats.direct, stats.packed);
    stats.direct = stats.packed = 0;
    order_stats_report();
}
