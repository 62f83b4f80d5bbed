/*
 * collectives/nbc.c — the nonblocking collectives' schedules for barrier, bcast and the
 * reductions, and the one entry from api.c (nbc_start). Message-based algorithms only, each the
 * schedule form of its blocking namesake:
 *   barrier               dissemination: ceil(log2 P) rounds of one zero-byte send and receive.
 *   bcast                 binomial tree from the root: receive from the parent, then send to
 *                         every child at once. ceil(log2 P) * (alpha + n beta).
 *   reduce                binomial tree towards rank 0, then rank 0 to the root: operands
 *                         combined in rank order, so the result holds for an op that does not
 *                         commute. (ceil(log2 P) [+1]) * (alpha + n beta + n gamma).
 *   allreduce             recursive doubling (non-powers of two fold the first 2 * rem ranks in
 *                         pairs, as MPICH), in rank order. (log2 P [+2]) * (alpha + n beta + n gamma).
 *                         From NBC_RING_BYTES on, at P > 2 and for an op that commutes: a ring,
 *                         reduce-scatter then allgather of P chunks, 2 (P - 1) rounds moving
 *                         2 (P - 1) / P * n in all: 2 (P - 1) alpha + 2 n beta + n gamma.
 *   reduce_scatter_block  every block sent straight to its owner, then P - 1 reductions in rank
 *                         order. (P - 1) * (alpha + n beta) in one round, (P - 1) n gamma.
 * Derived datatypes: the data moves in the caller's types where it only moves; a reduction packs
 * its input to dense scratch at the call and unpacks its result at the end.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/algs.h"
#include "collectives/nbc_heap.h"
#include "collectives/sched.h"
#include "runtime/runtime.h"

/* Bytes from which iallreduce runs the ring (the blocking calls' tuning does not apply here). */
#define NBC_RING_BYTES ((size_t)32768)

void nbc_barrier(struct sched *s, const struct coll_args *a)
{
    int P = a->size, r = a->rank;
    for (int k = 1; k < P; k <<= 1) {
        sched_send(s, NULL, 0, NULL, (r + k) % P);
        sched_recv(s, NULL, 0, NULL, (r - k + P) % P);
        sched_round(s);
    }
}

void nbc_bcast(struct sched *s, const struct coll_args *a)
{
    int P = a->size, v = (a->rank - a->root + P) % P, mask = 1;
    for (; mask < P; mask <<= 1) {
        if (v & mask) {
            nbc_recv(s, a->rbuf, a->block, &a->rl, (v - mask + a->root) % P);
            sched_round(s);
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < P)
            nbc_send(s, a->rbuf, a->block, &a->rl, (v + mask + a->root) % P);
}

/* acc = acc op tmp, acc holding the lower ranks' operands (tmp is scratch). */
static void reduce_left(struct sched *s, const struct coll_args *a, char *acc, char *tmp)
{
    sched_reduce_after(s, tmp, acc, a->count, a->block);
}

/* The input, dense: the send buffer itself, or packed from its layout into `into`. */
static const char *dense_input(struct sched *s, const struct coll_args *a, char *into)
{
    static const struct coll_layout bytes = {0};
    nbc_copy(s, a->sbuf, &a->sl, into, &bytes, a->block);
    return into;
}

void nbc_reduce(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank;
    bool root = r == a->root, dense_out = root && !a->rl.type && a->root == 0;
    char *acc = dense_out ? a->rbuf : sched_scratch(s, a->block);
    char *tmp = sched_scratch(s, a->block);
    dense_input(s, a, acc);
    for (int mask = 1; mask < P; mask <<= 1) {
        if (r & mask) {
            sched_send(s, acc, a->block, NULL, r - mask);
            sched_round(s);
            break;
        }
        if (r + mask < P) {
            sched_recv(s, tmp, a->block, NULL, r + mask);
            sched_round(s);
            reduce_left(s, a, acc, tmp);
        }
    }
    if (a->root == 0) {
        if (root)
            nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
        return;
    }
    if (r == 0)
        sched_send(s, acc, a->block, NULL, a->root);
    else if (root)
        nbc_recv(s, a->rbuf, a->block, &a->rl, 0);
}

/* Recursive doubling's rank of real rank r, -1 for the even ranks folded into their neighbour. */
static int fold_rank(int r, int rem) { return r < 2 * rem ? (r % 2 ? r / 2 : -1) : r - rem; }
static int real_rank(int nr, int rem) { return nr < rem ? nr * 2 + 1 : nr + rem; }

/* Chunk i of a ring over `count` elements: its first element and its length. */
static void ring_chunk(const struct coll_args *a, int i, size_t *first, size_t *n)
{
    size_t P = (size_t)a->size, q = a->count / P, r = a->count % P, k = (size_t)i;
    *first = k * q + (k < r ? k : r);
    *n = q + (k < r);
}

/* The ring: in step k rank r sends chunk r - k on to r + 1 and adds what r - 1 sends into chunk
   r - k - 1, so after P - 1 steps it holds chunk r + 1 whole; then P - 1 steps pass the whole
   chunks round. Each chunk's operands are combined in ring order, hence only for ops that commute. */
static void ring_steps(struct sched *s, const struct coll_args *a, char *acc)
{
    int P = a->size, r = a->rank, right = (r + 1) % P, left = (r - 1 + P) % P;
    size_t first, n, big = a->count / (size_t)P + 1;
    char *tmp = sched_scratch(s, big * a->esize);
    for (int k = 0; k < P - 1; k++) {
        ring_chunk(a, (r - k + P) % P, &first, &n);
        sched_send(s, acc + first * a->esize, n * a->esize, NULL, right);
        ring_chunk(a, (r - k - 1 + 2 * P) % P, &first, &n);
        sched_recv(s, tmp, n * a->esize, NULL, left);
        sched_round(s);
        sched_reduce(s, tmp, acc + first * a->esize, n);
    }
    for (int k = 0; k < P - 1; k++) {
        ring_chunk(a, (r + 1 - k + P) % P, &first, &n);
        sched_send(s, acc + first * a->esize, n * a->esize, NULL, right);
        ring_chunk(a, (r - k + P) % P, &first, &n);
        sched_recv(s, acc + first * a->esize, n * a->esize, NULL, left);
        sched_round(s);
    }
}

void nbc_allreduce(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank, pof2 = 1;
    while (pof2 * 2 <= P)
        pof2 *= 2;
    int rem = P - pof2, nr = fold_rank(r, rem);
    char *acc = a->rl.type ? sched_scratch(s, a->block) : a->rbuf;
    dense_input(s, a, acc);
    char *tmp = sched_scratch(s, a->block);
    if (r < 2 * rem) {
        if (nr < 0) {
            sched_send(s, acc, a->block, NULL, r + 1);
        } else {
            sched_recv(s, tmp, a->block, NULL, r - 1);
            sched_round(s);
            sched_reduce(s, tmp, acc, a->count); /* r - 1's operand first */
        }
        sched_round(s);
    }
    for (int mask = 1; nr >= 0 && mask < pof2; mask <<= 1) {
        int np = nr ^ mask, peer = real_rank(np, rem);
        sched_send(s, acc, a->block, NULL, peer);
        sched_recv(s, tmp, a->block, NULL, peer);
        sched_round(s);
        if (np < nr)
            sched_reduce(s, tmp, acc, a->count);
        else
            reduce_left(s, a, acc, tmp);
    }
    if (r < 2 * rem) {
        if (nr >= 0)
            sched_send(s, acc, a->block, NULL, r - 1);
        else
            sched_recv(s, acc, a->block, NULL, r + 1);
        sched_round(s);
    }
    if (a->rl.type)
        nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
}

void nbc_allreduce_ring(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    char *acc = a->rl.type ? sched_scratch(s, a->block) : a->rbuf;
    dense_input(s, a, acc);
    ring_steps(s, a, acc);
    if (a->rl.type)
        nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, a->block);
}

void nbc_reduce_scatter_block(struct sched *s, const struct coll_args *a)
{
    static const struct coll_layout bytes = {0};
    int P = a->size, r = a->rank;
    size_t n = a->block;
    const char *in = a->sl.type ? sched_scratch(s, n * (size_t)P) : a->sbuf;
    char *got = sched_scratch(s, n * (size_t)P);
    char *acc = a->rl.type ? sched_scratch(s, n) : a->rbuf;
    if (a->sl.type)
        nbc_copy(s, a->sbuf, &a->sl, (char *)in, &bytes, n * (size_t)P);
    for (int i = 1; i < P; i++)
        sched_recv(s, got + (size_t)((r - i + P) % P) * n, n, NULL, (r - i + P) % P);
    for (int i = 1; i < P; i++)
        sched_send(s, in + (size_t)((r + i) % P) * n, n, NULL, (r + i) % P);
    sched_round(s);
    /* operand of rank p: what p sent, or this rank's own block */
#define OPERAND(p) ((p) == r ? in + (size_t)r * n : got + (size_t)(p) * n)
    sched_copy(s, OPERAND(P - 1), n, NULL, acc, n, NULL);
    for (int p = P - 2; p >= 0; p--)
        sched_reduce(s, OPERAND(p), acc, a->count);
#undef OPERAND
    if (a->rl.type)
        nbc_copy(s, acc, &bytes, a->rbuf, &a->rl, n);
}

typedef void (*nbc_builder)(struct sched *, const struct coll_args *);

/* Each operation's nonblocking algorithms, in nbc_algs order: its message schedule(s), then
   "heap" where a single-copy schedule exists (nbc_heap.c). The defaults: heap when the group
   can run it, else the message schedule (iallreduce: ring from NBC_RING_BYTES when it can). */
enum { NBC_MSG, NBC_MSG2, NBC_HEAP, NBC_NALGS };
struct nbc_op {
    nbc_builder build;
    const char *names[NBC_NALGS]; /* NULL: the operation has no such algorithm */
};

static const struct nbc_op nbc_ops[COLL_NOPS] = {
    [COLL_BARRIER] = {nbc_barrier, {"dissemination"}},
    [COLL_BCAST] = {nbc_bcast, {"binomial", NULL, "heap"}},
    [COLL_REDUCE] = {nbc_reduce, {"binomial", NULL, "heap"}},
    [COLL_ALLREDUCE] = {nbc_allreduce, {"recursive_doubling", "ring", "heap"}},
    [COLL_REDUCE_SCATTER_BLOCK] = {nbc_reduce_scatter_block, {"linear", NULL, "heap"}},
    [COLL_GATHER] = {nbc_gather, {"linear", NULL, "heap"}},
    [COLL_GATHERV] = {nbc_gather, {"linear", NULL, "heap"}},
    [COLL_SCATTER] = {nbc_scatter, {"linear", NULL, "heap"}},
    [COLL_SCATTERV] = {nbc_scatter, {"linear", NULL, "heap"}},
    [COLL_ALLGATHER] = {nbc_allgather, {"linear", NULL, "heap"}},
    [COLL_ALLGATHERV] = {nbc_allgather, {"linear", NULL, "heap"}},
    [COLL_ALLTOALL] = {nbc_alltoall, {"linear", NULL, "heap"}},
    [COLL_ALLTOALLV] = {nbc_alltoall, {"linear", NULL, "heap"}},
    [COLL_NEIGHBOR_ALLGATHER] = {nbc_neighbor, {"linear"}},
    [COLL_NEIGHBOR_ALLGATHERV] = {nbc_neighbor, {"linear"}},
    [COLL_NEIGHBOR_ALLTOALL] = {nbc_neighbor, {"linear"}},
    [COLL_NEIGHBOR_ALLTOALLV] = {nbc_neighbor, {"linear"}},
};

static const char *nbc_last[COLL_NOPS]; /* what this rank's last i-call of each op ran */

static int nbc_index(int op, const char *name)
{
    for (int k = 0; k < NBC_NALGS; k++)
        if (nbc_ops[op].names[k] && strcmp(nbc_ops[op].names[k], name) == 0)
            return k;
    return -1;
}

/* HINT_I<OP> (else HINT_<OP> when it names one of the nonblocking algorithms), read once:
   index + 1, 0 for auto; an unknown name in HINT_I<OP> is reported and auto stays. */
static int nbc_forced[COLL_NOPS];
static bool nbc_env_read;

static void env_var(char *var, size_t n, const char *prefix, int op)
{
    int k = snprintf(var, n, "%s%s", prefix, coll_tables[op].op);
    for (int i = (int)strlen(prefix); i < k && (size_t)i < n; i++)
        var[i] = (char)toupper((unsigned char)var[i]);
}

/* The nonblocking algorithm that variable `var` names for op: index + 1, 0 when unset or auto,
   -1 when it names none (reported when `report`). */
static int named(const char *var, int op, bool report)
{
    const char *v = getenv(var);
    if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0)
        return 0;
    int k = nbc_index(op, v);
    if (k < 0 && report)
        RT_ERR("coll", "%s=%s: i%s has no such algorithm (hint_info --algorithms lists them); HINT_%s or "
               "the defaults choose", var, v, coll_tables[op].op, var + 6);
    return k + 1;
}

static void nbc_read_env(void)
{
    nbc_env_read = true;
    for (int op = 0; op < COLL_NOPS; op++) {
        if (nbc_ops[op].build == NULL)
            continue;
        char var[64];
        env_var(var, sizeof var, "HINT_I", op);
        int k = named(var, op, true);
        if (k <= 0) { /* unset or unknown: HINT_<OP> when it names a nonblocking algorithm */
            env_var(var, sizeof var, "HINT_", op);
            k = named(var, op, false);
        }
        nbc_forced[op] = k > 0 ? k : 0;
    }
}

static bool ring_usable(const struct coll_args *a)
{
    return a->size > 2 && a->count >= (size_t)a->size && op_commutes(a->op);
}

static bool nbc_usable(int k, const struct coll_args *a)
{
    if (k == NBC_HEAP)
        return nbc_heap_usable(a);
    if (k == NBC_MSG2)
        return ring_usable(a);
    return true;
}

/* The algorithm for the call: forced if it can run (else HINT_ERR_UNSUPPORTED, or the defaults
   with HINT_COLL_FALLBACK=warn|silent), then heap when usable, then the message schedule. */
static int nbc_choose(const struct coll_args *a, int *alg)
{
    if (!nbc_env_read)
        nbc_read_env();
    int f = nbc_forced[a->op_id] - 1;
    if (f >= 0) {
        if (nbc_usable(f, a)) {
            *alg = f;
            return HINT_SUCCESS;
        }
        const char *mode = rt_cfg_str("HINT_COLL_FALLBACK");
        if (strcmp(mode, "warn") == 0)
            RT_ERR("coll", "i%s algorithm %s cannot run here (P=%d); running the default instead",
                   coll_tables[a->op_id].op, nbc_ops[a->op_id].names[f], a->size);
        else if (strcmp(mode, "silent") != 0)
            return HINT_ERR_UNSUPPORTED;
    }
    if (nbc_ops[a->op_id].names[NBC_HEAP] && nbc_heap_usable(a))
        *alg = NBC_HEAP;
    else if (a->op_id == COLL_ALLREDUCE && a->block >= NBC_RING_BYTES && ring_usable(a))
        *alg = NBC_MSG2;
    else
        *alg = NBC_MSG;
    return HINT_SUCCESS;
}

int nbc_forced_alg(int op_id, const char **name)
{
    if (!nbc_env_read)
        nbc_read_env();
    *name = nbc_forced[op_id] ? nbc_ops[op_id].names[nbc_forced[op_id] - 1] : NULL;
    return nbc_ops[op_id].build != NULL;
}

size_t nbc_alg_list(int op_id, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    for (int k = 0; k < NBC_NALGS; k++)
        if (nbc_ops[op_id].names[k] && used < n)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", nbc_ops[op_id].names[k]);
    return used;
}

const char *nbc_last_ran(int op_id) { return nbc_last[op_id]; }

int nbc_start(const struct coll_args *a, bool trivial, void *scratch, hint_request *out)
{
    int alg = NBC_MSG;
    if (!trivial) {
        if (nbc_ops[a->op_id].build == NULL) { /* api.c's i-calls are all in the table */
            RT_ERR("coll", "%s has no nonblocking schedule; the call returns HINT_ERR_INTERNAL",
                   coll_tables[a->op_id].op);
            free(scratch);
            return HINT_ERR_INTERNAL;
        }
        int st = nbc_choose(a, &alg);
        if (st != HINT_SUCCESS) {
            free(scratch);
            return st;
        }
    }
    struct sched *s = sched_new(a);
    if (s == NULL) {
        free(scratch);
        return HINT_ERR_NOMEM;
    }
    sched_adopt(s, scratch);
    if (a->size > 1 && coll_check_enabled()) /* HINT_COLL_CHECK: its rounds come first */
        nbc_check(s, a);
    if (!trivial) {
        if (alg == NBC_HEAP)
            nbc_heap(s, a);
        else if (alg == NBC_MSG2)
            nbc_allreduce_ring(s, a);
        else
            nbc_ops[a->op_id].build(s, a);
    }
    nbc_last[a->op_id] = trivial ? "trivial" : nbc_ops[a->op_id].names[alg];
    return sched_start(s, out);
}
