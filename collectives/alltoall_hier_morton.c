/*
 * alltoall hier_morton — the Morton multi-node alltoall (MN-CO, papers/004 §2.5) in its
 * topology-aware form (§4.1.3: intra-node packing, inter-node transpose by node leaders,
 * intra-node unpacking), for any number of nodes and members per node:
 *  0. the node's own alltoall moves the blocks between members of a node (hier_hint's step);
 *     every member packs its blocks for other nodes, in rank order, and a node gather brings
 *     them to the leader;
 *  1. the N x N matrix of node-to-node cells (cell (i, j): node i's members' blocks for node j's
 *     members) is cut along the Z curve into N equal segments, leader s owning segment s; leader
 *     i sends leader s, in one message, the cells of row i in segment s;
 *  2. leader s transposes locally: the cells it received, in Z order, regrouped by column;
 *  3. leader s sends leader j, in one message, the cells of column j in its segment;
 *  4. each leader unpacks the cells into one buffer per member, and a node scatter hands each
 *     member its blocks from other nodes, which it places in its receive buffer.
 * With N = 2^n, n even, a segment is a sqrt(N) x sqrt(N) square: sqrt(N) messages per leader in
 * each of steps 1 and 3 (2 sqrt(N) in all, against N - 1 for pairwise among leaders); N not a
 * power of two gives segments of irregular shape, which aggregation handles the same way (the
 * paper left that case open). The diagonal cells stay on their node (step 0). Steps 1 and 3 post
 * all their messages at once; nothing overlaps the node steps (the paper's MN-CO does not either).
 */
#include <stdlib.h>

#include "collectives/algs.h"
#include "collectives/hier.h"

/* Morton code of (row, col): bits interleaved, the row's above the column's. */
static uint64_t zcode(uint32_t row, uint32_t col)
{
    uint64_t z = 0;
    for (int b = 0; b < 32; b++)
        z |= (uint64_t)((col >> b) & 1u) << (2 * b) | (uint64_t)((row >> b) & 1u) << (2 * b + 1);
    return z;
}

static int by_zcode(const void *x, const void *y)
{
    const uint64_t *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* The N^2 cells in Z order, once per group. */
static int zcells(struct hier *h)
{
    if (h->zcells)
        return HINT_SUCCESS;
    size_t N = (size_t)h->nnodes;
    uint64_t *pairs = malloc(N * N * 2 * sizeof *pairs);
    h->zcells = malloc(N * N * sizeof *h->zcells);
    if (pairs == NULL || h->zcells == NULL) {
        free(pairs);
        free(h->zcells);
        h->zcells = NULL;
        return HINT_ERR_NOMEM;
    }
    for (size_t c = 0; c < N * N; c++) {
        pairs[2 * c] = zcode((uint32_t)(c / N), (uint32_t)(c % N));
        pairs[2 * c + 1] = c;
    }
    qsort(pairs, N * N, 2 * sizeof *pairs, by_zcode);
    for (size_t c = 0; c < N * N; c++)
        h->zcells[c] = (int)pairs[2 * c + 1];
    free(pairs);
    return HINT_SUCCESS;
}

/* A member's blocks for other nodes, packed: remote[k] is the k-th group rank off this node. */
struct morton {
    struct coll_args *a;
    struct hier *h;
    int N, m, me;          /* nodes, members on this node, this node */
    size_t b;              /* bytes of one block */
    int *rpos;             /* group rank -> its place among the ranks off this node, -1 on it */
    size_t remote;         /* bytes a member sends off its node (and receives): (P - m) b */
};

static size_t cell_bytes(const struct morton *x, int c)
{
    int i = c / x->N, j = c % x->N;
    return i == j ? 0 : (size_t)hier_node_size(x->h, i) * (size_t)hier_node_size(x->h, j) * x->b;
}

/* Step 1's packing of cell (me, j) from the leader's gathered blocks: member l's blocks for node
   j's members, l by l. */
static char *pack_row_cell(const struct morton *x, const char *gathered, int j, char *out)
{
    const struct hier *h = x->h;
    for (int l = 0; l < x->m; l++)
        for (int t = h->start[j]; t < h->start[j + 1]; t++, out += x->b)
            copy_bytes(out, gathered + (size_t)l * x->remote + (size_t)x->rpos[h->members[t]] * x->b, x->b);
    return out;
}

/* Step 4's unpacking of cell (i, me): block of node i's member l for member t goes to t's buffer. */
static const char *unpack_col_cell(const struct morton *x, const char *in, int i, char *scatter)
{
    const struct hier *h = x->h;
    for (int l = h->start[i]; l < h->start[i + 1]; l++)
        for (int t = 0; t < x->m; t++, in += x->b)
            copy_bytes(scatter + (size_t)t * x->remote + (size_t)x->rpos[h->members[l]] * x->b, in, x->b);
    return in;
}

/* Steps 1-3 among the leaders: from the gathered blocks to the scatter buffers. */
static int leaders(struct morton *x, const char *gathered, char *scatter)
{
    const struct hier *h = x->h;
    int N = x->N, me = x->me, st = HINT_SUCCESS, nrq = 0;
    size_t *rowb = calloc(4 * (size_t)N, sizeof *rowb), *colb = rowb + N, *rowoff = colb + N, *coloff = rowoff + N;
    char **in = calloc(2 * (size_t)N, sizeof *in), **out = in + N;
    hint_request *rq = coll_requests(2 * (size_t)N);
    char *sendrow = NULL, *cols = NULL;
    struct coll_args s1, s3;
    hier_sub(x->a, h->column, COLL_ALLTOALL, &s1);
    hier_sub(x->a, h->column, COLL_ALLTOALL, &s3);
    if (!rowb || !in || !rq) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    /* bytes this leader sends each owner (its row in that segment) and receives from each row */
    size_t rows_in = 0, total_out = 0;
    for (int k = 0; k < N * N; k++) {
        int c = h->zcells[k], s = k / N, i = c / N;
        if (i == me)
            rowb[s] += cell_bytes(x, c);
        if (s == me) {
            colb[i] += cell_bytes(x, c);
            rows_in += cell_bytes(x, c);
        }
    }
    total_out = (size_t)x->m * x->remote;
    CHECK_GOTO(coll_scratch(total_out, (void **)&sendrow), out);
    CHECK_GOTO(coll_scratch(2 * rows_in, (void **)&cols), out);
    /* step 1: receives from every row with cells in my segment, my row packed per owner and sent */
    for (size_t i = 0, off = 0; i < (size_t)N; off += colb[i], i++) {
        in[i] = cols + off;
        if (colb[i] && (int)i != me)
            CHECK_GOTO(coll_irecv(in[i], colb[i], (int)i, &s1, &rq[nrq++]), out);
    }
    char *p = sendrow;
    for (int s = 0; s < N; s++) {
        out[s] = p;
        for (int k = s * N; k < (s + 1) * N; k++) {
            int c = h->zcells[k];
            if (c / N == me && c % N != me)
                p = pack_row_cell(x, gathered, c % N, p);
        }
        if (s == me)
            copy_bytes(in[me], out[me], rowb[me]);
        else if (rowb[s])
            CHECK_GOTO(coll_isend(out[s], rowb[s], s, &s1, &rq[nrq++]), out);
    }
    CHECK_GOTO(coll_wait_free(rq, (size_t)nrq, HINT_SUCCESS), out);
    rq = NULL;
    nrq = 0;
    /* step 2: the local transpose, my segment's cells regrouped by column in Z order */
    char *tcols = cols + rows_in;
    size_t at = 0;
    for (int j = 0; j < N; j++) {
        out[j] = tcols + at;
        for (int k = me * N; k < (me + 1) * N; k++)
            if (h->zcells[k] % N == j)
                at += cell_bytes(x, h->zcells[k]);
        coloff[j] = (size_t)(out[j] - tcols);
    }
    for (int i = 0; i < N; i++)
        rowoff[i] = 0;
    for (int k = me * N; k < (me + 1) * N; k++) {
        int c = h->zcells[k], i = c / N, j = c % N;
        size_t n = cell_bytes(x, c);
        copy_bytes(tcols + coloff[j], in[i] + rowoff[i], n);
        coloff[j] += n;
        rowoff[i] += n;
    }
    /* step 3: column j of my segment to leader j; from every owner, my column of its segment */
    if ((rq = coll_requests(2 * (size_t)N)) == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    size_t *fromb = rowb; /* reused: bytes of my column in segment s */
    for (int s = 0; s < N; s++)
        fromb[s] = 0;
    for (int k = 0; k < N * N; k++)
        if (h->zcells[k] % N == me)
            fromb[k / N] += cell_bytes(x, h->zcells[k]);
    char *recv3 = sendrow; /* step 1's buffer is free again: my column is m (P - m) blocks too */
    for (size_t s = 0, off = 0; s < (size_t)N; s++) {
        in[s] = recv3 + off;
        off += fromb[s];
        if (fromb[s] && (int)s != me)
            CHECK_GOTO(coll_irecv(in[s], fromb[s], (int)s, &s3, &rq[nrq++]), out);
    }
    for (int j = 0; j < N; j++) {
        size_t n = coloff[j] - (size_t)(out[j] - tcols);
        if (j == me)
            copy_bytes(in[me], out[me], n);
        else if (n)
            CHECK_GOTO(coll_isend(out[j], n, j, &s3, &rq[nrq++]), out);
    }
    CHECK_GOTO(coll_wait_free(rq, (size_t)nrq, HINT_SUCCESS), out);
    rq = NULL;
    nrq = 0;
    /* step 4's first half: the cells of my column, segment by segment in Z order, unpacked */
    for (int s = 0; s < N; s++) {
        const char *q = in[s];
        for (int k = s * N; k < (s + 1) * N; k++) {
            int c = h->zcells[k];
            if (c % N == me && c / N != me)
                q = unpack_col_cell(x, q, c / N, scatter);
        }
    }
out:
    if (rq)
        st = coll_wait_free(rq, (size_t)nrq, st);
    free(sendrow);
    free(cols);
    free(rowb);
    free(in);
    return st;
}

static int node_gather_or_scatter(const struct morton *x, int op_id, char *mine, char *leader_buf)
{
    if (x->m == 1) {
        if (op_id == COLL_GATHER)
            copy_bytes(leader_buf, mine, x->remote);
        else
            copy_bytes(mine, leader_buf, x->remote);
        return HINT_SUCCESS;
    }
    struct coll_args s;
    hier_sub(x->a, x->h->node, op_id, &s);
    s.sbuf = op_id == COLL_GATHER ? mine : leader_buf;
    s.rbuf = op_id == COLL_GATHER ? leader_buf : mine;
    s.block = x->remote;
    s.root = 0;
    return hier_node_run(&s);
}

int alltoall_hier_morton(struct coll_args *a)
{
    struct hier *h;
    struct morton x = {.a = a, .b = a->block};
    char *mine = NULL, *gathered = NULL, *scatter = NULL;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    CHECK_GOTO(hier_alltoall_node_step(a, h, false), out);
    x.h = h;
    x.N = h->nnodes;
    x.me = h->my_node;
    x.m = hier_node_size(h, x.me);
    x.remote = (size_t)(a->size - x.m) * x.b;
    if (x.N == 1)
        goto done;
    CHECK_GOTO(zcells(h), out);
    if ((x.rpos = malloc((size_t)a->size * sizeof *x.rpos)) == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    for (int r = 0, k = 0; r < a->size; r++)
        x.rpos[r] = h->node_of[r] == x.me ? -1 : k++;
    CHECK_GOTO(coll_scratch(x.remote, (void **)&mine), out);
    for (int r = 0; r < a->size; r++)
        if (x.rpos[r] >= 0)
            copy_bytes(mine + (size_t)x.rpos[r] * x.b, a->sbuf + (size_t)r * x.b, x.b);
    if (h->my_local == 0) {
        CHECK_GOTO(coll_scratch((size_t)x.m * x.remote, (void **)&gathered), out);
        CHECK_GOTO(coll_scratch((size_t)x.m * x.remote, (void **)&scatter), out);
    }
    CHECK_GOTO(node_gather_or_scatter(&x, COLL_GATHER, mine, gathered), out);
    if (h->my_local == 0)
        CHECK_GOTO(leaders(&x, gathered, scatter), out);
    CHECK_GOTO(node_gather_or_scatter(&x, COLL_SCATTER, mine, scatter), out);
    for (int r = 0; r < a->size; r++)
        if (x.rpos[r] >= 0)
            copy_bytes(a->rbuf + (size_t)r * x.b, mine + (size_t)x.rpos[r] * x.b, x.b);
done:
    coll_record(a->op_id, "hier_morton");
out:
    free(x.rpos);
    free(mine);
    free(gathered);
    free(scatter);
    return st;
}
