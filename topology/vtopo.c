/*
 * topology/vtopo.c — cartesian and graph virtual topologies (MPI_Cart_*, MPI_Dist_graph_create_
 * adjacent and MPI_Dist_graph_create without weights). A topology is built once when its group is created and kept in
 * the group's cache; the neighbourhood collectives read its neighbour lists.
 *
 * Cartesian ranks are row-major (the last dimension varies fastest) and keep the order of the
 * parent group: `reorder` is accepted and ignored, which MPI allows (hint_group_reorder places
 * ranks by the machine's hierarchy). A cartesian group's neighbours are, per dimension, the rank
 * at -1 then the rank at +1, HINT_PROC_NULL beyond a non-periodic edge, the same list for
 * sources and destinations.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/group.h"
#include "runtime/runtime.h"
#include "topology/vtopo.h"

struct vtopo {
    bool cart;
    int ndims;
    int *dims, *periods, *coords; /* cart: this rank's coordinates */
    int indegree, outdegree;
    int *sources, *dests;         /* cart: both point at the one list of 2 * ndims */
};

static void vtopo_free(void *p)
{
    struct vtopo *t = p;
    if (t == NULL)
        return;
    free(t->dims);
    if (t->dests != t->sources)
        free(t->dests);
    free(t->sources);
    free(t);
}

static void vtopo_destroy(hint_group g, void *p)
{
    (void)g;
    vtopo_free(p);
}

static int vtopo_copy(hint_group from, hint_group to, void *p);

/* The topology is a part of its group (runtime/group.h): freed with it, inherited by a dup. */
static const struct grp_part_ops vtopo_part = {"virtual topology", NULL, vtopo_copy, vtopo_destroy};
int vtopo_key = -1;

int vtopo_setup(void)
{
    vtopo_key = grp_part_register(&vtopo_part);
    return vtopo_key < 0 ? HINT_ERR_INTERNAL : HINT_SUCCESS;
}

static struct vtopo *vtopo_of(hint_group g)
{
    return grp_check(g) == HINT_SUCCESS ? grp_part(g, vtopo_key) : NULL;
}

static void attach(hint_group g, struct vtopo *t) { grp_part_set(g, vtopo_key, t); }

int vtopo_lists(hint_group g, struct vtopo_lists *out)
{
    const struct vtopo *t = vtopo_of(g);
    if (t == NULL)
        return HINT_ERR_TOPOLOGY;
    *out = (struct vtopo_lists){.cart = t->cart, .indegree = t->indegree, .outdegree = t->outdegree,
                                .sources = t->sources, .dests = t->dests};
    return HINT_SUCCESS;
}

/* ---- cartesian ---- */

static void rank_to_coords(const struct vtopo *t, int rank, int coords[])
{
    for (int d = t->ndims - 1; d >= 0; d--) {
        coords[d] = rank % t->dims[d];
        rank /= t->dims[d];
    }
}

/* The rank at coords, periodic dimensions wrapped; -1 when a non-periodic one is outside. */
static int coords_to_rank(const struct vtopo *t, const int coords[])
{
    int rank = 0;
    for (int d = 0; d < t->ndims; d++) {
        int c = coords[d], n = t->dims[d];
        if (t->periods[d])
            c = ((c % n) + n) % n;
        else if (c < 0 || c >= n)
            return -1;
        rank = rank * n + c;
    }
    return rank;
}

/* The rank disp steps from this rank along dim, HINT_PROC_NULL past a non-periodic edge. */
static int shifted(const struct vtopo *t, int dim, int disp)
{
    int *c = malloc((size_t)t->ndims * sizeof *c);
    if (c == NULL)
        return HINT_PROC_NULL;
    memcpy(c, t->coords, (size_t)t->ndims * sizeof *c);
    long moved = (long)c[dim] + disp;
    int r = -1;
    if (t->periods[dim] || (moved >= 0 && moved < t->dims[dim])) {
        c[dim] = (int)(((moved % t->dims[dim]) + t->dims[dim]) % t->dims[dim]);
        r = coords_to_rank(t, c);
    }
    free(c);
    return r < 0 ? HINT_PROC_NULL : r;
}

static struct vtopo *cart_new(int ndims, const int dims[], const int periods[], int rank)
{
    struct vtopo *t = calloc(1, sizeof *t);
    size_t n = (size_t)(ndims > 0 ? ndims : 1);
    if (t == NULL || (t->dims = malloc(3 * n * sizeof(int))) == NULL ||
        (t->sources = malloc(2 * n * sizeof(int))) == NULL) {
        vtopo_free(t);
        return NULL;
    }
    t->cart = true;
    t->ndims = ndims;
    t->periods = t->dims + n;
    t->coords = t->dims + 2 * n;
    for (int d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->periods[d] = periods[d] != 0;
    }
    rank_to_coords(t, rank, t->coords);
    for (int d = 0; d < ndims; d++) {
        t->sources[2 * d] = shifted(t, d, -1);
        t->sources[2 * d + 1] = shifted(t, d, 1);
    }
    t->dests = t->sources;
    t->indegree = t->outdegree = 2 * ndims;
    return t;
}

int hint_cart_create(hint_group g, int ndims, const int dims[], const int periods[], int reorder, hint_group *out)
{
    RT_CHECK_INIT();
    (void)reorder;
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (out == NULL || ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return HINT_ERR_ARG;
    for (int d = 0; d < ndims; d++)
        if (dims[d] <= 0)
            return HINT_ERR_ARG;
    long prod = 1;
    for (int d = 0; d < ndims; d++) {
        if (prod * dims[d] > g->size)
            return HINT_ERR_TOPOLOGY; /* every rank was given the same arguments: all return here */
        prod *= dims[d];
    }
    int st = hint_group_split(g, g->rank < prod ? 0 : HINT_UNDEFINED, g->rank, out);
    if (st != HINT_SUCCESS || *out == HINT_GROUP_NULL)
        return st;
    struct vtopo *t = cart_new(ndims, dims, periods, (*out)->rank);
    if (t == NULL) {
        hint_group_free(out);
        return HINT_ERR_NOMEM;
    }
    attach(*out, t);
    return HINT_SUCCESS;
}

static int cart_of(hint_group g, const struct vtopo **t)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    *t = vtopo_of(g);
    return *t != NULL && (*t)->cart ? HINT_SUCCESS : HINT_ERR_TOPOLOGY;
}

int hint_cart_coords(hint_group g, int rank, int ndims, int coords[])
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (rank < 0 || rank >= g->size)
        return HINT_ERR_RANK;
    if (ndims < t->ndims || (t->ndims > 0 && coords == NULL))
        return HINT_ERR_ARG;
    rank_to_coords(t, rank, coords);
    return HINT_SUCCESS;
}

int hint_cart_rank(hint_group g, const int coords[], int *rank)
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (rank == NULL || (t->ndims > 0 && coords == NULL))
        return HINT_ERR_ARG;
    int r = coords_to_rank(t, coords);
    if (r < 0)
        return HINT_ERR_RANK;
    *rank = r;
    return HINT_SUCCESS;
}

int hint_cart_shift(hint_group g, int dim, int disp, int *source, int *dest)
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (dim < 0 || dim >= t->ndims || source == NULL || dest == NULL || disp == INT_MIN)
        return HINT_ERR_ARG;
    *source = shifted(t, dim, -disp);
    *dest = shifted(t, dim, disp);
    return HINT_SUCCESS;
}

/* ---- graphs ---- */

static int check_list(int n, const int list[], int size)
{
    if (n < 0 || (n > 0 && list == NULL))
        return HINT_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (list[i] < 0 || list[i] >= size)
            return HINT_ERR_RANK;
    return HINT_SUCCESS;
}

static int *copy_list(int n, const int list[])
{
    int *c = malloc((size_t)(n > 0 ? n : 1) * sizeof *c);
    if (c != NULL && n > 0)
        memcpy(c, list, (size_t)n * sizeof *c);
    return c;
}

/* A new group (a dup of g's ranks, collective) with the graph's lists attached. */
static int graph_group(hint_group g, int indegree, const int sources[], int outdegree, const int dests[],
                       hint_group *out)
{
    int st;
    if ((st = hint_group_split(g, 0, g->rank, out)) != HINT_SUCCESS)
        return st;
    struct vtopo *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->indegree = indegree;
        t->outdegree = outdegree;
        t->sources = copy_list(indegree, sources);
        t->dests = copy_list(outdegree, dests);
    }
    if (t == NULL || t->sources == NULL || t->dests == NULL) {
        vtopo_free(t);
        hint_group_free(out);
        return HINT_ERR_NOMEM;
    }
    attach(*out, t);
    return HINT_SUCCESS;
}

int hint_graph_create_adjacent(hint_group g, int indegree, const int sources[], int outdegree, const int dests[],
                               int reorder, hint_group *out)
{
    RT_CHECK_INIT();
    (void)reorder;
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    /* Each rank checks its own lists; all learn whether any failed, so nobody waits for a
       group that will not be made. */
    int mine = out == NULL ? HINT_ERR_ARG : check_list(indegree, sources, g->size);
    if (mine == HINT_SUCCESS)
        mine = check_list(outdegree, dests, g->size);
    int *all = malloc((size_t)g->size * sizeof *all);
    if (all == NULL)
        return HINT_ERR_NOMEM;
    int st = grp_allgather_ints(g, &mine, 1, all, GRP_TAG_TOPO);
    for (int r = 0; st == HINT_SUCCESS && r < g->size; r++)
        if (all[r] != HINT_SUCCESS)
            st = mine != HINT_SUCCESS ? mine : all[r];
    free(all);
    if (st != HINT_SUCCESS)
        return st;
    return graph_group(g, indegree, sources, outdegree, dests, out);
}

/* hint_graph_create's edges on this rank: n sources, degrees[i] destinations each, as pairs
   (source, destination) in the order given; checks them as check_list does. */
static int graph_edges(hint_group g, size_t n, const int sources[], const size_t degrees[], const int dests[],
                       int **pairs, int *nedges)
{
    *pairs = NULL;
    *nedges = 0;
    if (n > 0 && (sources == NULL || degrees == NULL))
        return HINT_ERR_ARG;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (degrees[i] > (size_t)INT_MAX / 2 - total)
            return HINT_ERR_ARG; /* more edges than one int count holds */
        total += degrees[i];
    }
    if (total > 0 && dests == NULL)
        return HINT_ERR_ARG;
    int *p = malloc((total > 0 ? total : 1) * 2 * sizeof *p);
    if (p == NULL)
        return HINT_ERR_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < degrees[i]; j++, k++) {
            int s = sources[i], d = dests[k];
            if (s < 0 || s >= g->size || d < 0 || d >= g->size) {
                free(p);
                return HINT_ERR_RANK;
            }
            p[2 * k] = s;
            p[2 * k + 1] = d;
        }
    *pairs = p;
    *nedges = (int)total;
    return HINT_SUCCESS;
}

/* MPI_Dist_graph_create without weights: any rank may name any edge. Every rank learns every
   edge (one allgather of the counts, one of the edges padded to the longest list), then keeps
   its own out-edges and in-edges in one global order (by the rank that named them, then as it
   named them), so the k-th edge from X to Y is X's k-th out-slot to Y and Y's k-th in-slot from
   X, the matching the neighbourhood collectives need. Memory: P x (most edges one rank names). */
int hint_graph_create(hint_group g, size_t n, const int sources[], const size_t degrees[], const int dests[],
                      int reorder, hint_group *out)
{
    RT_CHECK_INIT();
    (void)reorder;
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    int *pairs = NULL, nedges = 0;
    int mine[2] = {out == NULL ? HINT_ERR_ARG : HINT_SUCCESS, 0};
    if (mine[0] == HINT_SUCCESS)
        mine[0] = graph_edges(g, n, sources, degrees, dests, &pairs, &nedges);
    mine[1] = nedges;
    int P = g->size, most = 0, st;
    int *all = malloc((size_t)P * 2 * sizeof *all);
    if (all == NULL) {
        free(pairs);
        return HINT_ERR_NOMEM;
    }
    st = grp_allgather_ints(g, mine, 2, all, GRP_TAG_TOPO);
    for (int r = 0; st == HINT_SUCCESS && r < P; r++) {
        if (all[2 * r] != HINT_SUCCESS)
            st = mine[0] != HINT_SUCCESS ? mine[0] : all[2 * r];
        most = all[2 * r + 1] > most ? all[2 * r + 1] : most;
    }
    int *counts = all, *edges = NULL, *padded = NULL, *in = NULL, *outl = NULL, nin = 0, nout = 0;
    if (st == HINT_SUCCESS && (size_t)most > (size_t)INT_MAX / 2 / (size_t)P)
        st = HINT_ERR_ARG; /* every rank agrees: the padded exchange would not fit an int count */
    if (st == HINT_SUCCESS) {
        edges = malloc(((size_t)P * (size_t)most * 2 + 1) * sizeof *edges);
        padded = malloc(((size_t)most * 2 + 1) * sizeof *padded);
        if (edges == NULL || padded == NULL)
            st = HINT_ERR_NOMEM; /* a rank short of memory hangs the others: as every allocation here */
    }
    if (st == HINT_SUCCESS) {
        if (nedges > 0)
            memcpy(padded, pairs, (size_t)nedges * 2 * sizeof *padded);
        st = grp_allgather_ints(g, padded, 2 * most, edges, GRP_TAG_TOPO);
    }
    for (int pass = 0; st == HINT_SUCCESS && pass < 2; pass++) {
        /* pass 0 counts, pass 1 fills */
        if (pass == 1) {
            in = malloc((size_t)(nin > 0 ? nin : 1) * sizeof *in);
            outl = malloc((size_t)(nout > 0 ? nout : 1) * sizeof *outl);
            if (in == NULL || outl == NULL) {
                st = HINT_ERR_NOMEM;
                break;
            }
            nin = nout = 0;
        }
        for (int r = 0; r < P; r++)
            for (int e = 0; e < counts[2 * r + 1]; e++) {
                const int *pe = &edges[((size_t)r * (size_t)most + (size_t)e) * 2];
                if (pe[0] == g->rank) {
                    if (pass == 1)
                        outl[nout] = pe[1];
                    nout++;
                }
                if (pe[1] == g->rank) {
                    if (pass == 1)
                        in[nin] = pe[0];
                    nin++;
                }
            }
    }
    if (st == HINT_SUCCESS)
        st = graph_group(g, nin, in, nout, outl, out);
    free(in);
    free(outl);
    free(edges);
    free(padded);
    free(all);
    free(pairs);
    return st;
}

int hint_neighbors_count(hint_group g, int *indegree, int *outdegree)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (indegree == NULL || outdegree == NULL)
        return HINT_ERR_ARG;
    struct vtopo_lists l;
    int st = vtopo_lists(g, &l);
    if (st == HINT_SUCCESS) {
        *indegree = l.indegree;
        *outdegree = l.outdegree;
    }
    return st;
}

int hint_neighbors(hint_group g, int maxin, int sources[], int maxout, int dests[])
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    struct vtopo_lists l;
    int st = vtopo_lists(g, &l);
    if (st != HINT_SUCCESS)
        return st;
    if (maxin < l.indegree || maxout < l.outdegree || (l.indegree > 0 && sources == NULL) ||
        (l.outdegree > 0 && dests == NULL))
        return HINT_ERR_ARG;
    if (l.indegree > 0)
        memcpy(sources, l.sources, (size_t)l.indegree * sizeof *sources);
    if (l.outdegree > 0)
        memcpy(dests, l.dests, (size_t)l.outdegree * sizeof *dests);
    return HINT_SUCCESS;
}

/* Gives `to` (a duplicate of `from`, same ranks) from's topology p, as MPI_Comm_dup does. */
static int vtopo_copy(hint_group from, hint_group to, void *p)
{
    (void)from;
    const struct vtopo *t = p;
    struct vtopo *c;
    if (t->cart)
        c = cart_new(t->ndims, t->dims, t->periods, to->rank);
    else {
        c = calloc(1, sizeof *c);
        if (c != NULL) {
            *c = (struct vtopo){.indegree = t->indegree, .outdegree = t->outdegree};
            c->sources = copy_list(t->indegree, t->sources);
            c->dests = copy_list(t->outdegree, t->dests);
            if (c->sources == NULL || c->dests == NULL) {
                vtopo_free(c);
                c = NULL;
            }
        }
    }
    if (c == NULL)
        return HINT_ERR_NOMEM;
    attach(to, c);
    return HINT_SUCCESS;
}

/* ---- queries and sub-grids (MPI_Topo_test, MPI_Cart_get, MPI_Cart_sub, MPI_Dist_graph_neighbors) ---- */

int hint_topo_test(hint_group g, int *kind)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (kind == NULL)
        return HINT_ERR_ARG;
    const struct vtopo *t = vtopo_of(g);
    /* hint's graphs are all distributed (each rank gives its own lists): never HINT_GRAPH */
    *kind = t == NULL ? HINT_UNDEFINED : t->cart ? HINT_CART : HINT_DIST_GRAPH;
    return HINT_SUCCESS;
}

int hint_cartdim_get(hint_group g, int *ndims)
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (ndims == NULL)
        return HINT_ERR_ARG;
    *ndims = t->ndims;
    return HINT_SUCCESS;
}

int hint_cart_get(hint_group g, int maxdims, int dims[], int periods[], int coords[])
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (maxdims < t->ndims || (t->ndims > 0 && (dims == NULL || periods == NULL || coords == NULL)))
        return HINT_ERR_ARG;
    for (int d = 0; d < t->ndims; d++) {
        dims[d] = t->dims[d];
        periods[d] = t->periods[d];
        coords[d] = t->coords[d];
    }
    return HINT_SUCCESS;
}

/* The sub-grid this rank falls in: its index over the dimensions dropped (row-major, so the
   colour is the same on the ranks that share those coordinates), and the kept dims/periods. */
static int sub_grid(const struct vtopo *t, const int remain[], int dims[], int periods[], int *nkept)
{
    int color = 0;
    *nkept = 0;
    for (int d = 0; d < t->ndims; d++) {
        if (remain[d]) {
            dims[*nkept] = t->dims[d];
            periods[(*nkept)++] = t->periods[d];
        } else
            color = color * t->dims[d] + t->coords[d];
    }
    return color;
}

/* Collective over g. The ranks of one sub-grid keep g's order, which is row-major over the kept
   coordinates, so the sub-group's own row-major numbering is that order and its coordinates
   are the kept ones. */
int hint_cart_sub(hint_group g, const int remain_dims[], hint_group *out)
{
    const struct vtopo *t;
    int st = cart_of(g, &t);
    if (st != HINT_SUCCESS)
        return st;
    if (out == NULL || (t->ndims > 0 && remain_dims == NULL))
        return HINT_ERR_ARG;
    size_t n = (size_t)(t->ndims > 0 ? t->ndims : 1);
    int *dims = malloc(2 * n * sizeof *dims), nkept;
    if (dims == NULL)
        return HINT_ERR_NOMEM; /* before any message: a rank short of memory fails alone */
    int *periods = dims + n;
    int color = sub_grid(t, remain_dims, dims, periods, &nkept);
    CHECK_GOTO(hint_group_split(g, color, g->rank, out), out);
    struct vtopo *sub = cart_new(nkept, dims, periods, (*out)->rank);
    if (sub == NULL) {
        hint_group_free(out);
        st = HINT_ERR_NOMEM;
        goto out;
    }
    attach(*out, sub);
out:
    free(dims);
    return st;
}

/* A distributed graph's lists: HINT_ERR_TOPOLOGY on a cart or a group without a topology. */
static int graph_of(hint_group g, struct vtopo_lists *l)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    int st = vtopo_lists(g, l);
    return st == HINT_SUCCESS && l->cart ? HINT_ERR_TOPOLOGY : st;
}

int hint_graph_neighbors_count(hint_group g, int *indegree, int *outdegree)
{
    struct vtopo_lists l;
    int st = graph_of(g, &l);
    if (st != HINT_SUCCESS)
        return st;
    return hint_neighbors_count(g, indegree, outdegree);
}

int hint_graph_neighbors(hint_group g, int maxin, int sources[], int maxout, int dests[])
{
    struct vtopo_lists l;
    int st = graph_of(g, &l);
    if (st != HINT_SUCCESS)
        return st;
    return hint_neighbors(g, maxin, sources, maxout, dests);
}
