/*
 * topology/discover.c — everything that asks hwloc (or HINT_TOPO_FILE in its place): the node's
 * hierarchy, the core count, binding, and where this process is.
 *
 * Cores are numbered 0 .. n-1 in hwloc's logical order over the cores this process may use
 * (hwloc 2 leaves disallowed ones out by default). That is the natural, node-major numbering
 * Alg. 1 expects, and the numbering of core indices everywhere in hint (--report-bindings,
 * HINT_TOPO_FILE's core column). A machine without Core objects uses PUs.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint.h"
#include "topology/topo_err.h"
#include "topology/topology.h"

static hwloc_topology_t topo_hw;           /* loaded on first use, freed by topo_release */
static struct topo_table topo_file;        /* HINT_TOPO_FILE's table, loaded on first use */
static char *topo_file_path;               /* the path topo_file was read from */

static int topo_hw_get(hwloc_topology_t *out)
{
    if (!topo_hw) {
        hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
        if (hwloc_topology_init(&t) < 0)
            return topo_err(HINT_ERR_TOPOLOGY, "hwloc: cannot initialise a topology");
        if (hwloc_topology_load(t) < 0) {
            hwloc_topology_destroy(t);
            return topo_err(HINT_ERR_TOPOLOGY, "hwloc: cannot load the topology of this machine");
        }
        topo_hw = t;
    }
    *out = topo_hw;
    return HINT_SUCCESS;
}

static hwloc_obj_type_t topo_leaf_type(hwloc_topology_t t)
{
    return hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
}

int topo_ncores(int *ncores)
{
    hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
    if (!ncores)
        return topo_err(HINT_ERR_ARG, "topo_ncores: NULL argument");
    int st = topo_hw_get(&t);
    if (st != HINT_SUCCESS)
        return st;
    *ncores = hwloc_get_nbobjs_by_type(t, topo_leaf_type(t));
    return HINT_SUCCESS;
}

/* Logical index of the first object of type whose cpuset contains set, or -1. NUMA nodes without
   CPUs (memory-only, e.g. CXL or HBM exposed alone) never match. */
static int topo_index_covering(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_const_cpuset_t set)
{
    int n = hwloc_get_nbobjs_by_type(t, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(t, type, (unsigned)i);
        if (o && o->cpuset && !hwloc_bitmap_iszero(o->cpuset) && hwloc_bitmap_isincluded(set, o->cpuset))
            return i;
    }
    return -1;
}

static int topo_ancestor_index(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_obj_t o)
{
    hwloc_obj_t a = hwloc_get_ancestor_obj_by_type(t, type, o);
    return a ? (int)a->logical_index : -1;
}

int topo_discover_hwloc(int nnodes, struct topo_hier *out)
{
    hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
    int st = HINT_SUCCESS;
    int *ids[5] = {NULL};
    if (nnodes < 1 || !out)
        return topo_err(HINT_ERR_ARG, "topology: %d nodes or NULL output", nnodes);
    if ((st = topo_hw_get(&t)) != HINT_SUCCESS)
        return st;
    hwloc_obj_type_t leaf = topo_leaf_type(t);
    int n = hwloc_get_nbobjs_by_type(t, leaf);
    if (n < 1)
        return topo_err(HINT_ERR_TOPOLOGY, "hwloc: no cores found");
    for (int c = 0; c < 5; c++)
        if (!(ids[c] = calloc((size_t)n, sizeof *ids[c]))) {
            st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
            goto out;
        }
    for (int i = 0; i < n; i++) { /* ids[0]: the node, all 0 here; the node count is set below */
        hwloc_obj_t o = hwloc_get_obj_by_type(t, leaf, (unsigned)i);
        ids[1][i] = topo_ancestor_index(t, HWLOC_OBJ_PACKAGE, o);
        ids[2][i] = topo_index_covering(t, HWLOC_OBJ_NUMANODE, o->cpuset);
        ids[3][i] = topo_ancestor_index(t, HWLOC_OBJ_L3CACHE, o);
        ids[4][i] = topo_ancestor_index(t, HWLOC_OBJ_L2CACHE, o);
    }
    const unsigned kinds[5] = {TOPO_KIND_NODE, TOPO_KIND_PACKAGE, TOPO_KIND_NUMA, TOPO_KIND_L3, TOPO_KIND_L2};
    const int *const cand[5] = {ids[0], ids[1], ids[2], ids[3], ids[4]};
    if ((st = topo_hier_build(n, 5, cand, kinds, TOPO_KIND_CORE, "core", out)) != HINT_SUCCESS)
        goto out;
    if ((long long)out->size * nnodes > INT_MAX) {
        st = topo_err(HINT_ERR_TOPOLOGY, "topology: %d nodes x %d cores exceeds %d", nnodes, out->size, INT_MAX);
        goto out;
    }
    out->h[0] = nnodes; /* prepended even when 1: the node level is part of every job hierarchy */
    out->size *= nnodes;
    out->source = TOPO_SRC_HWLOC;
out:
    for (int c = 0; c < 5; c++)
        free(ids[c]);
    return st;
}

/* The HINT_TOPO_FILE table, read once per path; NULL (and HINT_SUCCESS) when the variable is unset. */
static int topo_file_get(const struct topo_table **out)
{
    const char *path = getenv("HINT_TOPO_FILE");
    *out = NULL;
    if (!path || !*path)
        return HINT_SUCCESS;
    if (!topo_file_path || strcmp(path, topo_file_path) != 0) {
        topo_table_free(&topo_file);
        free(topo_file_path);
        topo_file_path = NULL;
        int st = topo_table_load(path, &topo_file);
        if (st != HINT_SUCCESS)
            return st;
        if (!(topo_file_path = strdup(path))) {
            topo_table_free(&topo_file);
            return topo_err(HINT_ERR_NOMEM, "HINT_TOPO_FILE: out of memory");
        }
    }
    *out = &topo_file;
    return HINT_SUCCESS;
}

int topo_discover(int nnodes, struct topo_hier *out)
{
    const struct topo_table *tab;
    int st = topo_file_get(&tab);
    if (st != HINT_SUCCESS)
        return st;
    if (tab)
        return topo_hier_from_table(tab, out);
    return topo_discover_hwloc(nnodes, out);
}

/* An integer environment variable: dflt when unset, -1 when malformed. */
static int topo_env_int(const char *name, int dflt)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return dflt;
    char *end;
    long v = strtol(s, &end, 10);
    return (*end || v < 0 || v > INT_MAX) ? -1 : (int)v;
}

static int topo_self_from_table(const struct topo_table *tab, struct topo_loc *loc)
{
    int rank = topo_env_int("HINT_RANK", 0);
    if (rank < 0 || rank >= tab->nranks)
        return topo_err(HINT_ERR_TOPOLOGY, "HINT_TOPO_FILE %s describes %d ranks but this process is rank %d",
                        topo_file_path, tab->nranks, rank);
    *loc = tab->loc[rank];
    return HINT_SUCCESS;
}

/* Index of the object of type holding this process: its binding when that fits in one,
   else where it last ran. */
static int topo_self_index(hwloc_topology_t t, hwloc_obj_type_t type, hwloc_const_cpuset_t bound,
                           hwloc_const_cpuset_t last)
{
    if (hwloc_get_nbobjs_by_type(t, type) <= 0)
        return 0; /* no such objects: the whole machine is one */
    int i = topo_index_covering(t, type, bound);
    return i >= 0 ? i : topo_index_covering(t, type, last);
}

int topo_self_location(struct topo_loc *loc)
{
    const struct topo_table *tab;
    hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
    hwloc_bitmap_t bound = NULL, last = NULL;
    if (!loc)
        return topo_err(HINT_ERR_ARG, "topo_self_location: NULL argument");
    int st = topo_file_get(&tab);
    if (st != HINT_SUCCESS)
        return st;
    if (tab)
        return topo_self_from_table(tab, loc);
    if ((st = topo_hw_get(&t)) != HINT_SUCCESS)
        return st;
    bound = hwloc_bitmap_alloc();
    last = hwloc_bitmap_alloc();
    if (!bound || !last) {
        st = topo_err(HINT_ERR_NOMEM, "topology: out of memory");
        goto out;
    }
    if (hwloc_get_cpubind(t, bound, 0) < 0)
        hwloc_bitmap_copy(bound, hwloc_topology_get_allowed_cpuset(t));
    if (hwloc_get_last_cpu_location(t, last, 0) < 0)
        hwloc_bitmap_copy(last, bound);
    loc->node = topo_env_int("HINT_NODE_ID", 0);
    loc->socket = topo_self_index(t, HWLOC_OBJ_PACKAGE, bound, last);
    loc->numa = topo_self_index(t, HWLOC_OBJ_NUMANODE, bound, last);
    loc->core = topo_self_index(t, topo_leaf_type(t), bound, last);
out:
    hwloc_bitmap_free(bound);
    hwloc_bitmap_free(last);
    return st;
}

int topo_socket_of_self(int *socket)
{
    struct topo_loc loc;
    if (!socket)
        return topo_err(HINT_ERR_ARG, "topo_socket_of_self: NULL argument");
    int st = topo_self_location(&loc);
    if (st == HINT_SUCCESS)
        *socket = loc.socket;
    return st;
}

int topo_numa_of_self(int *numa)
{
    struct topo_loc loc;
    if (!numa)
        return topo_err(HINT_ERR_ARG, "topo_numa_of_self: NULL argument");
    int st = topo_self_location(&loc);
    if (st == HINT_SUCCESS)
        *numa = loc.numa;
    return st;
}

int topo_bind_self(int core)
{
    hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
    char pus[128];
    int st = topo_hw_get(&t);
    if (st != HINT_SUCCESS)
        return st;
    hwloc_obj_type_t leaf = topo_leaf_type(t);
    int n = hwloc_get_nbobjs_by_type(t, leaf);
    if (core < 0 || core >= n)
        return topo_err(HINT_ERR_TOPOLOGY, "cannot bind to core %d: this node has %d cores (0..%d)", core, n, n - 1);
    hwloc_obj_t o = hwloc_get_obj_by_type(t, leaf, (unsigned)core);
    /* flags 0: the whole process, all threads; the binding survives exec */
    if (hwloc_set_cpubind(t, o->cpuset, 0) < 0) {
        hwloc_bitmap_list_snprintf(pus, sizeof pus, o->cpuset);
        return topo_err(HINT_ERR_TOPOLOGY, "binding to core %d (PUs %s) failed: %s", core, pus, strerror(errno));
    }
    return HINT_SUCCESS;
}

int topo_read_binding(int *core, char *pus, size_t len)
{
    hwloc_topology_t t = NULL; /* -O3 cannot see that topo_hw_get sets it on success */
    hwloc_bitmap_t set = NULL;
    if (!core)
        return topo_err(HINT_ERR_ARG, "topo_read_binding: NULL argument");
    int st = topo_hw_get(&t);
    if (st != HINT_SUCCESS)
        return st;
    if (!(set = hwloc_bitmap_alloc()))
        return topo_err(HINT_ERR_NOMEM, "topology: out of memory");
    if (hwloc_get_cpubind(t, set, 0) < 0) {
        st = topo_err(HINT_ERR_TOPOLOGY, "cannot read this process's binding: %s", strerror(errno));
        goto out;
    }
    if (pus && len)
        hwloc_bitmap_list_snprintf(pus, len, set);
    *core = topo_index_covering(t, topo_leaf_type(t), set);
out:
    hwloc_bitmap_free(set);
    return st;
}

void topo_release(void)
{
    if (topo_hw)
        hwloc_topology_destroy(topo_hw);
    topo_hw = NULL;
    topo_table_free(&topo_file);
    free(topo_file_path);
    topo_file_path = NULL;
}
