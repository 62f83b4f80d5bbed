/*
 * collectives/tune.c — the tuning file and online autotuning (see tune.h).
 *
 * Autotuning follows the HINT paper: for each key every candidate runs once as warm-up and then
 * three times, back to back, and the fastest is kept. The key is what every rank of the call
 * computes alike: the operation and group (the state lives on the group), the bytes per block
 * (of the whole message for bcast, reduce and allreduce), allgatherv's receive counts (every rank
 * passes the same); alltoallv's counts differ per rank, so it has one trial per group. Never
 * buffer addresses: ranks whose buffers differ, or move between calls, keep one trial.
 * Candidates on one node: alltoall(v) the four copy orders (the HINT paper has three, row, column
 * and Hilbert; Morton is the Morton paper's), allgather(v) Morton against the message-based
 * algorithms. On a group spanning nodes: for each operation with a hierarchical algorithm
 * (barrier, bcast, reduce, allreduce, allgather(v), alltoall(v)), the hierarchical ones against
 * the message-based ones. Before each trial call the ranks
 * agree (one small allreduce) on the key, the trial step and the candidate list, and all run the
 * same candidate; a rank that disagrees sends every rank to the default selection for that
 * call. Each rank times its own calls; the decision takes the slowest rank's time per candidate
 * (one more small allreduce when the trials end), so every rank keeps the same algorithm.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/copy.h"
#include "collectives/rules.h"
#include "collectives/tune.h"
#include "datatype/datatype.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"

/* ---- the tuning file: rules in the format of rules.h, tried before the built-in ones ---- */

static struct {
    bool loaded;           /* tried (even if it failed) */
    struct coll_rules rules;
} tf;

int tune_load_file(const char *path, char *msg, size_t len)
{
    tf.loaded = true;
    tune_state = -1;
    rules_free(&tf.rules);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        snprintf(msg, len, "%s: %s", path, strerror(errno));
        return HINT_ERR_ARG;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    int c;
    while (mem && (c = fgetc(f)) != EOF)
        fputc(c, mem);
    fclose(f);
    if (mem == NULL || fclose(mem) != 0) {
        free(text);
        snprintf(msg, len, "%s: out of memory", path);
        return HINT_ERR_NOMEM;
    }
    int st = rules_parse(text, path, &tf.rules, msg, len);
    free(text);
    return st;
}

void tune_unload(void)
{
    rules_free(&tf.rules);
    tf.loaded = false;
    tune_state = -1;
}

static void tune_file_load(void)
{
    if (!tf.loaded) {
        const char *path = rt_cfg_str("HINT_TUNING_FILE");
        tf.loaded = true;
        char msg[512];
        if (path && tune_load_file(path, msg, sizeof msg) != HINT_SUCCESS)
            RT_ERR("coll", "tuning file ignored: %s", msg);
    }
}

static bool autotune_on(void);
int tune_state = -1;
int tune_state_read(void)
{
    tune_file_load();
    bool rules = false;
    for (int op = 0; op < COLL_NOPS; op++)
        rules = rules || tf.rules.n[op] > 0;
    tune_state = rules || autotune_on();
    return tune_state;
}

bool tune_lookup(const struct coll_args *a, int *alg, int *copy)
{
    tune_file_load();
    *alg = rules_pick(&tf.rules, a, copy);
    return *alg >= 0;
}

/* ---- online autotuning ---- */

#define AT_REPS 3                 /* timed runs per candidate, after one warm-up */
#define AT_SLOTS 32
#define AT_MAXCAND 8

struct at_state {
    int op;
    uint64_t key;                 /* at_key(): the same on every rank of the call */
    int ncand, cand[AT_MAXCAND];
    int call;                     /* trial calls made so far */
    bool skip;                    /* this call's agreement failed: it ran the defaults */
    double best[AT_MAXCAND];      /* fastest timed run per candidate, this rank */
    int chosen;                   /* -1 while trying */
};

struct at_cache {
    struct at_state s[AT_SLOTS];
    int next;
};

static bool autotune_on(void)
{
    static int on = -1;
    if (on < 0)
        on = rt_cfg_long("HINT_AUTOTUNE") == 1;
    return on;
}

static void at_free(void *p) { free(p); }

static uint64_t mix(uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ull; }

/* The key: operation, ranks, bytes per block (of the whole message for bcast, reduce and
   allreduce); allgatherv's receive counts (the same on every rank); never addresses, nor
   alltoallv's counts (each rank has its own). */
static uint64_t at_key(const struct coll_args *a)
{
    uint64_t h = mix(mix(0xcbf29ce484222325ull, (uint64_t)a->op_id), (uint64_t)a->size);
    if (a->op_id == COLL_ALLGATHERV)
        for (int p = 0; p < a->size; p++)
            h = mix(h, a->rcounts[p]);
    else if (a->op_id != COLL_ALLTOALLV && a->op_id != COLL_BARRIER)
        h = mix(h, a->block); /* bytes per block, or of the whole message (bcast, reduce, allreduce) */
    return h;
}

/* The algorithms of names (NULL-terminated) that can run this call, as table indices. */
static int usable_of(const struct coll_args *a, const char *const *names, int *out)
{
    int n = 0;
    for (; *names && n < AT_MAXCAND; names++) {
        int k = coll_alg_by_name(a->op_id, *names);
        if (k >= 0 && coll_alg_usable(k, a)) /* never a node-only one on a group spanning nodes */
            out[n++] = k;
    }
    return n;
}

/* Candidates on one node: for alltoall(v) the shared-heap orders; for allgather(v) the Morton
   algorithms against the message-based ones. Every rank builds the same list (the names in the
   table's order; the ranks check before each trial call that they have the same list). */
static int candidates_on_node(const struct coll_args *a, int *out)
{
    static const char *const a2a[] = {"row", "column", "hilbert", "morton", NULL};
    static const char *const ag[] = {"ring", "recursive_doubling", "bruck", "morton", "morton_numa", NULL};
    static const char *const agv[] = {"ring", "linear", "morton", "morton_numa", NULL};
    const char *const *names;
    switch (a->op_id) {
    case COLL_ALLTOALL:
    case COLL_ALLTOALLV: names = a2a; break;
    case COLL_ALLGATHER: names = ag; break;
    case COLL_ALLGATHERV: names = agv; break;
    default: return 0;
    }
    return usable_of(a, names, out);
}

/* Candidates on a group spanning nodes (issue 16): the hierarchical algorithms against the
   message-based ones, for every operation that has a hierarchical one. */
static int candidates_across_nodes(const struct coll_args *a, int *out)
{
    static const char *const barrier[] = {"hier", "dissemination", NULL};
    static const char *const tree[] = {"hier", "binomial", NULL}; /* bcast, reduce */
    static const char *const allreduce[] = {"hier", "recursive_doubling", "ring", "reduce_bcast", NULL};
    static const char *const allgather[] = {"hier", "recursive_doubling", "bruck", "ring", NULL};
    static const char *const allgatherv[] = {"hier", "ring", "linear", NULL};
    static const char *const alltoall[] = {"hier_hint", "hier_hint_overlap", "hier_morton", "linear", "pairwise",
                                           "bruck", NULL};
    static const char *const alltoallv[] = {"hier_hint", "hier_hint_overlap", "hier_morton", "linear", "pairwise",
                                            NULL};
    switch (a->op_id) {
    case COLL_BARRIER: return usable_of(a, barrier, out);
    case COLL_BCAST:
    case COLL_REDUCE: return usable_of(a, tree, out);
    case COLL_ALLREDUCE: return usable_of(a, allreduce, out);
    case COLL_ALLGATHER: return usable_of(a, allgather, out);
    case COLL_ALLGATHERV: return usable_of(a, allgatherv, out);
    case COLL_ALLTOALL: return usable_of(a, alltoall, out);
    case COLL_ALLTOALLV: return usable_of(a, alltoallv, out);
    default: return 0;
    }
}

static int candidates(const struct coll_args *a, int *out)
{
    if (coll_shm_ok(a))
        return candidates_on_node(a, out);
    int nodes, ppn;
    coll_shape(a, &nodes, &ppn);
    return nodes > 1 ? candidates_across_nodes(a, out) : 0; /* one node without a slot: nothing to try */
}

static struct at_state *state_for(struct coll_args *a)
{
    struct at_cache *c = coll_group_of(a->g)->tune.p;
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        coll_group_of(a->g)->tune = (struct coll_owned){c, at_free};
    }
    uint64_t key = at_key(a);
    for (int i = 0; i < AT_SLOTS; i++) {
        struct at_state *s = &c->s[i];
        if (s->ncand && s->op == a->op_id && s->key == key)
            return s;
    }
    int ncand = candidates(a, (int[AT_MAXCAND]){0});
    if (ncand == 0)
        return NULL; /* nothing to try: no slot taken (every rank sees the same, in the same calls) */
    struct at_state *s = &c->s[c->next++ % AT_SLOTS];
    memset(s, 0, sizeof *s);
    s->op = a->op_id;
    s->key = key;
    s->ncand = candidates(a, s->cand);
    s->chosen = -1;
    return s;
}

/* A small allreduce on the group, tagged as the call it belongs to (the p2p order between two
   ranks keeps it apart from the call's own messages). */
static int at_allreduce(struct coll_args *a, const void *in, void *out, size_t n, int basic, int esize)
{
    struct coll_args r = *a;
    r.op_id = COLL_ALLREDUCE;
    r.sbuf = in;
    r.rbuf = out;
    r.count = n;
    r.esize = (size_t)esize;
    r.block = n * (size_t)esize;
    r.basic = basic;
    r.op = HINT_MAX;
    r.scounts = r.sdispls = r.rcounts = r.rdispls = NULL;
    r.sl = r.rl = (struct coll_layout){0};
    return allreduce_recursive_doubling(&r);
}

/* Before a trial call: do all ranks have this key, trial step and candidate list? (The maxima
   of each value and of its complement give the minimum too.) */
static bool agree(struct coll_args *a, const struct at_state *s)
{
    uint64_t cands = 0;
    for (int i = 0; i < s->ncand; i++)
        cands = mix(cands, (uint64_t)s->cand[i]);
    uint64_t mine[6] = {s->key, ~s->key, (uint64_t)s->call, ~(uint64_t)s->call, cands, ~cands}, all[6];
    if (at_allreduce(a, mine, all, 6, DT_UINT64, sizeof(uint64_t)) != HINT_SUCCESS)
        return false;
    for (int i = 0; i < 6; i += 2)
        if (all[i] != ~all[i + 1])
            return false;
    return true;
}

int autotune_pick(struct coll_args *a)
{
    if (!autotune_on())
        return -1;
    struct at_state *s = state_for(a);
    if (s == NULL)
        return -1;
    if (s->chosen >= 0)
        return s->cand[s->chosen];
    s->skip = !agree(a, s);
    if (s->skip) {
        static bool said;
        if (!said)
            RT_ERR("coll", "autotuning: the ranks of a %s call disagree on its key, trial step or candidates; "
                   "this call runs the default selection", coll_tables[a->op_id].op);
        said = true;
        return -1;
    }
    return s->cand[s->call / (AT_REPS + 1)];
}

void autotune_record(struct coll_args *a, int alg, double seconds)
{
    (void)alg;
    if (!autotune_on())
        return;
    struct at_state *s = state_for(a);
    if (s == NULL || s->chosen >= 0 || s->skip)
        return;
    int k = s->call / (AT_REPS + 1), rep = s->call % (AT_REPS + 1);
    if (rep > 0 && (s->best[k] == 0 || seconds < s->best[k]))
        s->best[k] = seconds; /* rep 0 is the warm-up */
    if (++s->call < s->ncand * (AT_REPS + 1))
        return;
    /* every rank has the same times only up to noise: agree on the slowest rank's view */
    double worst[AT_MAXCAND];
    if (at_allreduce(a, s->best, worst, (size_t)s->ncand, DT_DOUBLE, sizeof(double)) != HINT_SUCCESS)
        memcpy(worst, s->best, sizeof worst);
    int best = 0;
    for (int i = 1; i < s->ncand; i++)
        if (worst[i] < worst[best])
            best = i;
    s->chosen = best;
}
