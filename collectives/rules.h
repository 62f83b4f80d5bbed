/*
 * collectives/rules.h — selection rules: which algorithm an operation runs, by the group's shape
 * (ranks, ranks per node, nodes) and the call's size. The built-in defaults (rules_default.c)
 * and a tuning file (HINT_TUNING_FILE, tune.h) are the same data in the same JSON format:
 *
 *   { "version": 2,
 *     "alltoall": [ { "max_bytes": 1024, "algorithm": ["shm", "linear"] },
 *                   { "max_ppn": 4, "algorithm": "column", "copy": "nt" },
 *                   { "algorithm": ["hilbert", "pairwise"] } ] }
 *
 * Per operation, rules are tried in order; a rule matches when every bound it gives holds:
 * min_/max_ranks (the group's size), min_/max_ppn (its ranks per node), min_/max_nodes,
 * min_/max_bytes (bytes of one block; of the whole message for bcast, reduce and allreduce) and
 * min_/max_total_bytes (bytes times ranks). "algorithm" is a name or a list of names in order of
 * preference: the first that can run the call (its applicability test) is taken; when none can,
 * the next matching rule is tried. "copy" (temporal | nt | hybrid) sets the shared-heap copy
 * mode. Keys starting with "_" are notes. Version 1 files (per rank count: {"P": 8, "rules":
 * [{"max_bytes", "algorithm", "copy"}]}, what hint-tune writes) are read as rules bounded to that
 * rank count. An unknown operation, algorithm, key or copy mode is an error at load, with its
 * JSON path.
 */
#ifndef HINT_COLL_RULES_H
#define HINT_COLL_RULES_H

#include <stdbool.h>
#include <stddef.h>

#include "collectives/coll.h"

#define RULE_MAX_ALGS 8
#define RULE_CACHE_SHAPES 4

struct coll_rule {
    int min_ranks, max_ranks, min_ppn, max_ppn, min_nodes, max_nodes;
    size_t min_bytes, max_bytes, min_total, max_total;
    int nalgs;
    int algs[RULE_MAX_ALGS]; /* indices into the operation's table, in order of preference */
    int copy;                /* enum copy_mode, -1: the default */
};

/* The rules of one operation that a group shape can match, found once per shape. */
struct rule_shape {
    int ranks, ppn, nodes;   /* ranks == 0: unused */
    int n;
    unsigned char idx[64];
};

struct coll_rules {
    int n[COLL_NOPS];
    struct coll_rule *r[COLL_NOPS];
    struct rule_shape shapes[COLL_NOPS][RULE_CACHE_SHAPES];
    int next_shape[COLL_NOPS];
    bool lazy;              /* the built-in defaults: an operation's rules are built on its first pick */
    bool loaded[COLL_NOPS]; /* with lazy: this operation's rules built */
};

/* Parse rules from JSON text (origin names it in messages): HINT_SUCCESS, or HINT_ERR_ARG with
   the problem and its JSON path in msg and *out empty. */
int rules_parse(const char *text, const char *origin, struct coll_rules *out, char *msg, size_t len);
void rules_free(struct coll_rules *rs);
/* The algorithm (index) the rules give for a call, and its copy mode (-1: default); -1 when no
   matching rule has an algorithm that can run it. */
int rules_pick(struct coll_rules *rs, const struct coll_args *a, int *copy);
/* The built-in defaults: each operation's rules built on its first pick from coll_default_src, no
   JSON parsed (the whole text took 2.7M instructions of jansson, ~0.2 ms, in the first
   collective of every process). */
struct coll_rules *rules_default(void);
/* The same with operation op's rules built, for readers of n[op] and r[op] (hint_info). */
struct coll_rules *rules_default_for(int op);
/* Their JSON text (hint_info --rules, tests), the one source... */
extern const char coll_default_rules[];
/* ...of this table, generated from it at build time (collectives/gen_rules.py): one row per rule
   in the text's order, the bounds in rule_keys' order (rules.c), names not yet looked up. */
struct coll_rule_src {
    const char *op;
    long long b[10];
    int nalgs;
    const char *algs[RULE_MAX_ALGS];
    const char *copy; /* NULL: the default */
};
extern const struct coll_rule_src coll_default_src[];
extern const int coll_default_nsrc;
/* Where an operation's rules are built from its rows (rows first .. first + n, in .bss): no heap
   allocation in its first call, which could make the heap commit, and reserve, a fresh 1 MiB
   there (collectives/rules.c, load_lazy). */
extern struct coll_rule coll_default_rows[];
/* Each operation's rows: coll_default_src[first .. first + n). */
struct coll_rule_span {
    const char *op;
    int first, n;
};
extern const struct coll_rule_span coll_default_ops[];
extern const int coll_default_nops;

#endif
