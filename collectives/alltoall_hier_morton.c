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
 * alltoallv: the node phases gather every member's counts and gatherv / scatterv its packed
 * blocks; a leader knows its row's and its column's cells, and before step 1 sends each owner the
 * sizes of its row's cells in that owner's segment (one small message to step 1's peers), since
 * an owner relays cells between two other nodes whose sizes only their source knows.
 */
#include <stdlib.h>
#include <string.h>

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

/* A member's blocks for other nodes, packed in rank order: remote[k] is the k-th group rank off
   this node. With v counts every block has its own size; the leader holds the node's counts. */
struct morton {
    struct coll_args *a;
    struct hier *h;
    bool v;
    int N, m, me;          /* nodes, members on this node, this node */
    int R;                 /* ranks off this node: P - m */
    size_t b;              /* bytes of one block (alltoall) */
    int *rpos;             /* group rank -> its place among the ranks off this node, -1 on it */
    size_t mine_s, mine_r; /* bytes this member sends off its node, and receives from off it */
    /* the leader's: [m * R] member l's bytes to (scnt) and from (rcnt) the k-th rank off the
       node, and where they lie in the gathered (soff) and scatter (roff) buffers; the totals */
    size_t *scnt, *soff, *rcnt, *roff;
    size_t *gcount, *gdispl, *scount, *sdispl; /* [m] each: member l's part of each buffer */
    size_t gathered_bytes, scatter_bytes;
    size_t *cell;          /* [N * N] bytes of each node-to-node cell; 0 on the diagonal. v: the
                              leader's row and column, and its segment's after the size exchange */
};

static size_t cell_bytes(const struct morton *x, int c) { return x->cell[c]; }

/* Step 1's packing of cell (me, j) from the leader's gathered blocks: member l's blocks for node
   j's members, l by l. */
static char *pack_row_cell(const struct morton *x, const char *gathered, int j, char *out)
{
    const struct hier *h = x->h;
    for (int l = 0; l < x->m; l++)
        for (int t = h->start[j]; t < h->start[j + 1]; t++) {
            size_t k = (size_t)l * (size_t)x->R + (size_t)x->rpos[h->members[t]];
            copy_bytes(out, gathered + x->soff[k], x->scnt[k]);
            out += x->scnt[k];
        }
    return out;
}

/* Step 4's unpacking of cell (i, me): block of node i's member l for member t goes to t's buffer. */
static const char *unpack_col_cell(const struct morton *x, const char *in, int i, char *scatter)
{
    const struct hier *h = x->h;
    for (int l = h->start[i]; l < h->start[i + 1]; l++)
        for (int t = 0; t < x->m; t++) {
            size_t k = (size_t)t * (size_t)x->R + (size_t)x->rpos[h->members[l]];
            copy_bytes(scatter + x->roff[k], in, x->rcnt[k]);
            in += x->rcnt[k];
        }
    return in;
}

/* The leader's tables from every member's counts (cnt: member l's R send counts, then its R
   receive counts), and the cells of its row and column; alltoall: every cell. */
static int leader_tables(struct morton *x, const size_t *cnt)
{
    const struct hier *h = x->h;
    size_t mR = (size_t)x->m * (size_t)x->R, N = (size_t)x->N;
    x->scnt = malloc((4 * mR + 4 * (size_t)x->m + N * N) * sizeof *x->scnt);
    if (x->scnt == NULL)
        return HINT_ERR_NOMEM;
    x->soff = x->scnt + mR;
    x->rcnt = x->soff + mR;
    x->roff = x->rcnt + mR;
    x->gcount = x->roff + mR;
    x->gdispl = x->gcount + x->m;
    x->scount = x->gdispl + x->m;
    x->sdispl = x->scount + x->m;
    x->cell = x->sdispl + x->m;
    size_t g = 0, sc = 0;
    for (int l = 0; l < x->m; l++) {
        x->gdispl[l] = g;
        x->sdispl[l] = sc;
        for (int k = 0; k < x->R; k++) {
            size_t at = (size_t)l * (size_t)x->R + (size_t)k;
            x->scnt[at] = cnt[(size_t)l * 2 * (size_t)x->R + (size_t)k];
            x->rcnt[at] = cnt[(size_t)l * 2 * (size_t)x->R + (size_t)x->R + (size_t)k];
            x->soff[at] = g;
            x->roff[at] = sc;
            g += x->scnt[at];
            sc += x->rcnt[at];
        }
        x->gcount[l] = g - x->gdispl[l];
        x->scount[l] = sc - x->sdispl[l];
    }
    x->gathered_bytes = g;
    x->scatter_bytes = sc;
    for (size_t c = 0; c < N * N; c++) {
        int i = (int)(c / N), j = (int)(c % N);
        x->cell[c] = i == j ? 0 : (size_t)hier_node_size(h, i) * (size_t)hier_node_size(h, j) * x->b;
        if (!x->v || i == j || (i != x->me && j != x->me))
            continue;
        /* v: the row from the send counts, the column from the receive counts */
        x->cell[c] = 0;
        for (int l = 0; l < x->m; l++)
            for (int t = h->start[i == x->me ? j : i]; t < h->start[(i == x->me ? j : i) + 1]; t++) {
                size_t k = (size_t)l * (size_t)x->R + (size_t)x->rpos[h->members[t]];
                x->cell[c] += i == x->me ? x->scnt[k] : x->rcnt[k];
            }
    }
    return HINT_SUCCESS;
}

/* v: the sizes of the cells in this leader's segment that belong to neither its row nor its
   column. Leader i sends owner s the sizes of its row's cells in segment s, in Z order, in one
   message ahead of the cells (the owner must know how much to receive and where each cell
   ends): the same peers as step 1, sqrt(N) more small messages per leader. */
static int exchange_sizes(struct morton *x)
{
    const struct hier *h = x->h;
    int N = x->N, me = x->me, nrq = 0, st = HINT_SUCCESS;
    size_t *mine = malloc(2 * (size_t)N * (size_t)N * sizeof *mine), *theirs = mine ? mine + (size_t)N * N : NULL;
    hint_request *rq = coll_requests(2 * (size_t)N);
    struct coll_args s0;
    hier_sub(x->a, h->column, COLL_ALLTOALLV, &s0);
    if (mine == NULL || rq == NULL) {
        free(mine);
        free(rq);
        return HINT_ERR_NOMEM;
    }
    /* theirs: segment me's cells in Z order, row by row as they arrive; mine: my row's cells
       in segment s at mine + s * N */
    for (int i = 0, at = 0; i < N; i++) {
        int n = 0;
        for (int k = me * N; k < (me + 1) * N; k++)
            n += h->zcells[k] / N == i && h->zcells[k] % N != i;
        if (n > 0 && i != me)
            CHECK_GOTO(coll_irecv(theirs + at, (size_t)n * sizeof *theirs, i, &s0, &rq[nrq++]), out);
        at += n;
    }
    for (int s = 0; s < N; s++) {
        int n = 0;
        for (int k = s * N; k < (s + 1) * N; k++)
            if (h->zcells[k] / N == me && h->zcells[k] % N != me)
                mine[(size_t)s * N + (size_t)n++] = x->cell[h->zcells[k]];
        if (n > 0 && s != me)
            CHECK_GOTO(coll_isend(mine + (size_t)s * N, (size_t)n * sizeof *mine, s, &s0, &rq[nrq++]), out);
    }
    CHECK_GOTO(coll_wait_free(rq, (size_t)nrq, HINT_SUCCESS), out);
    rq = NULL;
    for (int i = 0, at = 0; i < N; i++)
        for (int k = me * N; k < (me + 1) * N; k++) {
            int c = h->zcells[k];
            if (c / N == i && c % N != i) {
                if (i != me)
                    x->cell[c] = theirs[at];
                at++;
            }
        }
out:
    if (rq)
        st = coll_wait_free(rq, (size_t)nrq, st);
    free(mine);
    return st;
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
    if (x->v)
        CHECK_GOTO(exchange_sizes(x), out);
    /* bytes this leader sends each owner (its row in that segment) and receives from each row */
    size_t rows_in = 0, total_out = 0, total_in = 0;
    for (int k = 0; k < N * N; k++) {
        int c = h->zcells[k], s = k / N, i = c / N;
        if (i == me)
            rowb[s] += cell_bytes(x, c);
        if (s == me) {
            colb[i] += cell_bytes(x, c);
            rows_in += cell_bytes(x, c);
        }
    }
    for (int n = 0; n < N; n++) {
        total_out += cell_bytes(x, me * N + n);
        total_in += cell_bytes(x, n * N + me);
    }
    /* step 3 receives into the same buffer: my column (alltoall: as large as my row) */
    CHECK_GOTO(coll_scratch(total_out > total_in ? total_out : total_in, (void **)&sendrow), out);
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
    char *recv3 = sendrow; /* step 1's buffer is free again */
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

/* A node phase between the members and the leader: gather (of `bytes` each) or scatter, or with
   v counts gatherv or scatterv with the leader's per-member counts and places. */
static int node_phase(const struct morton *x, int op_id, const char *sbuf, char *rbuf, size_t bytes,
                      const size_t *counts, const size_t *displs)
{
    if (x->m == 1) {
        copy_bytes(rbuf, sbuf, bytes);
        return HINT_SUCCESS;
    }
    struct coll_args s;
    hier_sub(x->a, x->h->node, op_id, &s);
    s.sbuf = sbuf;
    s.rbuf = rbuf;
    s.block = bytes;
    s.root = 0;
    if (op_id == COLL_GATHERV) {
        s.rcounts = counts;
        s.rdispls = displs;
    } else if (op_id == COLL_SCATTERV) {
        s.scounts = counts;
        s.sdispls = displs;
    }
    return hier_node_run(&s);
}

/* This member's counts to and from the ranks off its node (R each), and its totals. */
static void my_counts(struct morton *x, size_t *cnt)
{
    const struct coll_args *a = x->a;
    x->mine_s = x->mine_r = 0;
    for (int r = 0; r < a->size; r++) {
        if (x->rpos[r] < 0)
            continue;
        cnt[x->rpos[r]] = x->v ? a->scounts[r] : x->b;
        cnt[x->R + x->rpos[r]] = x->v ? a->rcounts[r] : x->b;
        x->mine_s += cnt[x->rpos[r]];
        x->mine_r += cnt[x->R + x->rpos[r]];
    }
}

/* The node's counts at the leader: gathered (v), or every member's the same (alltoall). */
static int node_counts(struct morton *x, const size_t *mycnt, size_t **all)
{
    size_t each = 2 * (size_t)x->R * sizeof **all;
    if (x->h->my_local == 0 && (*all = malloc((size_t)x->m * each)) == NULL)
        return HINT_ERR_NOMEM;
    if (x->v)
        return node_phase(x, COLL_GATHER, (const char *)mycnt, (char *)*all, each, NULL, NULL);
    if (x->h->my_local == 0)
        for (int l = 0; l < x->m; l++)
            memcpy((char *)*all + (size_t)l * each, mycnt, each);
    return HINT_SUCCESS;
}

static int hier_morton(struct coll_args *a, bool v)
{
    struct hier *h;
    struct morton x = {.a = a, .b = v ? 0 : a->block, .v = v};
    char *mine = NULL, *gathered = NULL, *scatter = NULL;
    size_t *mycnt = NULL, *allcnt = NULL;
    int st;
    CHECK_GOTO(hier_get(a, &h), out);
    CHECK_GOTO(hier_alltoall_node_step(a, h, v), out);
    x.h = h;
    x.N = h->nnodes;
    x.me = h->my_node;
    x.m = hier_node_size(h, x.me);
    x.R = a->size - x.m;
    if (x.N == 1)
        goto done;
    CHECK_GOTO(zcells(h), out);
    x.rpos = malloc((size_t)a->size * sizeof *x.rpos);
    mycnt = malloc(2 * (size_t)x.R * sizeof *mycnt);
    if (x.rpos == NULL || mycnt == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    for (int r = 0, k = 0; r < a->size; r++)
        x.rpos[r] = h->node_of[r] == x.me ? -1 : k++;
    my_counts(&x, mycnt);
    CHECK_GOTO(node_counts(&x, mycnt, &allcnt), out);
    if (h->my_local == 0)
        CHECK_GOTO(leader_tables(&x, allcnt), out);
    CHECK_GOTO(coll_scratch(x.mine_s > x.mine_r ? x.mine_s : x.mine_r, (void **)&mine), out);
    for (int r = 0, at = 0; r < a->size; r++)
        if (x.rpos[r] >= 0) {
            size_t n = mycnt[x.rpos[r]];
            copy_bytes(mine + at, a->sbuf + (v ? a->sdispls[r] : (size_t)r * x.b), n);
            at += n;
        }
    if (h->my_local == 0) {
        CHECK_GOTO(coll_scratch(x.gathered_bytes, (void **)&gathered), out);
        CHECK_GOTO(coll_scratch(x.scatter_bytes, (void **)&scatter), out);
    }
    CHECK_GOTO(node_phase(&x, v ? COLL_GATHERV : COLL_GATHER, mine, gathered, x.mine_s, x.gcount, x.gdispl), out);
    if (h->my_local == 0)
        CHECK_GOTO(leaders(&x, gathered, scatter), out);
    CHECK_GOTO(node_phase(&x, v ? COLL_SCATTERV : COLL_SCATTER, scatter, mine, x.mine_r, x.scount, x.sdispl), out);
    for (int r = 0, at = 0; r < a->size; r++)
        if (x.rpos[r] >= 0) {
            size_t n = mycnt[x.R + x.rpos[r]];
            copy_bytes(a->rbuf + (v ? a->rdispls[r] : (size_t)r * x.b), mine + at, n);
            at += n;
        }
done:
    coll_record(a->op_id, "hier_morton");
out:
    free(x.rpos);
    free(x.scnt);
    free(mycnt);
    free(allcnt);
    free(mine);
    free(gathered);
    free(scatter);
    return st;
}

int alltoall_hier_morton(struct coll_args *a) { return hier_morton(a, false); }
int alltoallv_hier_morton(struct coll_args *a) { return hier_morton(a, true); }
