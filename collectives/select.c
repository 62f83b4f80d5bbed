/*
 * collectives/select.c — the algorithm tables and the one selector.
 *
 * Selection, first match wins: forced (hint_coll_set, else env HINT_<OP>) > built-in defaults
 * by P and bytes. A forced algorithm whose predicate refuses the call returns
 * HINT_ERR_UNSUPPORTED, unless HINT_COLL_FALLBACK=warn|silent lets the defaults run instead.
 * The tables also feed hint_info and the tests, so a new algorithm is one line here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/tune.h"
#include "runtime/runtime.h"
#include "runtime/trace.h"

/* The shared-heap copy orders serve alltoall, alltoallv, allgather and allgatherv alike. */
#define DESC_ROW "shared heap: each rank copies every block into its own receive buffer"
#define DESC_COLUMN "shared heap: each rank copies its own send buffer to every receiver"
#define DESC_HILBERT "shared heap: ranks copy Hilbert-curve tiles of the block matrix"
#define DESC_MORTON "shared heap: ranks copy equal segments of the Z curve over the block matrix"
#define DESC_MORTON_NUMA "shared heap: per socket, s steps of Morton bunches into the socket's own buffers"

#define ALG(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn}
/* an algorithm that copies straight from and to derived layouts */
#define TYPED(n, d, ok, fn) {.name = n, .desc = d, .applicable = ok, .run = fn, .typed = true}
#define NALGS(t) ((int)(sizeof t / sizeof t[0]))

static const struct coll_alg barrier_algs[] = {
    ALG("dissemination", "log2(P) rounds of empty messages to rank + 2^k", NULL, barrier_dissemination),
    ALG("shm", "arrival counter and release flag in the node segment", coll_shm_ok, barrier_shm),
};
static const struct coll_alg bcast_algs[] = {
    ALG("binomial", "binomial tree from the root, whole message per edge", NULL, bcast_binomial),
    TYPED("shm", "root copies 4 KiB chunks into a ring of 16 shared cells, every rank copies out", coll_shm_ok, bcast_shm),
    TYPED("heap", "shared heap: every rank copies straight out of the root's buffer (off the heap: shm)",
          coll_heap_ok, bcast_heap),
};
static const struct coll_alg reduce_algs[] = {
    ALG("binomial", "binomial tree towards the root, combining on the way", NULL, reduce_binomial),
    ALG("shm", "small: inputs staged, the root combines all P; the others leave at once", reduce_staged_ok,
        reduce_staged),
    ALG("heap", "shared heap: rank i combines segment i of every input straight into the root's output",
        coll_heap_ok, reduce_heap),
};
static const struct coll_alg allreduce_algs[] = {
    ALG("recursive_doubling", "exchange-and-combine with rank ^ 2^k (any P)", NULL, allreduce_recursive_doubling),
    ALG("reduce_bcast", "binomial reduce to rank 0, then binomial bcast", NULL, allreduce_reduce_bcast),
    ALG("ring", "ring reduce-scatter then ring allgather (bandwidth-optimal)", NULL, allreduce_ring),
    ALG("shm", "small: inputs staged in each rank's heap area, one flag each, every rank reduces all",
        allreduce_staged_ok, allreduce_staged),
    ALG("heap", "shared heap: each rank reduces its segment from all inputs in place, then copies the rest",
        coll_heap_ok, allreduce_heap),
};
static const struct coll_alg gather_algs[] = {
    ALG("linear", "root receives from every rank straight into place", NULL, gather_linear),
    ALG("binomial", "binomial tree, subtrees forwarded in one message", NULL, gather_binomial),
    ALG("shm", "small blocks staged by every rank, the root copies them out; the others leave at once",
        gather_staged_ok, gather_staged),
    ALG("heap", "shared heap: every rank copies its block straight into the root's buffer", coll_heap_ok,
        gather_heap),
};
static const struct coll_alg gatherv_algs[] = {
    ALG("linear", "root receives from every rank straight into place", NULL, gatherv_linear),
};
static const struct coll_alg scatter_algs[] = {
    ALG("linear", "root sends every rank its block", NULL, scatter_linear),
    ALG("binomial", "binomial tree, subtrees forwarded in one message", NULL, scatter_binomial),
    ALG("shm", "small blocks staged by the root, every rank copies its own out; the root leaves at once",
        gather_staged_ok, scatter_staged),
    ALG("heap", "shared heap: every rank copies its block straight out of the root's buffer", coll_heap_ok,
        scatter_heap),
};
static const struct coll_alg scatterv_algs[] = {
    ALG("linear", "root sends every rank its block", NULL, scatterv_linear),
};
static const struct coll_alg allgather_algs[] = {
    ALG("ring", "P-1 steps passing blocks to the right", NULL, allgather_ring),
    ALG("recursive_doubling", "exchange everything so far with rank ^ 2^k (P a power of two)",
        allgather_recursive_doubling_ok, allgather_recursive_doubling),
    ALG("bruck", "log2(P) rounds to rank - 2^k, then a local rotation", NULL, allgather_bruck),
    TYPED("morton", DESC_MORTON,
        coll_shm_ok, allgather_morton),
    TYPED("morton_numa", DESC_MORTON_NUMA,
        coll_shm_ok, allgather_morton_numa),
    TYPED("shm", "small blocks: each staged once in its sender's heap area, one flag per rank, no barrier",
        allgather_staged_ok, allgather_staged),
};
static const struct coll_alg allgatherv_algs[] = {
    ALG("ring", "P-1 steps passing blocks to the right", NULL, allgatherv_ring),
    ALG("linear", "everything posted at once", NULL, allgatherv_linear),
    TYPED("morton", DESC_MORTON,
        coll_shm_ok, allgatherv_morton),
    TYPED("morton_numa", DESC_MORTON_NUMA,
        coll_shm_ok, allgatherv_morton_numa),
};
static const struct coll_alg alltoall_algs[] = {
    ALG("pairwise", "step s exchanges with rank + s and rank - s", NULL, alltoall_pairwise),
    ALG("bruck", "log2(P) rounds of packed blocks, for small blocks", NULL, alltoall_bruck),
    ALG("linear", "every send and receive posted at once", NULL, alltoall_linear),
    TYPED("row", DESC_ROW, coll_shm_ok, alltoall_row),
    TYPED("column", DESC_COLUMN, coll_shm_ok,
        alltoall_column),
    TYPED("hilbert", DESC_HILBERT, coll_shm_ok,
        alltoall_hilbert),
    TYPED("morton", DESC_MORTON, coll_shm_ok,
        alltoall_morton),
    TYPED("morton_numa", DESC_MORTON_NUMA,
        coll_shm_ok, alltoall_morton_numa),
    TYPED("shm", "small blocks: staged in each sender's heap area, one flag per rank, no barrier",
        alltoall_staged_ok, alltoall_staged),
};
static const struct coll_alg alltoallv_algs[] = {
    ALG("linear", "every send and receive posted at once", NULL, alltoallv_linear),
    ALG("pairwise", "step s exchanges with rank + s and rank - s", NULL, alltoallv_pairwise),
    TYPED("row", DESC_ROW, coll_shm_ok, alltoallv_row),
    TYPED("column", DESC_COLUMN, coll_shm_ok,
        alltoallv_column),
    TYPED("hilbert", DESC_HILBERT, coll_shm_ok,
        alltoallv_hilbert),
    TYPED("morton", DESC_MORTON, coll_shm_ok,
        alltoallv_morton),
    TYPED("morton_numa", DESC_MORTON_NUMA,
        coll_shm_ok, alltoallv_morton_numa),
};
static const struct coll_alg rsb_algs[] = {
    ALG("reduce_scatter", "binomial reduce to rank 0, then binomial scatter", NULL,
        reduce_scatter_block_reduce_scatter),
    ALG("ring", "P-1 ring steps of pass-and-combine", NULL, reduce_scatter_block_ring),
    ALG("shm", "small blocks: inputs staged, rank i combines block i of all", reduce_scatter_block_staged_ok,
        reduce_scatter_block_staged),
    ALG("heap", "shared heap: rank i combines block i of every input straight into its output",
        coll_heap_ok, reduce_scatter_block_heap),
};

static const struct coll_alg neighbor_algs[] = {
    TYPED("naive", "every neighbour's message posted at once, in the caller's datatypes", NULL, neighbor_naive),
};

/* ---- defaults: what the built-in rules pick (index into the table) ---- */
static int by_name(const struct coll_alg *algs, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(algs[i].name, name) == 0)
            return i;
    return 0;
}

static int first_applicable(const struct coll_alg *algs, int n, const struct coll_args *a, int want)
{
    if (algs[want].applicable == NULL || algs[want].applicable(a))
        return want;
    for (int i = 0; i < n; i++)
        if (algs[i].applicable == NULL || algs[i].applicable(a))
            return i;
    return 0;
}

static int choose_barrier(const struct coll_args *a) { return first_applicable(barrier_algs, 2, a, 1); }
/* Measured (hint-bench bcast --algorithm NAME): the ring of shared cells for small messages (P=2
   8 B: 0.13 us against 0.38 heap and 0.39 binomial; P=8: 1.06 against 2.1 and 7.3; the root runs
   up to 16 cells ahead), the root's buffer read in place beyond 4 KiB at P=2 (1 MiB: 35 us
   against 120 through the cells) and beyond 16 KiB when oversubscribed (P=8 1 MiB: 228 against
   371-403). */
static int choose_bcast(const struct coll_args *a)
{
    int shm = by_name(bcast_algs, NALGS(bcast_algs), "shm"), heap = by_name(bcast_algs, NALGS(bcast_algs), "heap");
    if (!coll_shm_ok(a))
        return 0;
    size_t cells_up_to = a->size <= 2 ? 4096 : 16384;
    return a->block <= cells_up_to || !coll_heap_ok(a) ? shm : heap;
}
static int choose_first(const struct coll_args *a)
{
    (void)a;
    return 0;
}
/* Measured (hint-bench allreduce --algorithm NAME, docs/BENCHMARKS.md): staged inputs up to
   1 KiB (P=2 8 B: 0.37 us against 0.68 for recursive doubling; P=8: 7.9 against 10.0), the
   shared-heap reduce-scatter beyond (P=2 1 MiB: 101 us against 278 and 232 for ring; P=8 2 KiB:
   12.8 against 14.7 staged, 1 MiB: 490 against 1140-1985). Without the heap: messages. */
static int choose_allreduce(const struct coll_args *a)
{
    if (allreduce_staged_ok(a) && a->block <= 1024)
        return by_name(allreduce_algs, NALGS(allreduce_algs), "shm");
    if (coll_heap_ok(a))
        return by_name(allreduce_algs, NALGS(allreduce_algs), "heap");
    return a->block <= 16384 || a->count < (size_t)a->size ? 0 : 2;
}
/* Measured (hint-bench OP --algorithm NAME, docs/BENCHMARKS.md): at P=2 the staging areas win
   small blocks (reduce 8 B: 0.30 us against 0.41 binomial; gather 0.26 against 0.37 linear;
   scatter 0.29 against 0.38) and the shared heap the rest (reduce 1 MiB: 35 us against 171;
   gather 82 against 141; scatter 4 KiB-256 KiB: 0.7-5.6 against 0.75-6.2). Oversubscribed (P=8)
   the staged ones cost a wait for every rank per call (6.8 us against 2.0 binomial), so the
   message-based ones keep small messages and the heap takes large ones (reduce 32 KiB: 13 us
   against 18; gather 256 KiB: 71 against 169; scatter 32 KiB: 9.9 against 15.5). */
static int rooted(const struct coll_alg *algs, int n, const struct coll_args *a, size_t heap_from, int small)
{
    int shm = by_name(algs, n, "shm"), heap = by_name(algs, n, "heap");
    if (a->size <= 2 && algs[shm].applicable(a))
        return shm;
    if (algs[heap].applicable(a) && (a->size <= 2 || a->block >= heap_from))
        return heap;
    return small;
}
static int choose_reduce(const struct coll_args *a) { return rooted(reduce_algs, NALGS(reduce_algs), a, 32768, 0); }
static int choose_gather(const struct coll_args *a)
{
    return rooted(gather_algs, NALGS(gather_algs), a, 131072, a->size <= 8 || a->block >= 65536 ? 0 : 1);
}
static int choose_scatter(const struct coll_args *a)
{
    return rooted(scatter_algs, NALGS(scatter_algs), a, 32768, a->size <= 8 || a->block >= 65536 ? 0 : 1);
}
/* Measured (hint-bench allgather --algorithm NAME): Morton over the shared heap wins at every size
   at P=2 (0.60 us at 8 B against 0.65-0.75; 3.5 us at 64 KiB against 12.5-18) and from 8 KiB at
   P=8 (78 us at 64 KiB against 124-333; 1.8 ms at 1 MiB against 2.5-6.7), where its two barriers
   cost more than recursive doubling's messages below that. */
static int choose_allgather(const struct coll_args *a)
{
    /* small blocks: staged once per rank, one flag each (P=2 8 B: 0.35 us against 0.60 for
       morton and 0.67 for recursive doubling; P=8: 4.8 us against 12.2-12.8) */
    if (allgather_staged_ok(a) && (a->block <= 512 || a->size > 2))
        return by_name(allgather_algs, NALGS(allgather_algs), "shm");
    if (coll_shm_ok(a) && (a->size <= 2 || a->block >= 8192))
        return by_name(allgather_algs, NALGS(allgather_algs), "morton");
    size_t total = a->block * (size_t)a->size;
    if (total >= (512u << 10))
        return 0;
    return is_pow2(a->size) ? 1 : 2;
}
/* The v variants: ranks may pass different counts, so the choice may depend on P only. Measured
   with equal counts (hint-bench OP --algorithm NAME): the shared-heap orders win from 512 B up
   (alltoallv column P=2 4 KiB: 0.94 us against 1.7-2.6 linear, 1 MiB: 145 against 146-150; P=8
   4 KiB: 18.6 against 29.2, 1 MiB: 2.8 ms against 3.8; allgatherv morton P=2 4 KiB: 0.94 against
   2.2, 1 MiB: 111 against 128) and lose a little at 8 B (0.81-0.89 against 0.74). */
static int choose_allgatherv(const struct coll_args *a)
{
    if (coll_shm_ok(a))
        return by_name(allgatherv_algs, NALGS(allgatherv_algs), "morton");
    return a->size <= 8 ? 1 : 0;
}
static int choose_alltoallv(const struct coll_args *a)
{
    return coll_shm_ok(a) ? by_name(alltoallv_algs, NALGS(alltoallv_algs), "column") : 0;
}
/* Measured on this machine (docs/BENCHMARKS.md, hint-bench alltoall --algorithm NAME): up to
   1 KiB per block the staged shm algorithm wins at every P (P=2 8 B: 0.40 us against 0.71-0.81
   for the orders and linear; P=8: 5.4 us against 14.6-17.6); beyond, the shared-heap orders beat
   the message-based algorithms (P=2 4 KiB: 0.66 us against 2.0; P=8 1 MiB: 2.6-2.8 ms against
   3.7-4.4 ms), column at small P, Hilbert beyond. */
static int choose_alltoall(const struct coll_args *a)
{
    if (alltoall_staged_ok(a))
        return by_name(alltoall_algs, NALGS(alltoall_algs), "shm");
    if (a->block >= 256 && coll_shm_ok(a))
        return by_name(alltoall_algs, NALGS(alltoall_algs), a->size <= 4 ? "column" : "hilbert");
    if (a->block <= 256 && a->size > 8)
        return 1;
    return a->block * (size_t)a->size <= (1u << 20) ? 2 : 0;
}
/* Measured: staged up to 1 KiB blocks (P=2 8 B: 0.37 us against 0.68 ring; P=8: 4.7 against
   16), the shared heap beyond (P=2 1 MiB: 115 us against 439; P=8: 2.7 ms against 10.2). */
static int choose_rsb(const struct coll_args *a)
{
    if (reduce_scatter_block_staged_ok(a))
        return by_name(rsb_algs, NALGS(rsb_algs), "shm");
    if (coll_heap_ok(a))
        return by_name(rsb_algs, NALGS(rsb_algs), "heap");
    return a->block <= 2048 ? 0 : 1;
}

#define TABLE(id, opname, algs, choose) [id] = {opname, algs, NALGS(algs), choose}
const struct coll_table coll_tables[COLL_NOPS] = {
    TABLE(COLL_BARRIER, "barrier", barrier_algs, choose_barrier),
    TABLE(COLL_BCAST, "bcast", bcast_algs, choose_bcast),
    TABLE(COLL_REDUCE, "reduce", reduce_algs, choose_reduce),
    TABLE(COLL_ALLREDUCE, "allreduce", allreduce_algs, choose_allreduce),
    TABLE(COLL_GATHER, "gather", gather_algs, choose_gather),
    TABLE(COLL_GATHERV, "gatherv", gatherv_algs, choose_first),
    TABLE(COLL_SCATTER, "scatter", scatter_algs, choose_scatter),
    TABLE(COLL_SCATTERV, "scatterv", scatterv_algs, choose_first),
    TABLE(COLL_ALLGATHER, "allgather", allgather_algs, choose_allgather),
    TABLE(COLL_ALLGATHERV, "allgatherv", allgatherv_algs, choose_allgatherv),
    TABLE(COLL_ALLTOALL, "alltoall", alltoall_algs, choose_alltoall),
    TABLE(COLL_ALLTOALLV, "alltoallv", alltoallv_algs, choose_alltoallv),
    TABLE(COLL_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", rsb_algs, choose_rsb),
    TABLE(COLL_NEIGHBOR_ALLGATHER, "neighbor_allgather", neighbor_algs, choose_first),
    TABLE(COLL_NEIGHBOR_ALLGATHERV, "neighbor_allgatherv", neighbor_algs, choose_first),
    TABLE(COLL_NEIGHBOR_ALLTOALL, "neighbor_alltoall", neighbor_algs, choose_first),
    TABLE(COLL_NEIGHBOR_ALLTOALLV, "neighbor_alltoallv", neighbor_algs, choose_first),
};

/* ---- forcing ---- */
static int forced[COLL_NOPS];      /* index + 1; 0 = auto */
static const char *last_ran[COLL_NOPS];
static bool env_read;

static int find_op(const char *op)
{
    for (int i = 0; i < COLL_NOPS; i++)
        if (strcmp(coll_tables[i].op, op) == 0)
            return i;
    return -1;
}

static int find_alg(int op_id, const char *name)
{
    const struct coll_table *t = &coll_tables[op_id];
    for (int i = 0; i < t->nalgs; i++)
        if (strcmp(t->algs[i].name, name) == 0)
            return i;
    return -1;
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
        int alg = find_alg(op, v);
        if (alg < 0)
            RT_ERR("coll", "%s=%s names no %s algorithm (see hint_info); using the defaults", var, v,
                   coll_tables[op].op);
        else
            forced[op] = alg + 1;
    }
}

void coll_select_reset(void)
{
    memset(forced, 0, sizeof forced);
    memset(last_ran, 0, sizeof last_ran);
    env_read = false;
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
    int id = find_op(op);
    if (id < 0)
        return HINT_ERR_ARG;
    if (strcmp(algorithm, "auto") == 0) {
        forced[id] = 0;
        return HINT_SUCCESS;
    }
    int alg = find_alg(id, algorithm);
    if (alg < 0)
        return HINT_ERR_ARG;
    forced[id] = alg + 1;
    return HINT_SUCCESS;
}

int hint_coll_last(const char *op, const char **algorithm)
{
    if (op == NULL || algorithm == NULL)
        return HINT_ERR_ARG;
    int id = find_op(op);
    if (id < 0)
        return HINT_ERR_ARG;
    *algorithm = last_ran[id];
    return HINT_SUCCESS;
}

void coll_record(int op_id, const char *name) { last_ran[op_id] = name; }

static int fallback_mode(void)
{
    const char *v = rt_cfg_str("HINT_COLL_FALLBACK");
    return strcmp(v, "silent") == 0 ? 2 : strcmp(v, "warn") == 0 ? 1 : 0;
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

/* Selection: forced (hint_coll_set, HINT_<OP>) > tuning file > online autotuning > defaults. */
static int pick_and_run(struct coll_args *a)
{
    const struct coll_table *t = &coll_tables[a->op_id];
    if (!env_read)
        read_env();
    int pick = forced[a->op_id] - 1, copy = -1;
    if (pick >= 0) {
        const struct coll_alg *alg = &t->algs[pick];
        if (alg->applicable && !alg->applicable(a)) {
            int mode = fallback_mode();
            if (mode == 0)
                return HINT_ERR_UNSUPPORTED;
            if (mode == 1)
                RT_ERR("coll", "%s algorithm %s cannot run here (P=%d); running the default instead", t->op,
                       alg->name, a->size);
            pick = -1;
        }
    }
    if (pick < 0 && tune_lookup(a, &pick, &copy)) {
        const struct coll_alg *alg = &t->algs[pick];
        if (alg->applicable && !alg->applicable(a))
            pick = -1; /* the file's choice cannot run here (e.g. no collective slot) */
        else
            a->copy = copy;
    }
    int tuning = pick < 0 ? autotune_pick(a) : -1;
    if (tuning >= 0)
        pick = tuning;
    if (pick < 0)
        pick = t->choose(a);
    last_ran[a->op_id] = t->algs[pick].name;
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
                     &last_ran[a->op_id]);
    int st = pick_and_run(a);
    trace_coll_end();
    return st;
}

const char *coll_default_name(int op_id, int P, size_t bytes)
{
    struct coll_args a = {.op_id = op_id, .size = P, .block = bytes, .count = bytes / 8};
    const struct coll_table *t = &coll_tables[op_id];
    return t->algs[t->choose(&a)].name;
}
