/*
 * collectives/tune.c — the tuning file and online autotuning (see tune.h).
 *
 * Autotuning follows the HINT paper: for each (P, bytes per block, buffer pair) every candidate
 * (alltoall: the copy orders; allgather: Morton and the message-based algorithms)
 * runs once as warm-up and then three times, back to back, and the fastest is kept. Each rank
 * times its own calls; the decision takes the slowest rank's time per candidate (one small
 * allreduce when the trials end), so every rank keeps the same algorithm.
 */
#include <errno.h>
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
}

bool tune_lookup(const struct coll_args *a, int *alg, int *copy)
{
    if (!tf.loaded) {
        const char *path = rt_cfg_str("HINT_TUNING_FILE");
        tf.loaded = true;
        char msg[512];
        if (path && tune_load_file(path, msg, sizeof msg) != HINT_SUCCESS)
            RT_ERR("coll", "tuning file ignored: %s", msg);
    }
    *alg = rules_pick(&tf.rules, a, copy);
    return *alg >= 0;
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
        return 0; /* no slot, or members on several nodes: the trials compare the copy orders */
    int n = 0;
    for (size_t i = 0; i < nn && n < 8; i++) {
        int k = coll_alg_by_name(a->op_id, names[i]);
        if (k >= 0 && coll_alg_usable(k, a)) /* never a node-only one on a group spanning nodes */
            out[n++] = k;
    }
    return n;
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
