/*
 * runtime/group.c — world, split, split_type, create, dup, free, translate.
 *
 * Context ids: every rank keeps next_ctx, the lowest (even) id it has not used. A new group takes
 * the maximum next_ctx over the ranks that build it, and they all move past it. Two groups that
 * share a rank therefore never share an id, which is all matching needs (a message is matched on
 * context and source). Odd ids are the collective contexts (ctx + 1) of the even ones.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/group.h"
#include "runtime/p2p.h"
#include "runtime/registry.h"
#include "runtime/runtime.h"
#include "topology/topology.h"

static const struct grp_part_ops *parts[GRP_NPARTS];
static int nparts;

int grp_part_register(const struct grp_part_ops *ops)
{
    for (int k = 0; k < nparts; k++)
        if (parts[k] == ops)
            return k; /* registered already (a part registered on first use) */
    if (nparts == GRP_NPARTS) {
        RT_ERR("group", "no room for the group part '%s' (GRP_NPARTS is %d)", ops->name, GRP_NPARTS);
        return -1;
    }
    parts[nparts] = ops;
    return nparts++;
}

/* Asks the registry, never the group: a freed group's memory is not read (runtime/registry.h). */
int grp_check(hint_group g)
{
    if (reg_live(REG_GROUP, g))
        return HINT_SUCCESS;
    return reg_reject(REG_GROUP, g, HINT_ERR_GROUP);
}

/* A group of `size` members given as world ranks; this process is member `rank`. */
static hint_group group_new(int size, const int *world, int rank, uint32_t ctx)
{
    hint_group g = calloc(1, sizeof *g);
    int wsize = rt.boot.size;
    if (g == NULL)
        return NULL;
    g->world = malloc((size_t)size * sizeof *g->world);
    g->from_world = malloc((size_t)wsize * sizeof *g->from_world);
    if (g->world == NULL || g->from_world == NULL || reg_add(REG_GROUP, g) != HINT_SUCCESS) {
        free(g->world);
        free(g->from_world);
        free(g);
        return NULL;
    }
    memcpy(g->world, world, (size_t)size * sizeof *world);
    for (int i = 0; i < wsize; i++)
        g->from_world[i] = -1;
    for (int i = 0; i < size; i++)
        g->from_world[world[i]] = i;
    g->magic = GRP_MAGIC;
    g->ctx = ctx;
    g->rank = rank;
    g->size = size;
    return g;
}

/* Every registered part's create hook, in registration order (the same on every member). */
static int create_parts(hint_group g, bool world)
{
    for (int k = 0; k < nparts; k++)
        if (parts[k]->create) {
            int st = parts[k]->create(g, world);
            if (st != HINT_SUCCESS)
                return st;
        }
    return HINT_SUCCESS;
}

int grp_world_create(hint_group *out)
{
    int n = rt.boot.size;
    int *ranks = malloc((size_t)n * sizeof *ranks);
    if (ranks == NULL)
        return HINT_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    hint_group g = group_new(n, ranks, rt.boot.rank, 0);
    free(ranks);
    rt.next_ctx = 2;
    if (g == NULL)
        return HINT_ERR_NOMEM;
    int st = create_parts(g, true);
    if (st != HINT_SUCCESS) {
        grp_destroy(g);
        return st;
    }
    *out = g;
    return HINT_SUCCESS;
}

/* A group made by this rank: finish it (the parts of the layers above) or report why not. */
static int finish_group(hint_group g, hint_group *out)
{
    if (g == NULL)
        return HINT_ERR_NOMEM;
    int st = create_parts(g, false);
    if (st != HINT_SUCCESS) {
        grp_destroy(g);
        return st;
    }
    *out = g;
    return HINT_SUCCESS;
}

/* A dup inherits the parts whose owners copy them (a virtual topology, as MPI_Comm_dup does). */
static int copy_parts(hint_group from, hint_group to)
{
    for (int k = 0; k < nparts; k++)
        if (parts[k]->copy && from->part[k]) {
            int st = parts[k]->copy(from, to, from->part[k]);
            if (st != HINT_SUCCESS)
                return st;
        }
    return HINT_SUCCESS;
}

void grp_destroy(hint_group g)
{
    reg_remove(REG_GROUP, g);
    for (int k = nparts - 1; k >= 0; k--)
        if (g->part[k] && parts[k]->destroy)
            parts[k]->destroy(g, g->part[k]);
    g->magic = 0;
    free(g->world);
    free(g->from_world);
    free(g);
}

/* Linear gather to rank 0 then broadcast: the runtime's own small exchange, independent of the
   collectives layer so that building groups never depends on algorithm selection. */
int grp_allgather_ints(hint_group g, const int *in, int n, int *out, int tag)
{
    int st = HINT_SUCCESS;
    size_t bytes = (size_t)n * sizeof(int);
    memcpy(out + (size_t)g->rank * n, in, bytes);
    if (g->size == 1)
        return HINT_SUCCESS;
    if (g->rank == 0) {
        for (int r = 1; r < g->size; r++)
            CHECK_GOTO(p2p_recv_bytes(out + (size_t)r * n, bytes, r, tag, g), out);
        for (int r = 1; r < g->size; r++)
            CHECK_GOTO(p2p_send_bytes(out, bytes * (size_t)g->size, r, tag, g), out);
    } else {
        CHECK_GOTO(p2p_send_bytes(in, bytes, 0, tag, g), out);
        CHECK_GOTO(p2p_recv_bytes(out, bytes * (size_t)g->size, 0, tag, g), out);
    }
out:
    return st;
}

/* Whether ok holds on every rank of g, told to all: one int each way through rank 0, no buffer
   of the group's size, so a rank that could not allocate the buffers of an exchange (or what it
   keeps of it) can still take part and make every rank fail it, instead of returning alone while
   the others wait in grp_allgather_ints for it. */
int grp_all_ok(hint_group g, bool ok, bool *all, int tag)
{
    int st = HINT_SUCCESS, v = ok, r_ok = 1;
    if (g->size > 1 && g->rank == 0) {
        for (int r = 1; r < g->size; r++) {
            CHECK_GOTO(p2p_recv_bytes(&r_ok, sizeof r_ok, r, tag, g), out);
            v &= r_ok != 0;
        }
        for (int r = 1; r < g->size; r++)
            CHECK_GOTO(p2p_send_bytes(&v, sizeof v, r, tag, g), out);
    } else if (g->size > 1) {
        CHECK_GOTO(p2p_send_bytes(&v, sizeof v, 0, tag, g), out);
        CHECK_GOTO(p2p_recv_bytes(&v, sizeof v, 0, tag, g), out);
    }
    *all = v != 0;
out:
    return st;
}

int hint_group_rank(hint_group g, int *rank)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (rank == NULL)
        return HINT_ERR_ARG;
    *rank = g->rank;
    return HINT_SUCCESS;
}

int hint_group_size(hint_group g, int *size)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (size == NULL)
        return HINT_ERR_ARG;
    *size = g->size;
    return HINT_SUCCESS;
}

struct member {
    int color, key, rank;
};

static int by_key_then_rank(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int hint_group_split(hint_group g, int color, int key, hint_group *out)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL)
        return HINT_ERR_ARG;
    /* A bad color still takes part (as undefined) so the other ranks do not hang. */
    bool bad_color = color < 0 && color != HINT_UNDEFINED;
    if (bad_color)
        color = HINT_UNDEFINED;
    int st = HINT_SUCCESS;
    int mine[3] = {color, key, (int)rt.next_ctx};
    int *all = malloc((size_t)g->size * sizeof mine);
    struct member *m = malloc((size_t)g->size * sizeof *m);
    int *world = malloc((size_t)g->size * sizeof *world);
    if (all == NULL || m == NULL || world == NULL) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    /* Every rank takes part even with a bad argument elsewhere, so nobody hangs. */
    CHECK_GOTO(grp_allgather_ints(g, mine, 3, all, GRP_TAG_SPLIT), out);
    uint32_t ctx = 0;
    int n = 0;
    for (int r = 0; r < g->size; r++) {
        if ((uint32_t)all[3 * r + 2] > ctx)
            ctx = (uint32_t)all[3 * r + 2];
        if (color != HINT_UNDEFINED && all[3 * r] == color)
            m[n++] = (struct member){color, all[3 * r + 1], r};
    }
    rt.next_ctx = ctx + 2;
    *out = HINT_GROUP_NULL;
    if (bad_color)
        st = HINT_ERR_ARG;
    if (color == HINT_UNDEFINED)
        goto out;
    qsort(m, (size_t)n, sizeof *m, by_key_then_rank);
    int me = 0;
    for (int i = 0; i < n; i++) {
        world[i] = g->world[m[i].rank];
        if (m[i].rank == g->rank)
            me = i;
    }
    {
        int fst = finish_group(group_new(n, world, me, ctx), out);
        if (st == HINT_SUCCESS)
            st = fst;
    }
out:
    free(all);
    free(m);
    free(world);
    return st;
}

int hint_group_split_type(hint_group g, int type, int key, hint_group *out)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL)
        return HINT_ERR_ARG;
    switch (type) {
    case HINT_SPLIT_NODE:
        return hint_group_split(g, rt.boot.node_id, key, out);
    case HINT_SPLIT_SOCKET:
    case HINT_SPLIT_NUMA: {
        /* Every rank takes part; one that cannot tell where it runs goes into no group. */
        int where = -1;
        int st = type == HINT_SPLIT_SOCKET ? topo_socket_of_self(&where) : topo_numa_of_self(&where);
        if (st != HINT_SUCCESS)
            RT_ERR("group", "cannot tell this rank's %s (%s); it gets no group",
                   type == HINT_SPLIT_SOCKET ? "socket" : "NUMA node", topo_last_error());
        int color = st == HINT_SUCCESS && where >= 0 ? rt.boot.node_id * 4096 + where : HINT_UNDEFINED;
        int sst = hint_group_split(g, color, key, out);
        return sst != HINT_SUCCESS ? sst : st;
    }
    default:
        return HINT_ERR_ARG;
    }
}

int hint_group_dup(hint_group g, hint_group *out)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL)
        return HINT_ERR_ARG;
    int st = hint_group_split(g, 0, g->rank, out);
    if (st == HINT_SUCCESS && (st = copy_parts(g, *out)) != HINT_SUCCESS)
        hint_group_free(out);
    return st;
}

/* Members of g listed in ranks[] agree on a context id among themselves: the first listed rank
   collects every member's next_ctx and sends back the maximum. */
static int agree_ctx(hint_group g, int n, const int ranks[], int me, uint32_t *ctx)
{
    int st = HINT_SUCCESS;
    int mine = (int)rt.next_ctx, best = mine;
    if (me == 0) {
        for (int i = 1; i < n; i++) {
            int v;
            CHECK_GOTO(p2p_recv_bytes(&v, sizeof v, ranks[i], GRP_TAG_CREATE, g), out);
            if (v > best)
                best = v;
        }
        for (int i = 1; i < n; i++)
            CHECK_GOTO(p2p_send_bytes(&best, sizeof best, ranks[i], GRP_TAG_CREATE, g), out);
    } else {
        CHECK_GOTO(p2p_send_bytes(&mine, sizeof mine, ranks[0], GRP_TAG_CREATE, g), out);
        CHECK_GOTO(p2p_recv_bytes(&best, sizeof best, ranks[0], GRP_TAG_CREATE, g), out);
    }
    *ctx = (uint32_t)best;
    rt.next_ctx = (uint32_t)best + 2;
out:
    return st;
}

int hint_group_create(hint_group g, int n, const int ranks[], hint_group *out)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL || n < 0 || (n > 0 && ranks == NULL))
        return HINT_ERR_ARG;
    int me = -1;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size)
            return HINT_ERR_RANK;
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i])
                return HINT_ERR_RANK;
        if (ranks[i] == g->rank)
            me = i;
    }
    if (me < 0)
        return HINT_ERR_RANK; /* only the listed ranks call it */
    int st = HINT_SUCCESS;
    uint32_t ctx;
    int *world = malloc((size_t)n * sizeof *world);
    if (world == NULL)
        return HINT_ERR_NOMEM;
    CHECK_GOTO(agree_ctx(g, n, ranks, me, &ctx), out);
    for (int i = 0; i < n; i++)
        world[i] = g->world[ranks[i]];
    st = finish_group(group_new(n, world, me, ctx), out);
out:
    free(world);
    return st;
}

bool (*grp_free_deferred)(hint_group g);

int hint_group_free(hint_group *g)
{
    RT_CHECK_INIT();
    if (g == NULL || grp_check(*g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (*g == rt.world)
        return HINT_ERR_GROUP;
    if (grp_free_deferred == NULL || !grp_free_deferred(*g))
        grp_destroy(*g);
    *g = HINT_GROUP_NULL;
    return HINT_SUCCESS;
}

int hint_group_translate(hint_group a, int n, const int ranks_a[], hint_group b, int ranks_b[])
{
    RT_CHECK_INIT();
    if (grp_check(a) != HINT_SUCCESS || grp_check(b) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (n < 0 || (n > 0 && (ranks_a == NULL || ranks_b == NULL)))
        return HINT_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (ranks_a[i] != HINT_PROC_NULL && (ranks_a[i] < 0 || ranks_a[i] >= a->size))
            return HINT_ERR_RANK;
    for (int i = 0; i < n; i++) {
        if (ranks_a[i] == HINT_PROC_NULL) {
            ranks_b[i] = HINT_PROC_NULL;
            continue;
        }
        int w = a->world[ranks_a[i]];
        int r = b->from_world[w];
        ranks_b[i] = r < 0 ? HINT_UNDEFINED : r;
    }
    return HINT_SUCCESS;
}

/* Mixed-radix reordering: the rank at natural position old gets rank map[old] in the new group
   (topology/ computes map from the hierarchy and order). Collective over g. */
int hint_group_reorder(hint_group g, int nlevels, const int h[], const int order[], hint_group *out)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL || h == NULL || order == NULL || nlevels <= 0)
        return HINT_ERR_ARG;
    struct topo_hier hier;
    int st = topo_hier_set(&hier, nlevels, h);
    if (st == HINT_SUCCESS)
        st = topo_check_size(&hier, g->size);
    int *map = st == HINT_SUCCESS ? malloc((size_t)g->size * sizeof *map) : NULL;
    if (st == HINT_SUCCESS && map == NULL)
        st = HINT_ERR_NOMEM;
    if (st == HINT_SUCCESS)
        st = topo_rank_map(nlevels, h, order, map);
    if (st != HINT_SUCCESS) {
        free(map);
        return st; /* every rank was given the same arguments, so every rank returns here */
    }
    st = hint_group_split(g, 0, map[g->rank], out);
    free(map);
    return st;
}

hint_group hint_world(void) { return rt_running() ? rt.world : HINT_GROUP_NULL; }
