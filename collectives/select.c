/*
 * collectives/select.c — the algorithm tables and the one selector.
 *
 * Selection, first match wins: forced (hint_coll_set, else env HINT_<OP>) > the tuning file's
 * rules > online autotuning > the built-in rules (rules_default.c, in the same format; rules.h).
 * A forced algorithm whose predicate refuses the call returns HINT_ERR_UNSUPPORTED, unless
 * HINT_COLL_FALLBACK=warn|silent lets the rules choose instead. The tables also feed hint_info
 * and the tests, so a new algorithm is one line here (and a rule, if it should run by default).
 */
#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/hier.h"
#include "collectives/rules.h"
#include "collectives/sched.h"
#include "collectives/tune.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

/* The shared-heap copy orders serve alltoall, alltoallv, allgather and allgatherv alike. */
#define DESC_ROW "shared heap: each rank copies every block into its own receive buffer"
#define DESC_COLUMN "shared heap: each rank copies its own send buffer to every receiver"
#define DESC_HILBERT "shared heap: ranks copy Hilbert-curve tiles of the block matrix"
#define DESC_MORTON "shared heap: ranks copy equal segments of the Z curve over the block matrix"
#define DESC_MORTON_NUMA "shared heap: per socket, s steps of Morton bunches into the socket's own buffers"

/* The hierarchical ones (hier.h): a phase on each node with the one-node algorithms, one between nodes. */
#define DESC_HIER_BARRIER "node barrier, dissemination among node leaders, node barrier"
#define DESC_HIER_BCAST "node bcast on the root's node, binomial among node leaders, node bcast on the others"
#define DESC_HIER_REDUCE "node reduce to each leader, binomial among node leaders, to the root"
#define DESC_HIER_ALLREDUCE "node reduce, leaders allreduce, node bcast; large: node reduce-scatter, per-segment allreduce across nodes, node allgather"
#define DESC_HIER_ALLGATHER "node gather to each leader, ring allgatherv among node leaders, node bcast"
#define DESC_HIER_ALLGATHERV "node gatherv to each leader, packed in node order; ring allgatherv among node leaders; node bcast"
#define DESC_HIER_HINT "HINT Alg. 5: the node's own alltoall over the shared heap, then pairwise between nodes"
#define DESC_HIER_HINT_OVERLAP "HINT Alg. 5 pipelined: the inter-node sends and receives posted, the node's alltoall over the shared heap, then wait"
#define DESC_HIER_MORTON "Morton MN-CO: node leaders exchange node-to-node cells along the Z curve, aggregated"

#define ALG(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn}
/* an algorithm that copies straight from and to derived layouts */
#define TYPED(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn, .typed = true}
/* ... that needs every member on one node (node area, shared heap): never on a group spanning nodes */
#define NODE_ALG(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn, .node_only = true}
#define NODE_TYPED(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn, .typed = true, .node_only = true}
#define NALGS(t) ((int)(sizeof t / sizeof t[0]))

/* Each table is indexed by its own enum, so an algorithm's place is its identity; the rules
   (rules_default.c, tuning files) name algorithms, never indices. */
enum { BARRIER_DISSEMINATION, BARRIER_SHM, BARRIER_HIER, BARRIER_STAGED };
static const struct coll_alg barrier_algs[] = {
    [BARRIER_DISSEMINATION] = ALG("dissemination", "log2(P) rounds of empty messages to rank + 2^k", NULL,
                                  barrier_dissemination),
    [BARRIER_SHM] = NODE_ALG("shm", "arrival counter and release flag in the node segment", coll_shm_ok, barrier_shm),
    [BARRIER_HIER] = ALG("hier", DESC_HIER_BARRIER, NULL, barrier_hier),
    [BARRIER_STAGED] = NODE_ALG("staged", "each rank stores the barrier's number in its own line and polls the others'",
                                coll_heap_ok, barrier_staged),
};
enum { BCAST_BINOMIAL, BCAST_SHM, BCAST_HEAP, BCAST_HIER, BCAST_STAGED };
static const struct coll_alg bcast_algs[] = {
    [BCAST_BINOMIAL] = ALG("binomial", "binomial tree from the root, whole message per edge", NULL, bcast_binomial),
    [BCAST_SHM] = NODE_TYPED("shm", "root copies 4 KiB chunks into a ring of 16 shared cells, every rank copies out",
                        coll_shm_ok, bcast_shm),
    [BCAST_HEAP] = NODE_TYPED("heap", "shared heap: every rank copies straight out of the root's buffer (off the heap: shm)",
                         coll_heap_ok, bcast_heap),
    [BCAST_HIER] = ALG("hier", DESC_HIER_BCAST, NULL, bcast_hier),
    [BCAST_STAGED] = NODE_ALG("staged", "small: the root stages the message in its heap area and leaves, every rank copies it out",
                              bcast_staged_ok, bcast_staged),
};
enum { REDUCE_BINOMIAL, REDUCE_STAGED, REDUCE_HEAP, REDUCE_HIER };
static const struct coll_alg reduce_algs[] = {
    [REDUCE_BINOMIAL] = ALG("binomial", "binomial tree towards the root, combining on the way", NULL, reduce_binomial),
    [REDUCE_STAGED] = NODE_ALG("staged", "small: inputs staged, the root combines all P; the others leave at once",
                       reduce_staged_ok, reduce_staged),
    [REDUCE_HEAP] = NODE_ALG("heap", "shared heap: rank i combines segment i of every input straight into the root's output",
                        coll_heap_ok, reduce_heap),
    [REDUCE_HIER] = ALG("hier", DESC_HIER_REDUCE, NULL, reduce_hier),
};
enum { ALLREDUCE_RECURSIVE_DOUBLING, ALLREDUCE_REDUCE_BCAST, ALLREDUCE_RING, ALLREDUCE_STAGED, ALLREDUCE_HEAP,
       ALLREDUCE_HIER };
static const struct coll_alg allreduce_algs[] = {
    [ALLREDUCE_RECURSIVE_DOUBLING] = ALG("recursive_doubling", "exchange-and-combine with rank ^ 2^k (any P)", NULL,
                                         allreduce_recursive_doubling),
    [ALLREDUCE_REDUCE_BCAST] = ALG("reduce_bcast", "binomial reduce to rank 0, then binomial bcast", NULL,
                                   allreduce_reduce_bcast),
    [ALLREDUCE_RING] = ALG("ring", "ring reduce-scatter then ring allgather (bandwidth-optimal)", NULL, allreduce_ring),
    [ALLREDUCE_STAGED] = NODE_ALG("staged", "small: inputs staged in each rank's heap area, one flag each, every rank reduces all",
                          allreduce_staged_ok, allreduce_staged),
    [ALLREDUCE_HEAP] = NODE_ALG("heap", "shared heap: each rank reduces its segment from all inputs in place, then copies the rest",
                           coll_heap_ok, allreduce_heap),
    [ALLREDUCE_HIER] = ALG("hier", DESC_HIER_ALLREDUCE, NULL, allreduce_hier),
};
enum { GATHER_LINEAR, GATHER_BINOMIAL, GATHER_STAGED, GATHER_HEAP };
static const struct coll_alg gather_algs[] = {
    [GATHER_LINEAR] = ALG("linear", "root receives from every rank straight into place", NULL, gather_linear),
    [GATHER_BINOMIAL] = ALG("binomial", "binomial tree, subtrees forwarded in one message", NULL, gather_binomial),
    [GATHER_STAGED] = NODE_ALG("staged", "small blocks staged by every rank, the root copies them out; the others leave at once",
                       gather_staged_ok, gather_staged),
    [GATHER_HEAP] = NODE_ALG("heap", "shared heap: every rank copies its block straight into the root's buffer", coll_heap_ok,
                        gather_heap),
};
enum { GATHERV_LINEAR };
static const struct coll_alg gatherv_algs[] = {
    [GATHERV_LINEAR] = ALG("linear", "root receives from every rank straight into place", NULL, gatherv_linear),
};
enum { SCATTER_LINEAR, SCATTER_BINOMIAL, SCATTER_STAGED, SCATTER_HEAP };
static const struct coll_alg scatter_algs[] = {
    [SCATTER_LINEAR] = ALG("linear", "root sends every rank its block", NULL, scatter_linear),
    [SCATTER_BINOMIAL] = ALG("binomial", "binomial tree, subtrees forwarded in one message", NULL, scatter_binomial),
    [SCATTER_STAGED] = NODE_ALG("staged", "small blocks staged by the root, every rank copies its own out; the root leaves at once",
                        scatter_staged_ok, scatter_staged),
    [SCATTER_HEAP] = NODE_ALG("heap", "shared heap: every rank copies its block straight out of the root's buffer",
                         coll_heap_ok, scatter_heap),
};
enum { SCATTERV_LINEAR };
static const struct coll_alg scatterv_algs[] = {
    [SCATTERV_LINEAR] = ALG("linear", "root sends every rank its block", NULL, scatterv_linear),
};
enum { ALLGATHER_RING, ALLGATHER_RECURSIVE_DOUBLING, ALLGATHER_BRUCK, ALLGATHER_MORTON, ALLGATHER_MORTON_NUMA,
       ALLGATHER_STAGED, ALLGATHER_HIER };
static const struct coll_alg allgather_algs[] = {
    [ALLGATHER_RING] = ALG("ring", "P-1 steps passing blocks to the right", NULL, allgather_ring),
    [ALLGATHER_RECURSIVE_DOUBLING] = ALG("recursive_doubling",
                                         "exchange everything so far with rank ^ 2^k (P a power of two)",
                                         allgather_recursive_doubling_ok, allgather_recursive_doubling),
    [ALLGATHER_BRUCK] = ALG("bruck", "log2(P) rounds to rank - 2^k, then a local rotation", NULL, allgather_bruck),
    [ALLGATHER_MORTON] = NODE_TYPED("morton", DESC_MORTON, coll_shm_ok, allgather_morton),
    [ALLGATHER_MORTON_NUMA] = NODE_TYPED("morton_numa", DESC_MORTON_NUMA, coll_shm_ok, allgather_morton_numa),
    [ALLGATHER_STAGED] = NODE_TYPED("staged", "small blocks: each staged once in its sender's heap area, one flag per rank, no barrier",
                            allgather_staged_ok, allgather_staged),
    [ALLGATHER_HIER] = ALG("hier", DESC_HIER_ALLGATHER, NULL, allgather_hier),
};
enum { ALLGATHERV_RING, ALLGATHERV_LINEAR, ALLGATHERV_MORTON, ALLGATHERV_MORTON_NUMA, ALLGATHERV_HIER };
static const struct coll_alg allgatherv_algs[] = {
    [ALLGATHERV_RING] = ALG("ring", "P-1 steps passing blocks to the right", NULL, allgatherv_ring),
    [ALLGATHERV_LINEAR] = ALG("linear", "everything posted at once", NULL, allgatherv_linear),
    [ALLGATHERV_MORTON] = NODE_TYPED("morton", DESC_MORTON, coll_shm_ok, allgatherv_morton),
    [ALLGATHERV_MORTON_NUMA] = NODE_TYPED("morton_numa", DESC_MORTON_NUMA, coll_shm_ok, allgatherv_morton_numa),
    [ALLGATHERV_HIER] = ALG("hier", DESC_HIER_ALLGATHERV, NULL, allgatherv_hier),
};
enum { ALLTOALL_PAIRWISE, ALLTOALL_BRUCK, ALLTOALL_LINEAR, ALLTOALL_ROW, ALLTOALL_COLUMN, ALLTOALL_HILBERT,
       ALLTOALL_MORTON, ALLTOALL_MORTON_NUMA, ALLTOALL_STAGED, ALLTOALL_HIER_HINT,
       ALLTOALL_HIER_MORTON, ALLTOALL_HIER_HINT_OVERLAP };
static const struct coll_alg alltoall_algs[] = {
    [ALLTOALL_PAIRWISE] = ALG("pairwise", "step s exchanges with rank + s and rank - s", NULL, alltoall_pairwise),
    [ALLTOALL_BRUCK] = ALG("bruck", "log2(P) rounds of packed blocks, for small blocks", NULL, alltoall_bruck),
    [ALLTOALL_LINEAR] = ALG("linear", "every send and receive posted at once", NULL, alltoall_linear),
    [ALLTOALL_ROW] = NODE_TYPED("row", DESC_ROW, coll_shm_ok, alltoall_row),
    [ALLTOALL_COLUMN] = NODE_TYPED("column", DESC_COLUMN, coll_shm_ok, alltoall_column),
    [ALLTOALL_HILBERT] = NODE_TYPED("hilbert", DESC_HILBERT, coll_shm_ok, alltoall_hilbert),
    [ALLTOALL_MORTON] = NODE_TYPED("morton", DESC_MORTON, coll_shm_ok, alltoall_morton),
    [ALLTOALL_MORTON_NUMA] = NODE_TYPED("morton_numa", DESC_MORTON_NUMA, coll_shm_ok, alltoall_morton_numa),
    [ALLTOALL_STAGED] = NODE_TYPED("staged", "small blocks: staged in each sender's heap area, one flag per rank, no barrier",
                           alltoall_staged_ok, alltoall_staged),
    [ALLTOALL_HIER_HINT] = ALG("hier_hint", DESC_HIER_HINT, NULL, alltoall_hier_hint),
    [ALLTOALL_HIER_MORTON] = ALG("hier_morton", DESC_HIER_MORTON, NULL, alltoall_hier_morton),
    [ALLTOALL_HIER_HINT_OVERLAP] = ALG("hier_hint_overlap", DESC_HIER_HINT_OVERLAP, NULL, alltoall_hier_hint_overlap),
};
enum { ALLTOALLV_LINEAR, ALLTOALLV_PAIRWISE, ALLTOALLV_ROW, ALLTOALLV_COLUMN, ALLTOALLV_HILBERT, ALLTOALLV_MORTON,
       ALLTOALLV_MORTON_NUMA, ALLTOALLV_HIER_HINT, ALLTOALLV_HIER_HINT_OVERLAP, ALLTOALLV_HIER_MORTON };
static const struct coll_alg alltoallv_algs[] = {
    [ALLTOALLV_LINEAR] = ALG("linear", "every send and receive posted at once", NULL, alltoallv_linear),
    [ALLTOALLV_PAIRWISE] = ALG("pairwise", "step s exchanges with rank + s and rank - s", NULL, alltoallv_pairwise),
    [ALLTOALLV_ROW] = NODE_TYPED("row", DESC_ROW, coll_shm_ok, alltoallv_row),
    [ALLTOALLV_COLUMN] = NODE_TYPED("column", DESC_COLUMN, coll_shm_ok, alltoallv_column),
    [ALLTOALLV_HILBERT] = NODE_TYPED("hilbert", DESC_HILBERT, coll_shm_ok, alltoallv_hilbert),
    [ALLTOALLV_MORTON] = NODE_TYPED("morton", DESC_MORTON, coll_shm_ok, alltoallv_morton),
    [ALLTOALLV_MORTON_NUMA] = NODE_TYPED("morton_numa", DESC_MORTON_NUMA, coll_shm_ok, alltoallv_morton_numa),
    [ALLTOALLV_HIER_HINT] = ALG("hier_hint", DESC_HIER_HINT, NULL, alltoallv_hier_hint),
    [ALLTOALLV_HIER_HINT_OVERLAP] = ALG("hier_hint_overlap", DESC_HIER_HINT_OVERLAP, NULL, alltoallv_hier_hint_overlap),
    [ALLTOALLV_HIER_MORTON] = ALG("hier_morton", DESC_HIER_MORTON, NULL, alltoallv_hier_morton),
};
enum { RSB_REDUCE_SCATTER, RSB_RING, RSB_STAGED, RSB_HEAP };
static const struct coll_alg rsb_algs[] = {
    [RSB_REDUCE_SCATTER] = ALG("reduce_scatter", "binomial reduce to rank 0, then binomial scatter", NULL,
                               reduce_scatter_block_reduce_scatter),
    [RSB_RING] = ALG("ring", "P-1 ring steps of pass-and-combine", NULL, reduce_scatter_block_ring),
    [RSB_STAGED] = NODE_ALG("staged", "small blocks: inputs staged, rank i combines block i of all", reduce_scatter_block_staged_ok,
                    reduce_scatter_block_staged),
    [RSB_HEAP] = NODE_ALG("heap", "shared heap: rank i combines block i of every input straight into its output",
                     coll_heap_ok, reduce_scatter_block_heap),
};
enum { SCAN_RECURSIVE_DOUBLING, SCAN_LINEAR };
static const struct coll_alg scan_algs[] = {
    [SCAN_RECURSIVE_DOUBLING] = ALG("recursive_doubling", "log2(P) exchanges with rank ^ 2^k, combined in rank order",
                                    NULL, scan_recursive_doubling),
    [SCAN_LINEAR] = ALG("linear", "a chain: each rank gets the prefix from rank - 1 and passes it on", NULL, scan_linear),
};
static const struct coll_alg exscan_algs[] = {
    [SCAN_RECURSIVE_DOUBLING] = ALG("recursive_doubling", "log2(P) exchanges with rank ^ 2^k, combined in rank order",
                                    NULL, exscan_recursive_doubling),
    [SCAN_LINEAR] = ALG("linear", "a chain: each rank gets the prefix from rank - 1 and passes it on", NULL, exscan_linear),
};
enum { REDUCE_SCATTER_REDUCE_SCATTERV };
static const struct coll_alg reduce_scatter_algs[] = {
    [REDUCE_SCATTER_REDUCE_SCATTERV] = ALG("reduce_scatterv", "binomial reduce to rank 0, then every part sent at once",
                                           NULL, reduce_scatter_reduce_scatterv),
};
enum { ALLTOALLW_PAIRWISE, ALLTOALLW_LINEAR };
static const struct coll_alg alltoallw_algs[] = {
    [ALLTOALLW_PAIRWISE] = ALG("pairwise", "step s exchanges with rank + s and rank - s, in each block's own types",
                               NULL, alltoallw_pairwise),
    [ALLTOALLW_LINEAR] = ALG("linear", "every send and receive posted at once, in each block's own types", NULL,
                             alltoallw_linear),
};
enum { NEIGHBOR_NAIVE, NEIGHBOR_DISTANCE_HALVING, NEIGHBOR_MORTON, NEIGHBOR_STAGED };
static const struct coll_alg neighbor_algs[] = {
    [NEIGHBOR_NAIVE] = TYPED("naive", "every neighbour's message posted at once, in the caller's datatypes", NULL,
                             neighbor_naive),
    [NEIGHBOR_DISTANCE_HALVING] = TYPED("distance_halving",
                                        "neighbor_allgather(v): agents in the opposite half carry blocks through "
                                        "log2(P/L) halving steps, then one message per destination on the socket",
                                        neighbor_distance_halving_ok, neighbor_distance_halving),
    [NEIGHBOR_MORTON] = NODE_TYPED("morton",
                                   "neighbor_allgather(v) and neighbor_alltoall(v): shared heap, ranks copy "
                                   "equal segments of the compact Z curve over the topology's edges",
                                   neighbor_morton_ok, neighbor_morton),
    [NEIGHBOR_STAGED] = NODE_TYPED("staged",
                                   "neighbor_allgather and neighbor_alltoall: each rank stages its blocks in its "
                                   "head on the shared heap and reads its in-neighbours' heads, no barrier",
                                   neighbor_staged_ok, neighbor_staged),
};

#define TABLE(id, opname, algs) [id] = {opname, algs, NALGS(algs)}
const struct coll_table coll_tables[COLL_NOPS] = {
    TABLE(COLL_BARRIER, "barrier", barrier_algs),
    TABLE(COLL_BCAST, "bcast", bcast_algs),
    TABLE(COLL_REDUCE, "reduce", reduce_algs),
    TABLE(COLL_ALLREDUCE, "allreduce", allreduce_algs),
    TABLE(COLL_GATHER, "gather", gather_algs),
    TABLE(COLL_GATHERV, "gatherv", gatherv_algs),
    TABLE(COLL_SCATTER, "scatter", scatter_algs),
    TABLE(COLL_SCATTERV, "scatterv", scatterv_algs),
    TABLE(COLL_ALLGATHER, "allgather", allgather_algs),
    TABLE(COLL_ALLGATHERV, "allgatherv", allgatherv_algs),
    TABLE(COLL_ALLTOALL, "alltoall", alltoall_algs),
    TABLE(COLL_ALLTOALLV, "alltoallv", alltoallv_algs),
    TABLE(COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", rsb_algs),
    TABLE(COLL_NEIGHBOR_ALLGATHER, "neighbor_allgather", neighbor_algs),
    TABLE(COLL_NEIGHBOR_ALLGATHERV, "neighbor_allgatherv", neighbor_algs),
    TABLE(COLL_NEIGHBOR_ALLTOALL, "neighbor_alltoall", neighbor_algs),
    TABLE(COLL_NEIGHBOR_ALLTOALLV, "neighbor_alltoallv", neighbor_algs),
    TABLE(COLL_SCAN, "scan", scan_algs),
    TABLE(COLL_EXSCAN, "exscan", exscan_algs),
    TABLE(COLL_REDUCE_SCATTER, "reduce_scatter", reduce_scatter_algs),
    TABLE(COLL_ALLTOALLW, "alltoallw", alltoallw_algs),
};

/* ---- forcing ---- */
static int forced[COLL_NOPS];      /* index + 1; 0 = auto */
const char *coll_last_ran[COLL_NOPS];
static bool env_read;

int coll_op_by_name(const char *op)
{
    for (int i = 0; i < COLL_NOPS; i++)
        if (strcmp(coll_tables[i].op, op) == 0)
            return i;
    return -1;
}

static int alg_index(int op_id, const char *name)
{
    const struct coll_table *t = &coll_tables[op_id];
    for (int i = 0; i < t->nalgs; i++)
        if (strcmp(t->algs[i].name, name) == 0)
            return i;
    return -1;
}

/* "staged" was called "shm" before barrier and bcast kept that name for their own mechanisms:
   the old name still selects it, so older scripts and tuning files keep working. */
int coll_alg_by_name(int op_id, const char *name)
{
    int k = alg_index(op_id, name);
    return k < 0 && strcmp(name, "shm") == 0 ? alg_index(op_id, "staged") : k;
}

static void read_env(void)
{
    env_read = true;
    for (int op = 0; op < COLL_NOPS; op++) {
        char var[64] = "HINT_";
        for (size_t i = 0; coll_tables[op].op[i] && i < 50; i++)
            var[5 + i] = (char)toupper((unsigned char)coll_tables[op].op[i]);
        const char *v = getenv(var);
        if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
            continue;
        int alg = coll_alg_by_name(op, v);
        if (alg < 0)
            RT_ERR("coll", "%s=%s names no %s algorithm (see hint_info); using the defaults", var, v,
                   coll_tables[op].op);
        else
            forced[op] = alg + 1;
    }
}

const char *coll_forced_name(int op_id)
{
    if (!env_read)
        read_env();
    return forced[op_id] ? coll_tables[op_id].algs[forced[op_id] - 1].name : NULL;
}

int hint_coll_set(const char *op, const char *algorithm)
{
    if (op == NULL || algorithm == NULL)
        return HINT_ERR_ARG;
    if (!env_read)
        read_env();
    int id = coll_op_by_name(op);
    if (id < 0)
        return HINT_ERR_ARG;
    if (strcmp(algorithm, "auto") == 0) {
        forced[id] = 0;
        return HINT_SUCCESS;
    }
    int alg = coll_alg_by_name(id, algorithm);
    if (alg < 0)
        return HINT_ERR_ARG;
    forced[id] = alg + 1;
    return HINT_SUCCESS;
}

int hint_coll_last(const char *op, const char **algorithm)
{
    if (op == NULL || algorithm == NULL)
        return HINT_ERR_ARG;
    int id = coll_op_by_name(op);
    if (id < 0 && op[0] == 'i' && (id = coll_op_by_name(op + 1)) >= 0) { /* "ialltoall": nonblocking */
        *algorithm = nbc_last_ran(id);
        return HINT_SUCCESS;
    }
    if (id < 0)
        return HINT_ERR_ARG;
    *algorithm = coll_last_ran[id];
    return HINT_SUCCESS;
}

static int fallback_mode(void)
{
    const char *v = rt_cfg_str("HINT_COLL_FALLBACK");
    return strcmp(v, "silent") == 0 ? 2 : strcmp(v, "warn") == 0 ? 1 : 0;
}

static bool spans_nodes(const struct coll_args *a)
{
    int nodes, ppn;
    coll_shape(a, &nodes, &ppn);
    return nodes > 1;
}

bool coll_alg_usable(int alg, const struct coll_args *a)
{
    const struct coll_alg *x = &coll_tables[a->op_id].algs[alg];
    if (x->node_only && spans_nodes(a))
        return false;
    return x->applicable == NULL || x->applicable(a);
}

/* A forced algorithm that cannot run this call: HINT_ERR_UNSUPPORTED (HINT_COLL_FALLBACK=warn
   or silent: -1, the rules choose). A node-only one on a group spanning nodes is said once per
   operation, by the group's rank 0 (every member finds the same). */
static int refuse_forced(const struct coll_table *t, const struct coll_alg *alg, const struct coll_args *a)
{
    static bool said[COLL_NOPS];
    int mode = fallback_mode(), nodes, ppn;
    coll_shape(a, &nodes, &ppn);
    bool spanning = alg->node_only && nodes > 1;
    if (mode == 1)
        RT_ERR("coll", "%s algorithm %s cannot run here (P=%d%s); running the default instead", t->op, alg->name,
               a->size, spanning ? ", members on several nodes" : "");
    else if (mode == 0 && spanning && a->rank == 0 && !said[a->op_id]) {
        said[a->op_id] = true;
        RT_ERR("coll", "%s algorithm %s needs every member on one node, but this group of %d spans %d nodes: "
               "the call returns HINT_ERR_UNSUPPORTED (force a message-based one, or 'auto')", t->op, alg->name,
               a->size, nodes);
    }
    return mode == 0 ? HINT_ERR_UNSUPPORTED : -1;
}

/* Derived sides reach only the algorithms that copy straight from and to them, and those only
   while HINT_COLL_TYPED is on (off: every derived call is packed, to measure what that costs). */
static int run_alg(const struct coll_alg *alg, struct coll_args *a)
{
    static int typed = -1;
    if (!coll_has_layout(a))
        return alg->run(a);
    if (typed < 0)
        typed = (int)rt_cfg_long("HINT_COLL_TYPED");
    return alg->typed && typed ? alg->run(a) : coll_run_packed(a, alg->run);
}

/* The defaults' choice for the call, remembered per group and operation for the next call of
   the same shape: the rules and every applicability test of these operations read only the
   group, the sizes, the root, the reduction and whether a side is derived (never the buffers),
   so the same fields give the same answer. A small call then skips ~300 instructions of rules
   and tests (callgrind, 8-byte allreduce at P=2). The v operations, whose counts differ per
   call, always ask the rules; neighbor_allgather and neighbor_alltoall have one block size per
   call (api.c), and their defaults' tests read only the group and it. */
static const bool memo_ops[COLL_NOPS] = {
    [COLL_BARRIER] = true, [COLL_BCAST] = true,  [COLL_REDUCE] = true,    [COLL_ALLREDUCE] = true,
    [COLL_GATHER] = true,  [COLL_SCATTER] = true, [COLL_ALLGATHER] = true, [COLL_ALLTOALL] = true,
    [COLL_REDUCE_SCATTER_BLOCK] = true, [COLL_NEIGHBOR_ALLGATHER] = true, [COLL_NEIGHBOR_ALLTOALL] = true,
};
static_assert(COLL_NEIGHBOR_ALLTOALL + 1 == sizeof((struct coll_group *)0)->memo / sizeof(struct coll_pick_memo),
              "a memo per operation memo_ops names");

/* Which sides are derived, as the memo keeps it. */
static unsigned memo_sides(const struct coll_args *a) { return (a->sl.type != NULL) | (unsigned)(a->rl.type != NULL) << 1; }

/* The same shape as the call the memo was made for: the group's shape (a unit test may attach
   another to the same group) and the call's fields (count follows from block and esize). */
static bool memo_fits(const struct coll_pick_memo *m, const struct coll_group *cg, const struct coll_args *a)
{
    return m->valid && m->block == a->block && m->esize == a->esize && m->op == a->op && m->root == a->root &&
           m->sides == memo_sides(a) && m->size == a->size && m->slot == cg->slot && m->nodes == cg->nodes &&
           m->ppn == cg->ppn;
}

/* A miss: the rules choose, and the memo (m, when the operation has one) remembers. */
static __attribute__((noinline)) int default_pick_rules(const struct coll_args *a, int *copy, struct coll_pick_memo *m,
                                                        const struct coll_group *cg)
{
    int pick = rules_pick(rules_default(), a, copy);
    if (m)
        *m = (struct coll_pick_memo){.size = a->size, .slot = cg->slot, .nodes = cg->nodes, .ppn = cg->ppn,
                                     .block = a->block, .esize = a->esize, .op = a->op, .root = a->root,
                                     .pick = pick, .copy = *copy, .sides = memo_sides(a), .valid = true};
    return pick;
}

static inline int default_pick(const struct coll_args *a, int *copy)
{
    struct coll_group *cg = a->g && coll_group_key >= 0 && memo_ops[a->op_id] ? coll_group_of(a->g) : NULL;
    struct coll_pick_memo *m = cg ? &cg->memo[a->op_id] : NULL;
    if (m && memo_fits(m, cg, a)) {
        *copy = m->copy;
        return m->pick;
    }
    return default_pick_rules(a, copy, m, cg);
}

/* Selection: forced (hint_coll_set, HINT_<OP>) > tuning file > online autotuning > defaults. */
static int pick_and_run(struct coll_args *a)
{
    const struct coll_table *t = &coll_tables[a->op_id];
    if (!env_read)
        read_env();
    int pick = forced[a->op_id] - 1, copy = -1;
    if (pick < 0 && tune_idle()) {
        /* the usual call: nothing forced, nothing tuned, so the defaults (remembered) choose */
        pick = default_pick(a, &copy);
        if (pick >= 0)
            a->copy = copy;
        else
            pick = 0;
        coll_last_ran[a->op_id] = t->algs[pick].name;
        return run_alg(&t->algs[pick], a);
    }
    if (pick >= 0 && !coll_alg_usable(pick, a)) {
        int st = refuse_forced(t, &t->algs[pick], a);
        if (st != -1)
            return st;
        pick = -1;
    }
    if (pick < 0 && tune_lookup(a, &pick, &copy)) {
        if (!coll_alg_usable(pick, a))
            pick = -1; /* the file's choice cannot run here (e.g. no collective slot) */
        else
            a->copy = copy;
    }
    int tuning = pick < 0 ? autotune_pick(a) : -1;
    if (tuning >= 0)
        pick = tuning;
    if (pick < 0 && (pick = default_pick(a, &copy)) >= 0)
        a->copy = copy;
    if (pick < 0)
        pick = 0; /* every table's first algorithm runs anywhere */
    coll_last_ran[a->op_id] = t->algs[pick].name;
    if (tuning < 0)
        return run_alg(&t->algs[pick], a);
    double t0 = hint_wtime();
    int st = run_alg(&t->algs[pick], a);
    autotune_record(a, pick, hint_wtime() - t0);
    return st;
}

/* The call is recorded in runtime/trace.h's record while it runs (a few stores), so a rank that
   hangs in it can say where (HINT_HANG_TIMEOUT, hintrun --timeout). */
int coll_run(struct coll_args *a)
{
    trace_coll_begin(coll_tables[a->op_id].op, a->g->ctx, a->g->coll_seq, a->g->world[a->root],
                     &coll_last_ran[a->op_id]);
    int st = pick_and_run(a);
    trace_coll_end();
    return st;
}

const char *coll_default_name(int op_id, int P, size_t bytes)
{
    struct coll_args a = {.op_id = op_id, .size = P, .block = bytes, .count = bytes / 8};
    int copy, pick = rules_pick(rules_default(), &a, &copy);
    return coll_tables[op_id].algs[pick >= 0 ? pick : 0].name;
}
