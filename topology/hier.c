/*
 * topology/hier.c — hierarchies and orders as text, Heap's enumeration of orders, and what an
 * order gives: the rank mapping, hintrun's core list and the Slurm --distribution equivalent.
 * All pure (no hwloc, no hint_init); errors leave a message for topo_last_error().
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topo_err.h"
#include "topology/topology.h"

static _Thread_local char topo_errbuf[512];

int topo_err(int st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(topo_errbuf, sizeof topo_errbuf, fmt, ap);
    va_end(ap);
    return st;
}

const char *topo_last_error(void) { return topo_errbuf; }

char *topo_format_list(int n, const int v[], char *buf, size_t len)
{
    size_t used = 0;
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++) {
        int w = snprintf(buf + used, len - used, "%s%d", i ? "," : "", v[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

/* Comma (or 'x', or blank) separated integers, optionally in brackets: "2,2,4", "[2, 2, 4]",
   "[[2,2,4]]", "2x2x4". what names the thing in messages. */
static int topo_parse_ints(const char *s, const char *what, int v[], int *n)
{
    const char *p = s;
    *n = 0;
    if (!s)
        return topo_err(HINT_ERR_ARG, "%s: no string given", what);
    for (;;) {
        while (*p && (isspace((unsigned char)*p) || *p == ',' || *p == '[' || *p == ']' || *p == 'x' || *p == 'X'))
            p++;
        if (!*p)
            break;
        char *end;
        errno = 0;
        long x = strtol(p, &end, 10);
        if (end == p)
            return topo_err(HINT_ERR_ARG, "%s '%s': '%c' where a number was expected", what, s, *p);
        if (errno == ERANGE || x > INT_MAX || x < INT_MIN)
            return topo_err(HINT_ERR_ARG, "%s '%s': %.*s is out of range", what, s, (int)(end - p), p);
        if (*n == TOPO_MAX_LEVELS)
            return topo_err(HINT_ERR_ARG, "%s '%s': more than %d levels", what, s, TOPO_MAX_LEVELS);
        v[(*n)++] = (int)x;
        p = end;
        if (*p && !(isspace((unsigned char)*p) || *p == ',' || *p == ']' || *p == 'x' || *p == 'X'))
            return topo_err(HINT_ERR_ARG, "%s '%s': unexpected '%c' after a number", what, s, *p);
    }
    if (*n == 0)
        return topo_err(HINT_ERR_ARG, "%s '%s': no numbers (expected e.g. 2,2,4)", what, s);
    return HINT_SUCCESS;
}

int topo_hier_set(struct topo_hier *out, int nlevels, const int h[])
{
    char txt[256];
    if (!out || !h)
        return topo_err(HINT_ERR_ARG, "hierarchy: NULL argument");
    if (nlevels < 1 || nlevels > TOPO_MAX_LEVELS)
        return topo_err(HINT_ERR_ARG, "hierarchy: %d levels (must be 1..%d)", nlevels, TOPO_MAX_LEVELS);
    topo_format_list(nlevels, h, txt, sizeof txt);
    long long prod = 1;
    for (int l = 0; l < nlevels; l++) {
        if (h[l] < 1)
            return topo_err(HINT_ERR_TOPOLOGY, "hierarchy %s: level %d has size %d (sizes must be >= 1)", txt, l,
                            h[l]);
        prod *= h[l];
        if (prod > INT_MAX)
            return topo_err(HINT_ERR_TOPOLOGY, "hierarchy %s: the product of the sizes exceeds %d", txt, INT_MAX);
    }
    memset(out, 0, sizeof *out);
    out->nlevels = nlevels;
    out->size = (int)prod;
    out->source = TOPO_SRC_USER;
    for (int l = 0; l < nlevels; l++) {
        out->h[l] = h[l];
        out->kind[l] = TOPO_KIND_USER;
    }
    return HINT_SUCCESS;
}

int topo_parse_hierarchy(const char *s, struct topo_hier *out)
{
    int v[TOPO_MAX_LEVELS], n;
    int st = topo_parse_ints(s, "hierarchy", v, &n);
    if (st != HINT_SUCCESS)
        return st;
    return topo_hier_set(out, n, v);
}

int topo_parse_order(const char *s, int nlevels, int order[])
{
    int v[TOPO_MAX_LEVELS], n, seen[TOPO_MAX_LEVELS] = {0};
    if (!order)
        return topo_err(HINT_ERR_ARG, "order: NULL argument");
    int st = topo_parse_ints(s, "order", v, &n);
    if (st != HINT_SUCCESS)
        return st;
    if (n != nlevels)
        return topo_err(HINT_ERR_TOPOLOGY, "order '%s' has %d entries but the hierarchy has %d levels", s, n,
                        nlevels);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= n)
            return topo_err(HINT_ERR_TOPOLOGY, "order '%s' is not a permutation: %d is not a level (levels are 0..%d)",
                            s, v[i], n - 1);
        if (seen[v[i]]++)
            return topo_err(HINT_ERR_TOPOLOGY, "order '%s' is not a permutation: level %d appears twice", s, v[i]);
    }
    memcpy(order, v, (size_t)n * sizeof *v);
    return HINT_SUCCESS;
}

static const char *topo_kind_name(unsigned bit)
{
    switch (bit) {
    case TOPO_KIND_NODE: return "node";
    case TOPO_KIND_PACKAGE: return "package";
    case TOPO_KIND_NUMA: return "numa";
    case TOPO_KIND_L3: return "L3";
    case TOPO_KIND_L2: return "L2";
    case TOPO_KIND_CORE: return "core";
    default: return "level";
    }
}

/* Append printf-style text at *used, never past len (buf stays terminated). */
#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static void topo_append(char *buf, size_t len, size_t *used, const char *fmt, ...)
{
    if (*used >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *used, len - *used, fmt, ap);
    va_end(ap);
    if (w > 0)
        *used += (size_t)w < len - *used ? (size_t)w : len - *used - 1;
}

char *topo_hier_describe(const struct topo_hier *hier, char *buf, size_t len)
{
    size_t used = 0;
    if (!buf || len == 0)
        return buf;
    buf[0] = '\0';
    for (int l = 0; hier && l < hier->nlevels; l++) {
        topo_append(buf, len, &used, "%s%d ", l ? " x " : "", hier->h[l]);
        if (hier->kind[l] == TOPO_KIND_USER) {
            topo_append(buf, len, &used, "level%d", l);
            continue;
        }
        const char *sep = ""; /* a level may be several things at once: "L2+core" */
        for (unsigned bit = 1; bit < TOPO_KIND_USER; bit <<= 1) {
            if (hier->kind[l] & bit) {
                topo_append(buf, len, &used, "%s%s", sep, topo_kind_name(bit));
                sep = "+";
            }
        }
    }
    return buf;
}

int topo_check_size(const struct topo_hier *hier, int nranks)
{
    char txt[256];
    if (!hier)
        return topo_err(HINT_ERR_ARG, "hierarchy: NULL argument");
    if (hier->size != nranks)
        return topo_err(HINT_ERR_TOPOLOGY,
                        "hierarchy %s numbers %d ranks but there are %d (the product of the sizes must equal the "
                        "number of ranks)",
                        topo_format_list(hier->nlevels, hier->h, txt, sizeof txt), hier->size, nranks);
    return HINT_SUCCESS;
}

int topo_hier_refines(const struct topo_hier *user, const struct topo_hier *real)
{
    char a[256], b[256];
    if (!user || !real)
        return topo_err(HINT_ERR_ARG, "hierarchy: NULL argument");
    topo_format_list(user->nlevels, user->h, a, sizeof a);
    topo_format_list(real->nlevels, real->h, b, sizeof b);
    if (user->size != real->size)
        return topo_err(HINT_ERR_TOPOLOGY, "hierarchy %s numbers %d positions but %s numbers %d", a, user->size, b,
                        real->size);
    /* a group boundary is a suffix product (the size of a group); each of real's must be one of user's */
    long long rp = 1;
    for (int i = real->nlevels - 1; i >= 0; i--) {
        rp *= real->h[i];
        long long up = 1;
        int found = rp == 1;
        for (int j = user->nlevels - 1; j >= 0 && !found && up < rp; j--) {
            up *= user->h[j];
            found = up == rp;
        }
        if (!found)
            return topo_err(HINT_ERR_TOPOLOGY,
                            "hierarchy %s does not split the levels of %s: no level of it has groups of %lld", a, b,
                            rp);
    }
    return HINT_SUCCESS;
}

int topo_for_each_order(int n, int (*fn)(const int order[], void *arg), void *arg)
{
    int a[TOPO_MAX_LEVELS], c[TOPO_MAX_LEVELS] = {0};
    if (n < 1 || n > TOPO_MAX_LEVELS || !fn)
        return topo_err(HINT_ERR_ARG, "orders: %d levels or NULL callback", n);
    for (int i = 0; i < n; i++)
        a[i] = i;
    int r = fn(a, arg);
    /* Heap (1963), iterative: each next order is one swap away from the previous one */
    for (int i = 1; i < n && r == 0;) {
        if (c[i] < i) {
            int j = (i % 2 == 0) ? 0 : c[i];
            int t = a[j];
            a[j] = a[i];
            a[i] = t;
            r = fn(a, arg);
            c[i]++;
            i = 1;
        } else {
            c[i] = 0;
            i++;
        }
    }
    return r;
}

/* Prepare mr, with a message on failure (naming the hierarchy and order). */
static int topo_setup_msg(struct topo_mr *mr, int nlevels, const int h[], const int order[])
{
    char a[256], b[256];
    int st = topo_mr_setup(mr, nlevels, h, order);
    if (st == HINT_SUCCESS)
        return st;
    if (nlevels < 1 || nlevels > TOPO_MAX_LEVELS || !h)
        return topo_err(st, "hierarchy: %d levels (must be 1..%d) or NULL", nlevels, TOPO_MAX_LEVELS);
    topo_format_list(nlevels, h, a, sizeof a);
    if (topo_mr_check_hier(nlevels, h, NULL) != HINT_SUCCESS)
        return topo_err(st, "hierarchy %s: sizes must be >= 1 and their product at most %d", a, INT_MAX);
    return topo_err(st, "order %s is not a permutation of the %d levels of hierarchy %s",
                    topo_format_list(nlevels, order, b, sizeof b), nlevels, a);
}

int topo_rank_map(int nlevels, const int h[], const int order[], int map[])
{
    struct topo_mr mr;
    int st = topo_setup_msg(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (!map)
        return topo_err(HINT_ERR_ARG, "rank map: NULL output");
    for (int r = 0; r < mr.size; r++)
        map[r] = topo_mr_new_of_old(&mr, r);
    return HINT_SUCCESS;
}

int topo_rank_unmap(int nlevels, const int h[], const int order[], int inv[])
{
    struct topo_mr mr;
    int st = topo_setup_msg(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    if (!inv)
        return topo_err(HINT_ERR_ARG, "rank map: NULL output");
    for (int s = 0; s < mr.size; s++)
        inv[s] = topo_mr_old_of_new(&mr, s);
    return HINT_SUCCESS;
}

int topo_core_list(int nlevels, const int h[], const int order[], int nranks, int nnodes, int cores_per_node,
                   int node_of[], int core_of[])
{
    struct topo_mr mr;
    char txt[256];
    int st = topo_setup_msg(&mr, nlevels, h, order);
    if (st != HINT_SUCCESS)
        return st;
    topo_format_list(nlevels, h, txt, sizeof txt);
    if (!core_of || nnodes < 1)
        return topo_err(HINT_ERR_ARG, "core list: NULL output or %d nodes", nnodes);
    if (mr.size % nnodes)
        return topo_err(HINT_ERR_TOPOLOGY, "hierarchy %s numbers %d cores, which do not divide over %d nodes", txt,
                        mr.size, nnodes);
    int per_node = mr.size / nnodes;
    if (per_node > cores_per_node)
        return topo_err(HINT_ERR_TOPOLOGY,
                        "hierarchy %s needs %d cores per node but only %d are available on this node", txt, per_node,
                        cores_per_node);
    if (nranks < 1 || nranks > mr.size)
        return topo_err(HINT_ERR_TOPOLOGY, "%d ranks asked but hierarchy %s has %d cores", nranks, txt, mr.size);
    for (int r = 0; r < nranks; r++) { /* Alg. 3, walking the chosen ranks rather than all cores */
        int p = topo_mr_old_of_new(&mr, r);
        if (node_of)
            node_of[r] = p / per_node;
        core_of[r] = p % per_node;
    }
    return HINT_SUCCESS;
}

/* ---- Slurm --distribution ---- */

enum { TOPO_SL_NODE = 'N', TOPO_SL_SOCKET = 'S', TOPO_SL_CORE = 'C', TOPO_SL_OTHER = '?' };

/* Which of Slurm's levels level l is: parsed hierarchies read as [nodes, sockets, inside a
   socket...] ([nodes, cores] for two levels); discovered ones by kind. */
static int topo_slurm_class(const struct topo_hier *hier, int l)
{
    unsigned k = hier->kind[l];
    if (k == TOPO_KIND_USER) {
        if (l == 0)
            return TOPO_SL_NODE;
        return (l == 1 && hier->nlevels >= 3) ? TOPO_SL_SOCKET : TOPO_SL_CORE;
    }
    if (k & TOPO_KIND_NODE)
        return TOPO_SL_NODE;
    if (k & TOPO_KIND_PACKAGE)
        return TOPO_SL_SOCKET;
    /* below the package (or no package level at all): inside a socket, unless it is above one */
    for (int j = l + 1; j < hier->nlevels; j++)
        if (hier->kind[j] & TOPO_KIND_PACKAGE)
            return TOPO_SL_OTHER;
    return TOPO_SL_CORE;
}

int topo_slurm_distribution(const struct topo_hier *hier, const int order[], char *buf, size_t len)
{
    char seq[TOPO_MAX_LEVELS + 1];
    int ns = 0, core_prod = 1, last_core = -1;
    if (!hier || !buf || len == 0 || topo_mr_check_order(hier->nlevels, order) != HINT_SUCCESS)
        return topo_err(HINT_ERR_ARG, "slurm distribution: bad arguments");
    buf[0] = '\0';
    /* Levels of size 1 do not change the mapping: leave them out. Slurm fills the cores of a
       socket in their natural order, so the levels inside a socket must come in a row, innermost
       first (descending level index), and then act as one "core" level. */
    for (int i = 0; i < hier->nlevels; i++) {
        int l = order[i];
        if (hier->h[l] == 1)
            continue;
        int c = topo_slurm_class(hier, l);
        if (c == TOPO_SL_OTHER)
            return topo_err(HINT_ERR_UNSUPPORTED, "a level above the sockets other than the nodes");
        if (c == TOPO_SL_CORE) {
            if (last_core >= 0 && (seq[ns - 1] != TOPO_SL_CORE || l > last_core))
                return topo_err(HINT_ERR_UNSUPPORTED, "levels inside a socket are not in their natural order");
            last_core = l;
            core_prod *= hier->h[l];
            if (ns > 0 && seq[ns - 1] == TOPO_SL_CORE)
                continue;
        }
        seq[ns++] = (char)c;
    }
    seq[ns] = '\0';
    const char *n = strchr(seq, TOPO_SL_NODE), *s = strchr(seq, TOPO_SL_SOCKET), *c = strchr(seq, TOPO_SL_CORE);
    char node_part[32];
    if (!n || n == seq + ns - 1)
        snprintf(node_part, sizeof node_part, "block");  /* nodes vary slowest */
    else if (n == seq)
        snprintf(node_part, sizeof node_part, "cyclic"); /* nodes vary fastest */
    else if (c && c < n)
        snprintf(node_part, sizeof node_part, "plane=%d", core_prod); /* blocks of a socket's cores */
    else /* the sockets vary faster than the nodes: [1,0,2] of Fig. 2 */
        return topo_err(HINT_ERR_UNSUPPORTED, "no Slurm distribution puts sockets inside node round-robin");
    if (!s) {
        snprintf(buf, len, "%s", node_part);
        return HINT_SUCCESS;
    }
    snprintf(buf, len, "%s:%s", node_part, (!c || c < s) ? "block" : "cyclic");
    return HINT_SUCCESS;
}
