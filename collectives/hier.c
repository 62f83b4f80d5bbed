/*
 * collectives/hier.c — the node hierarchy of a group (hier.h): the node map read for the group's
 * members (no message), the node and column sub-groups made by two splits on first use, kept in
 * the group's collective state and freed with it; and how a phase runs on a sub-group.
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/hier.h"
#include "collectives/rules.h"
#include "runtime/group.h"
#include "runtime/runtime.h"

static void hier_free(void *p)
{
    struct hier *h = p;
    if (h == NULL)
        return;
    /* the sub-groups are the library's own: gone with the group, without a call of the user's */
    if (h->node)
        grp_destroy(h->node);
    if (h->column)
        grp_destroy(h->column);
    free(h->start);
    free(h->members);
    free(h->node_of);
    free(h->local_of);
    free(h->zcells);
    free(h);
}

/* Nodes numbered by first appearance in g's rank order; members of a node in g's order. The
   node map is the same on every rank, so every member finds the same numbering. */
static int map_nodes(hint_group g, struct hier *h)
{
    int P = g->size, K = rt.boot.nnodes;
    int *index = malloc((size_t)K * sizeof *index), *count = calloc((size_t)K + 1, sizeof *count);
    h->start = calloc((size_t)K + 1, sizeof *h->start);
    h->members = malloc((size_t)P * sizeof *h->members);
    h->node_of = malloc((size_t)P * sizeof *h->node_of);
    h->local_of = malloc((size_t)P * sizeof *h->local_of);
    int st = HINT_SUCCESS;
    if (!index || !count || !h->start || !h->members || !h->node_of || !h->local_of) {
        st = HINT_ERR_NOMEM;
        goto out;
    }
    for (int k = 0; k < K; k++)
        index[k] = -1;
    h->nnodes = 0;
    for (int r = 0; r < P; r++) {
        int k = rt_node_of(g->world[r]);
        if (index[k] < 0)
            index[k] = h->nnodes++;
        h->node_of[r] = index[k];
        h->local_of[r] = count[index[k]]++;
    }
    for (int n = 0; n < h->nnodes; n++)
        h->start[n + 1] = h->start[n] + count[n];
    h->blocked = h->even = true;
    for (int r = 0; r < P; r++) {
        int at = h->start[h->node_of[r]] + h->local_of[r];
        h->members[at] = r;
        h->blocked = h->blocked && at == r;
    }
    for (int n = 1; n < h->nnodes; n++)
        h->even = h->even && count[n] == count[0];
    h->my_node = h->node_of[g->rank];
    h->my_local = h->local_of[g->rank];
out:
    free(index);
    free(count);
    return st;
}

int hier_get(const struct coll_args *a, struct hier **out)
{
    struct coll_group *cg = coll_group_of(a->g);
    if (cg->hier.p) {
        *out = cg->hier.p;
        return HINT_SUCCESS;
    }
    struct hier *h = calloc(1, sizeof *h);
    if (h == NULL)
        return HINT_ERR_NOMEM;
    int st;
    CHECK_GOTO(map_nodes(a->g, h), out);
    /* A member out of memory here returns before the splits, as an allocation failure inside any
       collective does; the others then wait in the split, where a hang timeout names it. */
    CHECK_GOTO(hint_group_split(a->g, h->my_node, a->rank, &h->node), out);
    CHECK_GOTO(hint_group_split(a->g, h->my_local, h->my_node, &h->column), out);
    cg->hier = (struct coll_owned){h, hier_free};
    *out = h;
    return HINT_SUCCESS;
out:
    hier_free(h);
    return st;
}

void hier_sub(const struct coll_args *a, hint_group g, int op_id, struct coll_args *s)
{
    *s = (struct coll_args){.op_id = op_id, .g = g, .rank = g->rank, .size = g->size, .count = a->count,
                            .esize = a->esize, .basic = a->basic, .op = a->op, .copy = -1};
    /* api.c's take_tag: the sub-group's next call number, the operation in the low 5 bits */
    s->tag = GRP_TAG_COLL + (int)(((g->coll_seq++ & 0x007fffffu) << 5) | (unsigned)op_id);
}

bool hier_is_hier(const char *name) { return strncmp(name, "hier", 4) == 0; }

int hier_node_run(struct coll_args *s)
{
    const struct coll_table *t = &coll_tables[s->op_id];
    int copy = -1, pick = rules_pick(rules_default(), s, &copy);
    if (pick < 0 || hier_is_hier(t->algs[pick].name) || !coll_alg_usable(pick, s))
        pick = 0;
    s->copy = copy;
    return t->algs[pick].run(s);
}
