/*
 * topology/table.c — HINT_TOPO_FILE: a per-rank table of where each rank is (node, socket,
 * NUMA node, core), so hierarchical code runs and is tested as if on a big machine on a 2-core
 * box (after MPICH's MPIR_CVAR_COORDINATES_FILE). Format (docs/TOPOLOGY.md):
 *
 *     # comments and blank lines are ignored; an optional header line starts with "rank"
 *     rank node socket numa core
 *     0    0    0      0    0
 *
 * one line per rank, ranks 0 .. P-1 each exactly once, in any order; socket, numa and core are
 * indices on the rank's node; no two ranks on the same core of a node.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topo_err.h"
#include "topology/topology.h"

void topo_table_free(struct topo_table *t)
{
    if (!t)
        return;
    free(t->loc);
    t->loc = NULL;
    t->nranks = 0;
}

/* Five non-negative ints from a line; 0 when the line is blank / a comment / the header,
   1 when read, -1 when malformed. */
static int topo_table_line(const char *line, long v[5])
{
    const char *p = line;
    while (isspace((unsigned char)*p))
        p++;
    if (!*p || *p == '#' || strncmp(p, "rank", 4) == 0)
        return 0;
    for (int k = 0; k < 5; k++) {
        char *end;
        errno = 0;
        v[k] = strtol(p, &end, 10);
        if (end == p || errno == ERANGE || v[k] < 0 || v[k] > INT_MAX)
            return -1;
        p = end;
    }
    while (isspace((unsigned char)*p))
        p++;
    return (*p == '\0' || *p == '#') ? 1 : -1;
}

/* Append one line's values; ranks are checked once the file is read. */
static int topo_table_push(struct topo_table *t, int *cap, const long v[5])
{
    if (t->nranks == *cap) {
        int ncap = *cap ? *cap * 2 : 64;
        struct topo_loc *nl = realloc(t->loc, (size_t)ncap * sizeof *nl);
        if (!nl)
            return HINT_ERR_NOMEM;
        t->loc = nl;
        *cap = ncap;
    }
    t->loc[t->nranks++] = (struct topo_loc){.node = (int)v[1], .socket = (int)v[2], .numa = (int)v[3],
                                            .core = (int)v[4]};
    return HINT_SUCCESS;
}

/* Lines were pushed in file order; put them at their rank, refusing gaps and duplicates. */
static int topo_table_by_rank(const char *path, struct topo_table *t, const long *rank, const int *lineno)
{
    int st = HINT_SUCCESS;
    struct topo_loc *by = malloc((size_t)t->nranks * sizeof *by);
    int *line_of = malloc((size_t)t->nranks * sizeof *line_of);
    if (!by || !line_of) {
        st = topo_err(HINT_ERR_NOMEM, "HINT_TOPO_FILE: out of memory");
        goto out;
    }
    for (int r = 0; r < t->nranks; r++)
        line_of[r] = 0;
    for (int k = 0; k < t->nranks; k++) {
        if (rank[k] >= t->nranks) {
            st = topo_err(HINT_ERR_TOPOLOGY, "%s:%d: rank %ld, but the file has %d lines (ranks 0..%d)", path,
                          lineno[k], rank[k], t->nranks, t->nranks - 1);
            goto out;
        }
        if (line_of[rank[k]]) {
            st = topo_err(HINT_ERR_TOPOLOGY, "%s:%d: rank %ld already given on line %d", path, lineno[k], rank[k],
                          line_of[rank[k]]);
            goto out;
        }
        line_of[rank[k]] = lineno[k];
        by[rank[k]] = t->loc[k];
    }
    free(t->loc);
    t->loc = by;
    by = NULL;
out:
    free(by);
    free(line_of);
    return st;
}

int topo_table_load(const char *path, struct topo_table *t)
{
    int st = HINT_SUCCESS, cap = 0, lineno = 0;
    long *rank = NULL;
    int *lines = NULL;
    char buf[512];
    FILE *f = NULL;
    if (!path || !t)
        return topo_err(HINT_ERR_ARG, "HINT_TOPO_FILE: NULL argument");
    *t = (struct topo_table){0};
    f = fopen(path, "r");
    if (!f)
        return topo_err(HINT_ERR_TOPOLOGY, "HINT_TOPO_FILE %s: cannot open: %s", path, strerror(errno));
    while (fgets(buf, sizeof buf, f)) {
        long v[5];
        lineno++;
        int r = topo_table_line(buf, v);
        if (r == 0)
            continue;
        if (r < 0) {
            st = topo_err(HINT_ERR_TOPOLOGY,
                          "%s:%d: expected five non-negative integers 'rank node socket numa core'", path, lineno);
            goto out;
        }
        int oldcap = cap;
        if ((st = topo_table_push(t, &cap, v)) != HINT_SUCCESS) {
            topo_err(st, "HINT_TOPO_FILE: out of memory");
            goto out;
        }
        if (cap != oldcap) { /* keep the rank and line arrays as long as loc */
            long *nr = realloc(rank, (size_t)cap * sizeof *nr);
            if (nr)
                rank = nr;
            int *nl = realloc(lines, (size_t)cap * sizeof *nl);
            if (nl)
                lines = nl;
            if (!nr || !nl) {
                st = topo_err(HINT_ERR_NOMEM, "HINT_TOPO_FILE: out of memory");
                goto out;
            }
        }
        rank[t->nranks - 1] = v[0];
        lines[t->nranks - 1] = lineno;
    }
    if (t->nranks == 0) {
        st = topo_err(HINT_ERR_TOPOLOGY, "HINT_TOPO_FILE %s: no ranks in the file", path);
        goto out;
    }
    st = topo_table_by_rank(path, t, rank, lines);
out:
    if (f)
        fclose(f);
    free(rank);
    free(lines);
    if (st != HINT_SUCCESS)
        topo_table_free(t);
    return st;
}

/* id = a * (bmax + 1) + b as an int, or an error when it does not fit. */
static int topo_pair_ids(const struct topo_table *t, int which, int *ids)
{
    long long bmax = 0;
    for (int r = 0; r < t->nranks; r++) {
        int b = which == 1 ? t->loc[r].socket : t->loc[r].numa;
        if (b > bmax)
            bmax = b;
    }
    for (int r = 0; r < t->nranks; r++) {
        long long id = (long long)t->loc[r].node * (bmax + 1) + (which == 1 ? t->loc[r].socket : t->loc[r].numa);
        if (id > INT_MAX)
            return topo_err(HINT_ERR_TOPOLOGY, "HINT_TOPO_FILE: node/socket/numa indices too large");
        ids[r] = (int)id;
    }
    return HINT_SUCCESS;
}

/* Two ranks on one core of a node would make the table a lie about placement. */
static int topo_table_cores_unique(const struct topo_table *t, int *ids)
{
    for (int r = 0; r < t->nranks; r++)
        ids[r] = r;
    /* sort ranks by (node, core) and compare neighbours */
    for (int i = 1; i < t->nranks; i++) { /* insertion sort: tables are small (ranks of a test) */
        int x = ids[i], j = i - 1;
        while (j >= 0 && (t->loc[ids[j]].node > t->loc[x].node ||
                          (t->loc[ids[j]].node == t->loc[x].node && t->loc[ids[j]].core > t->loc[x].core))) {
            ids[j + 1] = ids[j];
            j--;
        }
        ids[j + 1] = x;
    }
    for (int i = 1; i < t->nranks; i++) {
        const struct topo_loc *a = &t->loc[ids[i - 1]], *b = &t->loc[ids[i]];
        if (a->node == b->node && a->core == b->core)
            return topo_err(HINT_ERR_TOPOLOGY, "HINT_TOPO_FILE: ranks %d and %d are both on core %d of node %d",
                            ids[i - 1] < ids[i] ? ids[i - 1] : ids[i], ids[i - 1] < ids[i] ? ids[i] : ids[i - 1],
                            a->core, a->node);
    }
    return HINT_SUCCESS;
}

int topo_hier_from_table(const struct topo_table *t, struct topo_hier *out)
{
    int st = HINT_SUCCESS;
    int *node = NULL, *sock = NULL, *numa = NULL;
    if (!t || !out || t->nranks < 1 || !t->loc)
        return topo_err(HINT_ERR_ARG, "HINT_TOPO_FILE: empty table");
    node = malloc((size_t)t->nranks * sizeof *node);
    sock = malloc((size_t)t->nranks * sizeof *sock);
    numa = malloc((size_t)t->nranks * sizeof *numa);
    if (!node || !sock || !numa) {
        st = topo_err(HINT_ERR_NOMEM, "HINT_TOPO_FILE: out of memory");
        goto out;
    }
    if ((st = topo_table_cores_unique(t, node)) != HINT_SUCCESS)
        goto out;
    for (int r = 0; r < t->nranks; r++)
        node[r] = t->loc[r].node;
    if ((st = topo_pair_ids(t, 1, sock)) != HINT_SUCCESS || (st = topo_pair_ids(t, 2, numa)) != HINT_SUCCESS)
        goto out;
    const int *cand[3] = {node, sock, numa};
    const unsigned kinds[3] = {TOPO_KIND_NODE, TOPO_KIND_PACKAGE, TOPO_KIND_NUMA};
    st = topo_hier_build(t->nranks, 3, cand, kinds, TOPO_KIND_CORE, "rank", out);
    if (st != HINT_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", topo_last_error());
        st = topo_err(st, "HINT_TOPO_FILE: %s", msg);
        goto out;
    }
    out->source = TOPO_SRC_FILE;
out:
    free(node);
    free(sock);
    free(numa);
    return st;
}
