/*
 * launcher/bind.c — where each rank runs: --bind-to core|l3|numa|socket|none, --cpus-per-rank,
 * --map-by core|l3|numa|socket, --hierarchy H --order S (the mixed-radix core list of
 * topology/, Alg. 3), --report-bindings.
 *
 * Two steps. Mapping gives each rank a slot: cpus-per-rank consecutive cores (hwloc's logical
 * order over the allowed cores, the numbering of topology/). --map-by core fills slots in
 * order; --map-by socket|numa|l3 is the mixed-radix order of the hierarchy [objects, slots per
 * object] with the objects varying fastest (round robin over them), and --hierarchy/--order is
 * the general mixed-radix list. Binding then widens a slot to every object of the --bind-to kind
 * that holds one of its cores (core: the slot itself).
 *
 * The default binds rank r to core r when the ranks fit on the cores hintrun may use, and binds
 * nothing when they do not: pinned oversubscribed ranks could not move to an idle core. Binding
 * to an L3, NUMA node or socket may oversubscribe (slots are reused round robin): the ranks
 * sharing it can still move between its cores. The plan is made before any rank starts, so a
 * bad request fails up front with the numbers in the message.
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/launch.h"
#include "topology/topology.h"

struct bind_plan {
    hwloc_topology_t topo;
    hwloc_obj_type_t leaf;  /* cores, or PUs on a machine without Core objects */
    int ncores;
    hwloc_bitmap_t *set;    /* set[r]: rank r's cpuset */
};

static const char *bind_kind_name(int bind)
{
    switch (bind) {
    case LAUNCH_BIND_L3: return "l3";
    case LAUNCH_BIND_NUMA: return "numa";
    case LAUNCH_BIND_SOCKET: return "socket";
    default: return "core";
    }
}

static hwloc_obj_type_t bind_obj_type(int bind_or_map_name_kind)
{
    switch (bind_or_map_name_kind) {
    case LAUNCH_BIND_L3: return HWLOC_OBJ_L3CACHE;
    case LAUNCH_BIND_NUMA: return HWLOC_OBJ_NUMANODE;
    case LAUNCH_BIND_SOCKET: return HWLOC_OBJ_PACKAGE;
    default: return HWLOC_OBJ_CORE;
    }
}

/* --map-by's kinds, as --bind-to's (to share the names and hwloc types) */
static int map_as_bind(int map_by)
{
    static const int as[] = {[LAUNCH_MAP_CORE] = LAUNCH_BIND_CORE, [LAUNCH_MAP_L3] = LAUNCH_BIND_L3,
                             [LAUNCH_MAP_NUMA] = LAUNCH_BIND_NUMA, [LAUNCH_MAP_SOCKET] = LAUNCH_BIND_SOCKET};
    return as[map_by];
}

static int bind_load(struct bind_plan *p)
{
    if (hwloc_topology_init(&p->topo) < 0)
        return -1;
    if (hwloc_topology_load(p->topo) < 0) {
        hwloc_topology_destroy(p->topo);
        p->topo = NULL;
        return -1;
    }
    p->leaf = hwloc_get_nbobjs_by_type(p->topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    p->ncores = hwloc_get_nbobjs_by_type(p->topo, p->leaf);
    return p->ncores > 0 ? 0 : -1;
}

static hwloc_const_cpuset_t bind_core_set(const struct bind_plan *p, int core)
{
    return hwloc_get_obj_by_type(p->topo, p->leaf, (unsigned)core)->cpuset;
}

/* Objects of kind (a LAUNCH_BIND_*) that hold CPUs; 0 when hwloc shows none. */
static int bind_count_objs(const struct bind_plan *p, int kind)
{
    hwloc_obj_type_t type = bind_obj_type(kind);
    int n = hwloc_get_nbobjs_by_type(p->topo, type), k = 0;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(p->topo, type, (unsigned)i);
        k += o->cpuset && !hwloc_bitmap_iszero(o->cpuset);
    }
    return k;
}

/* --map-by OBJ: the slots' natural positions for ranks 0 .. nslots-1 in the mixed-radix order
   [objects, slots per object] with the objects fastest (order [0, 1]). */
static int map_round_robin(const struct bind_plan *p, int map_by, int c, int *slot_of, int *nslots)
{
    int kind = map_as_bind(map_by), nobj = bind_count_objs(p, kind);
    const char *name = bind_kind_name(kind);
    if (nobj < 1) {
        fprintf(stderr, "hintrun: --map-by %s: hwloc shows no %s on this machine\n", name, name);
        return 2;
    }
    if (p->ncores % nobj || (p->ncores / nobj) % c) {
        fprintf(stderr, "hintrun: --map-by %s: %d cores over %d %s%s do not split into slots of "
                "%d cores per %s\n", name, p->ncores, nobj, name, nobj == 1 ? "" : "s", c, name);
        return 2;
    }
    int h[2] = {nobj, p->ncores / nobj / c}, order[2] = {0, 1};
    *nslots = h[0] * h[1];
    if (topo_rank_unmap(2, h, order, slot_of) != HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --map-by %s: %s\n", name, topo_last_error());
        return 2;
    }
    return 0;
}

static int plan_mixed_radix(const struct launch_opts *o, int np, int ncores, int *core_of)
{
    struct topo_hier hier;
    int order[TOPO_MAX_LEVELS];
    if (topo_parse_hierarchy(o->hierarchy, &hier) != HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --hierarchy %s: %s\n", o->hierarchy, topo_last_error());
        return 2;
    }
    if (o->order && topo_parse_order(o->order, hier.nlevels, order) != HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --order %s: %s\n", o->order, topo_last_error());
        return 2;
    }
    if (topo_core_list(hier.nlevels, hier.h, o->order ? order : NULL, np, o->nodes, ncores, NULL, core_of) !=
        HINT_SUCCESS) {
        fprintf(stderr, "hintrun: --hierarchy %s%s%s: %s\n", o->hierarchy, o->order ? " --order " : "",
                o->order ? o->order : "", topo_last_error());
        return 2;
    }
    return 0;
}

/* core_of[r] = first core of rank r's slot of c cores. */
static int plan_slots(const struct launch_job *job, const struct bind_plan *p, int c, int *core_of)
{
    const struct launch_opts *o = job->opts;
    int nslots = p->ncores / c, rc = 0;
    int *slot_of = calloc((size_t)p->ncores + 1, sizeof *slot_of);
    if (!slot_of) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    for (int s = 0; s < nslots; s++)
        slot_of[s] = s;
    if (o->map_by != LAUNCH_MAP_CORE)
        rc = map_round_robin(p, o->map_by, c, slot_of, &nslots);
    for (int r = 0; rc == 0 && r < job->np; r++)
        core_of[r] = slot_of[r % nslots] * c; /* more ranks than slots: only where allowed */
    free(slot_of);
    return rc;
}

/* Rank r's cpuset: its slot's cores, widened to the objects of the --bind-to kind holding them. */
static int plan_cpuset(const struct bind_plan *p, int bind, int first, int c, hwloc_bitmap_t set)
{
    for (int k = 0; k < c; k++)
        hwloc_bitmap_or(set, set, bind_core_set(p, first + k));
    if (bind == LAUNCH_BIND_CORE || bind == LAUNCH_BIND_DEFAULT)
        return 0;
    hwloc_obj_type_t type = bind_obj_type(bind);
    hwloc_bitmap_t wide = hwloc_bitmap_alloc();
    int n = hwloc_get_nbobjs_by_type(p->topo, type);
    for (int i = 0; wide && i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(p->topo, type, (unsigned)i);
        if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set))
            hwloc_bitmap_or(wide, wide, o->cpuset);
    }
    if (!wide)
        return -1;
    hwloc_bitmap_and(set, wide, hwloc_topology_get_allowed_cpuset(p->topo));
    hwloc_bitmap_free(wide);
    return 0;
}

/* The cores a request needs, checked against the machine. */
static int plan_check_fit(const struct launch_job *job, const struct bind_plan *p, int c)
{
    const struct launch_opts *o = job->opts;
    const char *kind = bind_kind_name(o->bind);
    if (o->bind > LAUNCH_BIND_NONE && bind_count_objs(p, o->bind) < 1) {
        fprintf(stderr, "hintrun: --bind-to %s: hwloc shows no %s on this machine\n", kind, kind);
        return 2;
    }
    if (c > p->ncores) {
        fprintf(stderr, "hintrun: --cpus-per-rank %d: only %d cores are available\n", c, p->ncores);
        return 2;
    }
    long need = (long)job->np * c;
    if (need > p->ncores && o->bind == LAUNCH_BIND_CORE) {
        fprintf(stderr, "hintrun: --bind-to core: %d ranks%s need %ld cores but only %d %s "
                "available; run fewer ranks, bind to a socket, NUMA node or L3, or use --bind-to "
                "none\n", job->np, c > 1 ? " of --cpus-per-rank cores" : "", need, p->ncores,
                p->ncores == 1 ? "is" : "are");
        return 2;
    }
    return 0;
}

/* 1 when the ranks are not bound at all */
static int plan_unbound(const struct launch_job *job, const struct bind_plan *p)
{
    const struct launch_opts *o = job->opts;
    if (o->bind == LAUNCH_BIND_NONE)
        return 1;
    /* the default binds only ranks that fit, one slot each */
    return o->bind == LAUNCH_BIND_DEFAULT && !o->hierarchy &&
           (long)job->np * o->cpus_per_rank > p->ncores;
}

static int plan_sets(struct launch_job *job, struct bind_plan *p)
{
    const struct launch_opts *o = job->opts;
    int c = o->hierarchy ? 1 : o->cpus_per_rank;
    p->set = calloc((size_t)job->np, sizeof *p->set);
    if (!p->set)
        return -1;
    for (int r = 0; r < job->np; r++) {
        p->set[r] = hwloc_bitmap_alloc();
        if (!p->set[r] || plan_cpuset(p, o->bind, job->core_of[r], c, p->set[r]))
            return -1;
    }
    return 0;
}

int launch_plan_binding(struct launch_job *job)
{
    const struct launch_opts *o = job->opts;
    struct bind_plan *p = calloc(1, sizeof *p);
    int rc;
    job->core_of = NULL;
    job->cpuset_of = p;
    if (!p) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    if (o->bind == LAUNCH_BIND_NONE && !o->hierarchy)
        return 0;
    if (bind_load(p) != 0) {
        if (o->bind == LAUNCH_BIND_DEFAULT && !o->hierarchy && o->cpus_per_rank == 1 && !o->map_by)
            return 0; /* cannot tell the cores: do not pin */
        fprintf(stderr, "hintrun: cannot read this machine's cores with hwloc\n");
        return 2;
    }
    if ((rc = plan_check_fit(job, p, o->cpus_per_rank)) != 0 || plan_unbound(job, p))
        return rc;
    job->core_of = calloc((size_t)job->np, sizeof *job->core_of);
    if (!job->core_of) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    rc = o->hierarchy ? plan_mixed_radix(o, job->np, p->ncores, job->core_of)
                      : plan_slots(job, p, o->cpus_per_rank, job->core_of);
    if (rc == 0 && plan_sets(job, p) != 0) {
        fprintf(stderr, "hintrun: out of memory\n");
        rc = 1;
    }
    return rc;
}

void launch_free_binding(struct launch_job *job)
{
    struct bind_plan *p = job->cpuset_of;
    if (p) {
        for (int r = 0; p->set && r < job->np; r++)
            hwloc_bitmap_free(p->set[r]);
        free(p->set);
        if (p->topo)
            hwloc_topology_destroy(p->topo);
        free(p);
    }
    job->cpuset_of = NULL;
    free(job->core_of);
    job->core_of = NULL;
}

/* In the child, before exec: the binding (flags 0: the whole process) is inherited across exec. */
void launch_bind_child(const struct launch_job *job, int rank)
{
    const struct bind_plan *p = job->cpuset_of;
    if (!job->core_of || !p || !p->set)
        return;
    if (hwloc_set_cpubind(p->topo, p->set[rank], 0) < 0) {
        char pus[256];
        hwloc_bitmap_list_snprintf(pus, sizeof pus, p->set[rank]);
        dprintf(2, "hintrun: rank %d: could not bind to cpuset %s: %s\n", rank, pus, strerror(errno));
    }
}

/* "core 3", "cores 2-3", or "socket 0" / "numa 0-1" / "l3 0": what rank r is bound to */
static void bind_describe(const struct launch_job *job, int r, char *buf, size_t cap)
{
    const struct bind_plan *p = job->cpuset_of;
    int c = job->opts->hierarchy ? 1 : job->opts->cpus_per_rank, first = job->core_of[r];
    int bind = job->opts->bind;
    if (bind == LAUNCH_BIND_CORE || bind == LAUNCH_BIND_DEFAULT) {
        if (c == 1)
            snprintf(buf, cap, "core %d", first);
        else
            snprintf(buf, cap, "cores %d-%d", first, first + c - 1);
        return;
    }
    hwloc_obj_type_t type = bind_obj_type(bind);
    hwloc_bitmap_t idx = hwloc_bitmap_alloc();
    int n = hwloc_get_nbobjs_by_type(p->topo, type);
    for (int i = 0; idx && i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(p->topo, type, (unsigned)i);
        if (o->cpuset && hwloc_bitmap_isincluded(o->cpuset, p->set[r]) && !hwloc_bitmap_iszero(o->cpuset))
            hwloc_bitmap_set(idx, (unsigned)i);
    }
    int len = snprintf(buf, cap, "%s ", bind_kind_name(bind));
    if (idx && len > 0 && (size_t)len < cap)
        hwloc_bitmap_list_snprintf(buf + len, cap - (size_t)len, idx);
    len = (int)strlen(buf);
    snprintf(buf + len, cap - (size_t)len, c == 1 ? " (core %d" : " (cores %d-%d", first, first + c - 1);
    len = (int)strlen(buf);
    snprintf(buf + len, cap - (size_t)len, ")");
    hwloc_bitmap_free(idx);
}

void launch_report_bindings(const struct launch_job *job)
{
    const struct bind_plan *p = job->cpuset_of;
    if (!job->opts->report_bindings)
        return;
    char host[300] = ""; /* an agent (--host) names its host; ranks are world ranks */
    if (job->agent)
        snprintf(host, sizeof host, " on host %s", job->host);
    for (int r = 0; r < job->np; r++) {
        if (job->core_of && p && p->set) {
            char what[256], pus[256];
            bind_describe(job, r, what, sizeof what);
            hwloc_bitmap_list_snprintf(pus, sizeof pus, p->set[r]);
            fprintf(stderr, "hintrun: rank %d (pid %d)%s bound to %s, cpuset %s\n", job->rank_base + r,
                    (int)job->ranks[r].pid, host, what, pus);
        } else {
            fprintf(stderr, "hintrun: rank %d (pid %d)%s not bound (%s)\n", job->rank_base + r,
                    (int)job->ranks[r].pid, host,
                    job->opts->bind == LAUNCH_BIND_NONE ? "--bind-to none" : "more ranks than cores");
        }
    }
}
