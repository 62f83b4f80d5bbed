/*
 * collectives/tune.c — the tuning file and online autotuning (see tune.h).
 *
 * Autotuning follows the HINT paper: for each (P, bytes per block, buffer pair) every candidate
 * (alltoall: the copy orders; allgather: Morton and the message-based algorithms)
 * runs once as warm-up and then three times, back to back, and the fastest is kept. Each rank
 * times its own calls; the decision takes the slowest rank's time per candidate (one small
 * allreduce when the trials end), so every rank keeps the same algorithm.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/copy.h"
#include "collectives/tune.h"
#include "datatype/datatype.h"
#include "runtime/p2p.h"
#include "runtime/runtime.h"

/* ---- the tuning file ---- */

#define TUNE_MAX_RULES 32
#define TUNE_MAX_P 64

struct rule {
    size_t max_bytes;      /* SIZE_MAX: any */
    int alg;
    int copy;              /* -1: default */
};

struct p_entry {
    int P;
    int nrules;
    struct rule rules[TUNE_MAX_RULES];
};

static struct {
    bool loaded;           /* tried (even if it failed) */
    int np[COLL_NOPS];
    struct p_entry entries[COLL_NOPS][TUNE_MAX_P];
} tf;

static int op_index(const char *name)
{
    for (int i = 0; i < COLL_NOPS; i++)
        if (!strcmp(coll_tables[i].op, name))
            return i;
    return -1;
}

static int alg_index(int op, const char *name)
{
    for (int i = 0; i < coll_tables[op].nalgs; i++)
        if (!strcmp(coll_tables[op].algs[i].name, name))
            return i;
    return -1;
}

static int copy_index(const char *name)
{
    return !strcmp(name, "temporal") ? COPY_TEMPORAL : !strcmp(name, "nt") ? COPY_NT
           : !strcmp(name, "hybrid") ? COPY_HYBRID : -2;
}

#define FAIL(...)                                                                                \
    do {                                                                                         \
        snprintf(msg, len, __VA_ARGS__);                                                         \
        goto bad;                                                                                \
    } while (0)

static int parse_rule(json_t *r, int op, const char *where, struct rule *out, char *msg, size_t len)
{
    if (!json_is_object(r))
        FAIL("%s: a rule must be an object", where);
    json_t *alg = json_object_get(r, "algorithm"), *mb = json_object_get(r, "max_bytes"),
           *cp = json_object_get(r, "copy");
    if (!json_is_string(alg))
        FAIL("%s.algorithm: missing or not a string", where);
    out->alg = alg_index(op, json_string_value(alg));
    if (out->alg < 0)
        FAIL("%s.algorithm: '%s' is not a %s algorithm (see hint_info --algorithms)", where, json_string_value(alg),
             coll_tables[op].op);
    out->max_bytes = SIZE_MAX;
    if (mb) {
        if (!json_is_integer(mb) || json_integer_value(mb) < 0)
            FAIL("%s.max_bytes: must be a non-negative integer", where);
        out->max_bytes = (size_t)json_integer_value(mb);
    }
    out->copy = -1;
    if (cp) {
        if (!json_is_string(cp) || (out->copy = copy_index(json_string_value(cp))) == -2)
            FAIL("%s.copy: must be \"temporal\", \"nt\" or \"hybrid\"", where);
    }
    return HINT_SUCCESS;
bad:
    return HINT_ERR_ARG;
}

int tune_load_file(const char *path, char *msg, size_t len)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    char where[128];
    memset(&tf, 0, sizeof tf);
    tf.loaded = true;
    if (root == NULL)
        FAIL("%s:%d:%d: %s", path, err.line, err.column, err.text);
    if (!json_is_object(root))
        FAIL("%s: the top level must be an object", path);
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || json_integer_value(ver) != 1)
        FAIL("%s: version: must be 1", path);
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        if (!strcmp(key, "version") || !strncmp(key, "_", 1)) /* "_comment" & co. are free */
            continue;
        int op = op_index(key);
        if (op < 0)
            FAIL("%s: %s: not a collective operation", path, key);
        if (!json_is_array(val))
            FAIL("%s: %s: must be an array of {P, rules}", path, key);
        size_t i;
        json_t *e;
        json_array_foreach(val, i, e)
        {
            snprintf(where, sizeof where, "%s: %s[%zu]", path, key, i);
            json_t *P = json_object_get(e, "P"), *rules = json_object_get(e, "rules");
            if (!json_is_integer(P) || json_integer_value(P) < 1)
                FAIL("%s.P: must be a positive integer", where);
            if (!json_is_array(rules) || json_array_size(rules) == 0 || json_array_size(rules) > TUNE_MAX_RULES)
                FAIL("%s.rules: must be an array of 1 to %d rules", where, TUNE_MAX_RULES);
            if (tf.np[op] == TUNE_MAX_P)
                FAIL("%s: more than %d rank counts", where, TUNE_MAX_P);
            struct p_entry *pe = &tf.entries[op][tf.np[op]++];
            pe->P = (int)json_integer_value(P);
            size_t k;
            json_t *r;
            json_array_foreach(rules, k, r)
            {
                char rw[160];
                snprintf(rw, sizeof rw, "%s.rules[%zu]", where, k);
                if (parse_rule(r, op, rw, &pe->rules[pe->nrules++], msg, len) != HINT_SUCCESS)
                    goto bad;
            }
        }
    }
    json_decref(root);
    return HINT_SUCCESS;
bad:
    json_decref(root);
    memset(tf.np, 0, sizeof tf.np); /* a bad file is ignored as a whole */
    return HINT_ERR_ARG;
}

void tune_unload(void) { memset(&tf, 0, sizeof tf); }

bool tune_lookup(const struct coll_args *a, int *alg, int *copy)
{
    if (!tf.loaded) {
        const char *path = rt_cfg_str("HINT_TUNING_FILE");
        tf.loaded = true;
        char msg[512];
        if (path && tune_load_file(path, msg, sizeof msg) != HINT_SUCCESS)
            RT_ERR("coll", "tuning file ignored: %s", msg);
    }
    for (int i = 0; i < tf.np[a->op_id]; i++) {
        const struct p_entry *pe = &tf.entries[a->op_id][i];
        if (pe->P != a->size)
            continue;
        for (int k = 0; k < pe->nrules; k++)
            if (a->block <= pe->rules[k].max_bytes) {
                *alg = pe->rules[k].alg;
                *copy = pe->rules[k].copy;
                return true;
            }
    }
    return false;
}

/* ---- online autotuning ---- */

#define AT_REPS 3                 /* timed runs per candidate, after one warm-up */
#define AT_SLOTS 32

struct at_state {
    int op;
    size_t block;
    const void *sbuf, *rbuf;
    int ncand, cand[8];
    int call;                     /* calls made so far in the trial */
    double best[8];               /* fastest timed run per candidate, this rank */
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

/* Candidates: for alltoall the shared-heap orders (the HINT paper's set); for allgather the
   Morton algorithms and the message-based ones they compete with. Only algorithms that apply to
   this call, in the table's order, so every rank tries the same list. */
static int candidates(const struct coll_args *a, int *out)
{
    static const char *const a2a[] = {"row", "column", "hilbert", "morton"};
    static const char *const agv[] = {"ring", "recursive_doubling", "bruck", "morton", "morton_numa"};
    const char *const *names;
    size_t nn;
    if (a->op_id == COLL_ALLTOALL) {
        names = a2a;
        nn = sizeof a2a / sizeof a2a[0];
    } else if (a->op_id == COLL_ALLGATHER) {
        names = agv;
        nn = sizeof agv / sizeof agv[0];
    } else {
        return 0;
    }
    if (!coll_shm_ok(a))
        return 0;
    int n = 0;
    for (size_t i = 0; i < nn && n < 8; i++) {
        int k = alg_index(a->op_id, names[i]);
        const struct coll_alg *alg = k >= 0 ? &coll_tables[a->op_id].algs[k] : NULL;
        if (alg && (alg->applicable == NULL || alg->applicable(a)))
            out[n++] = k;
    }
    return n;
}

static struct at_state *state_for(struct coll_args *a)
{
    struct at_cache *c = a->g->cache[GRP_CACHE_TUNE];
    if (c == NULL) {
        c = calloc(1, sizeof *c);
        if (c == NULL)
            return NULL;
        a->g->cache[GRP_CACHE_TUNE] = c;
        a->g->cache_free[GRP_CACHE_TUNE] = at_free;
    }
    for (int i = 0; i < AT_SLOTS; i++) {
        struct at_state *s = &c->s[i];
        if (s->ncand && s->op == a->op_id && s->block == a->block && s->sbuf == a->sbuf && s->rbuf == a->rbuf)
            return s;
    }
    struct at_state *s = &c->s[c->next++ % AT_SLOTS];
    memset(s, 0, sizeof *s);
    s->op = a->op_id;
    s->block = a->block;
    s->sbuf = a->sbuf;
    s->rbuf = a->rbuf;
    s->ncand = candidates(a, s->cand);
    s->chosen = -1;
    return s->ncand ? s : NULL;
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
    return s->cand[s->call / (AT_REPS + 1)];
}

void autotune_record(struct coll_args *a, int alg, double seconds)
{
    (void)alg;
    if (!autotune_on())
        return;
    struct at_state *s = state_for(a);
    if (s == NULL || s->chosen >= 0)
        return;
    int k = s->call / (AT_REPS + 1), rep = s->call % (AT_REPS + 1);
    if (rep > 0 && (s->best[k] == 0 || seconds < s->best[k]))
        s->best[k] = seconds; /* rep 0 is the warm-up */
    if (++s->call < s->ncand * (AT_REPS + 1))
        return;
    /* every rank has the same times only up to noise: agree on the slowest rank's view */
    double worst[8];
    struct coll_args r = *a;
    r.op_id = COLL_ALLREDUCE;
    r.sbuf = (const char *)s->best;
    r.rbuf = (char *)worst;
    r.count = (size_t)s->ncand;
    r.esize = sizeof(double);
    r.block = (size_t)s->ncand * sizeof(double);
    r.basic = DT_DOUBLE;
    r.op = HINT_MAX;
    if (allreduce_recursive_doubling(&r) != HINT_SUCCESS)
        memcpy(worst, s->best, sizeof worst);
    int best = 0;
    for (int i = 1; i < s->ncand; i++)
        if (worst[i] < worst[best])
            best = i;
    s->chosen = best;
}
