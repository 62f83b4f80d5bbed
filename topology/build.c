/*
 * topology/build.c — a hierarchy from a table of leaves (cores from hwloc, ranks from
 * HINT_TOPO_FILE): which group of each candidate level every leaf is in. Shared by both so that
 * the rules are the same: candidates sorted coarse to fine, a candidate that does not nest in
 * the levels kept so far is dropped, one with a single group per parent is merged into the level
 * above (its kind is added: "L2+core"), unequal group sizes are an error (an inhomogeneous
 * machine cannot be numbered in mixed radix), and the leaves must be numbered hierarchically
 * (Alg. 1's precondition: a group's leaves are consecutive, groups in order).
 */
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topo_err.h"
#include "topology/topology.h"

struct topo_cand {
    int *dense;      /* dense[i] = group of leaf i, numbered 0.. in order of first appearance */
    int ngroups;     /* groups on this candidate level */
    unsigned kind;   /* enum topo_kind mask */
    int index;       /* position in the caller's list (0 = the nodes, kept always) */
    int leaf;        /* 1 for the leaves themselves */
};

/* A leaf and its group id on one candidate level, sorted by (id, leaf). */
struct topo_idpair {
    int id, leaf;
};

static int topo_cmp_idpair(const void *a, const void *b)
{
    const struct topo_idpair *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* dense[i] = rank of ids[i]'s group by first appearance; returns the group count or -1. */
static int topo_densify(const int *ids, int n, int *dense)
{
    struct topo_idpair *idx = malloc((size_t)n * sizeof *idx);
    int *first = malloc((size_t)n * sizeof *first);
    int ng = -1;
    if (!idx || !first)
        goto out;
    for (int i = 0; i < n; i++)
        idx[i] = (struct topo_idpair){.id = ids[i], .leaf = i};
    qsort(idx, (size_t)n, sizeof *idx, topo_cmp_idpair);
    /* each run of equal ids is a group; mark its leaves with its first leaf for now */
    for (int a = 0; a < n;) {
        int b = a;
        while (b < n && idx[b].id == idx[a].id)
            b++;
        for (int k = a; k < b; k++)
            dense[idx[k].leaf] = idx[a].leaf; /* the smallest leaf of the run: it sorts first */
        a = b;
    }
    /* renumber the groups 0, 1, ... in order of first appearance */
    for (int i = 0; i < n; i++)
        first[i] = -1;
    ng = 0;
    for (int i = 0; i < n; i++) {
        if (first[dense[i]] < 0)
            first[dense[i]] = ng++;
        dense[i] = first[dense[i]];
    }
out:
    free(idx);
    free(first);
    return ng;
}

/* What a level's groups are called in messages (the first kind of its mask). */
static const char *topo_kind_word(unsigned kind)
{
    static const char *const names[] = {"node", "package", "NUMA node", "L3", "L2", "core", "level"};
    for (unsigned b = 0; b < 7; b++)
        if (kind & (1u << b))
            return names[b];
    return "group";
}

/* Does cand nest in the current partition cur (every group of cand inside one group of cur)?
   If so, parent[g] = the cur group of cand group g. */
static int topo_nests(const struct topo_cand *cand, const int *cur, int n, int *parent)
{
    for (int g = 0; g < cand->ngroups; g++)
        parent[g] = -1;
    for (int i = 0; i < n; i++) {
        int g = cand->dense[i];
        if (parent[g] < 0)
            parent[g] = cur[i];
        else if (parent[g] != cur[i])
            return 0;
    }
    return 1;
}

static int topo_cmp_cand(const void *a, const void *b)
{
    const struct topo_cand *x = a, *y = b;
    if (x->ngroups != y->ngroups)
        return x->ngroups < y->ngroups ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index); /* stable: caller's order on ties */
}

/* Children per parent must be equal: the size of the new level, or an error naming two parents. */
static int topo_level_size(const struct topo_cand *cand, const int *parent, int ncur, unsigned cur_kind,
                           const char *leaf_name, int *size)
{
    int st = HINT_SUCCESS;
    int *cnt = calloc((size_t)ncur, sizeof *cnt);
    if (!cnt)
        return topo_err(HINT_ERR_NOMEM, "topology: out of memory");
    for (int g = 0; g < cand->ngroups; g++)
        cnt[parent[g]]++;
    for (int p = 1; p < ncur; p++) {
        if (cnt[p] != cnt[0]) {
            st = topo_err(HINT_ERR_TOPOLOGY,
                          "inhomogeneous machine: %s 0 has %d %s(s) but %s %d has %d; a mixed-radix hierarchy "
                          "needs equal sizes (give one with --hierarchy or HINT_TOPO_FILE)",
                          topo_kind_word(cur_kind), cnt[0], cand->leaf ? leaf_name : topo_kind_word(cand->kind),
                          topo_kind_word(cur_kind), p,
                          cnt[p]);
            goto out;
        }
    }
    *size = cnt[0];
out:
    free(cnt);
    return st;
}

/* Alg. 1's precondition: leaf i must sit at mixed-radix position i. kept[k] are the level
   partitions (outermost first), the last one the leaves. */
static int topo_check_numbering(int n, struct topo_cand *const *kept, int nk, const int *h, const char *leaf_name)
{
    int st = HINT_SUCCESS;
    int *child = malloc((size_t)n * sizeof *child), *next = malloc((size_t)n * sizeof *next);
    int *pos = calloc((size_t)n, sizeof *pos), *gpar = malloc((size_t)n * sizeof *gpar);
    if (!child || !next || !pos || !gpar) {
        st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
        goto out;
    }
    const int *cur = NULL; /* parent partition; NULL = everything in one group */
    for (int k = 0; k < nk; k++) {
        const struct topo_cand *c = kept[k];
        for (int g = 0; g < c->ngroups; g++)
            gpar[g] = -1;
        for (int i = 0; i < n; i++)
            gpar[c->dense[i]] = cur ? cur[i] : 0;
        for (int p = 0; p < n; p++)
            next[p] = 0;
        for (int g = 0; g < c->ngroups; g++) /* groups are numbered by first appearance */
            child[g] = next[gpar[g]]++;
        for (int i = 0; i < n; i++)
            pos[i] = pos[i] * h[k] + child[c->dense[i]];
        cur = c->dense;
    }
    for (int i = 0; i < n; i++) {
        if (pos[i] != i) {
            st = topo_err(HINT_ERR_TOPOLOGY,
                          "%s %d is not numbered hierarchically (it belongs at position %d): the numbering must "
                          "fill a group before the next one",
                          leaf_name, i, pos[i]);
            goto out;
        }
    }
out:
    free(child);
    free(next);
    free(pos);
    free(gpar);
    return st;
}

int topo_hier_build(int nitems, int ncand, const int *const cand[], const unsigned kinds[], unsigned leaf_kind,
                    const char *leaf_name, struct topo_hier *out)
{
    int st = HINT_SUCCESS;
    int nc = ncand + 1; /* + the leaves */
    struct topo_cand *cs = NULL;
    struct topo_cand *kept[TOPO_MAX_LEVELS];
    int *parent = NULL, *leaf_ids = NULL;
    if (nitems < 1 || ncand < 1 || !cand || !kinds || !out)
        return topo_err(HINT_ERR_ARG, "topology: %d leaves, %d candidate levels", nitems, ncand);
    if (!leaf_name)
        leaf_name = "core";
    cs = calloc((size_t)nc, sizeof *cs);
    parent = malloc((size_t)nitems * sizeof *parent);
    leaf_ids = malloc((size_t)nitems * sizeof *leaf_ids);
    if (!cs || !parent || !leaf_ids) {
        st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
        goto out;
    }
    for (int i = 0; i < nitems; i++)
        leaf_ids[i] = i;
    for (int c = 0; c < nc; c++) {
        cs[c].dense = malloc((size_t)nitems * sizeof *cs[c].dense);
        if (!cs[c].dense) {
            st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
            goto out;
        }
        cs[c].ngroups = topo_densify(c < ncand ? cand[c] : leaf_ids, nitems, cs[c].dense);
        if (cs[c].ngroups < 0) {
            st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
            goto out;
        }
        cs[c].kind = c < ncand ? kinds[c] : leaf_kind;
        cs[c].leaf = c == ncand;
        cs[c].index = c;
    }
    /* nodes first whatever their count, the leaves last, the rest coarse to fine */
    qsort(cs + 1, (size_t)(ncand - 1), sizeof *cs, topo_cmp_cand);
    memset(out, 0, sizeof *out);
    int nk = 0, ncur = 1;
    const int *cur = NULL;
    for (int c = 0; c < nc; c++) {
        if (c > 0 && !topo_nests(&cs[c], cur, nitems, parent))
            continue; /* not a tree level here (e.g. a cache shared across packages): skip it */
        int size = cs[c].ngroups;
        if (c > 0 && (st = topo_level_size(&cs[c], parent, ncur, kept[nk - 1]->kind, leaf_name, &size)) != HINT_SUCCESS)
            goto out;
        if (c > 0 && size == 1) {
            kept[nk - 1]->kind |= cs[c].kind; /* same groups as the level above: one level, two names */
            out->kind[nk - 1] |= cs[c].kind;
            if (c == nc - 1) /* the leaves: the level's groups are now the leaves themselves */
                kept[nk - 1] = &cs[c];
            continue;
        }
        if (nk == TOPO_MAX_LEVELS) {
            st = topo_err(HINT_ERR_TOPOLOGY, "topology: more than %d levels", TOPO_MAX_LEVELS);
            goto out;
        }
        out->h[nk] = size;
        out->kind[nk] = cs[c].kind;
        kept[nk++] = &cs[c];
        cur = cs[c].dense;
        ncur = cs[c].ngroups;
    }
    out->nlevels = nk;
    out->size = nitems;
    st = topo_check_numbering(nitems, kept, nk, out->h, leaf_name);
out:
    for (int c = 0; cs && c < nc; c++)
        free(cs[c].dense);
    free(cs);
    free(parent);
    free(leaf_ids);
    return st;
}
