/*
 * collectives/rules.c — selection rules (format in rules.h): parsing, and picking an algorithm
 * for a call. The rules that a group's shape can match are filtered once per shape and kept, so
 * a call only compares its size against the few rules left.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/copy.h"
#include "collectives/rules.h"
#include "runtime/runtime.h"

#define RULES_PER_OP 64

static int copy_index(const char *name)
{
    return !strcmp(name, "temporal") ? COPY_TEMPORAL : !strcmp(name, "nt") ? COPY_NT
           : !strcmp(name, "hybrid") ? COPY_HYBRID : -2;
}

#define FAIL(...)                                                                                \
    do {                                                                                         \
        snprintf(msg, len, __VA_ARGS__);                                                         \
        return HINT_ERR_ARG;                                                                     \
    } while (0)

/* An integer bound: absent leaves *out as it is. */
static int bound(json_t *r, const char *key, const char *where, long long max, long long *out, char *msg, size_t len)
{
    json_t *v = json_object_get(r, key);
    if (v == NULL)
        return HINT_SUCCESS;
    if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
        FAIL("%s.%s: must be an integer from 0 to %lld", where, key, max);
    *out = json_integer_value(v);
    return HINT_SUCCESS;
}

static const char *const rule_keys[] = {"min_ranks", "max_ranks", "min_ppn",         "max_ppn",
                                        "min_nodes", "max_nodes", "min_bytes",       "max_bytes",
                                        "min_total_bytes", "max_total_bytes", "algorithm", "copy"};

static int check_keys(json_t *r, const char *where, char *msg, size_t len)
{
    const char *key;
    json_t *v;
    json_object_foreach(r, key, v)
    {
        bool known = key[0] == '_';
        for (size_t i = 0; !known && i < sizeof rule_keys / sizeof rule_keys[0]; i++)
            known = !strcmp(key, rule_keys[i]);
        if (!known)
            FAIL("%s: unknown key \"%s\"", where, key);
    }
    return HINT_SUCCESS;
}

static int parse_algorithms(json_t *alg, int op, const char *where, struct coll_rule *out, char *msg, size_t len)
{
    json_t *one[1] = {alg};
    size_t n = json_is_array(alg) ? json_array_size(alg) : 1;
    if (!(json_is_string(alg) || json_is_array(alg)) || n == 0 || n > RULE_MAX_ALGS)
        FAIL("%s.algorithm: must be a name or a list of 1 to %d names", where, RULE_MAX_ALGS);
    for (size_t i = 0; i < n; i++) {
        json_t *name = json_is_array(alg) ? json_array_get(alg, i) : one[0];
        int k = json_is_string(name) ? coll_alg_by_name(op, json_string_value(name)) : -1;
        if (k < 0)
            FAIL("%s.algorithm: %s%s%s is not a %s algorithm (see hint_info --algorithms)", where,
                 json_is_string(name) ? "'" : "", json_is_string(name) ? json_string_value(name) : "a non-string",
                 json_is_string(name) ? "'" : "", coll_tables[op].op);
        out->algs[out->nalgs++] = k;
    }
    return HINT_SUCCESS;
}

static int parse_rule(json_t *r, int op, const char *where, struct coll_rule *out, char *msg, size_t len)
{
    if (!json_is_object(r))
        FAIL("%s: a rule must be an object", where);
    int st = check_keys(r, where, msg, len);
    long long b[10] = {0, INT32_MAX, 0, INT32_MAX, 0, INT32_MAX, 0, INT64_MAX, 0, INT64_MAX};
    for (int i = 0; st == HINT_SUCCESS && i < 10; i++)
        st = bound(r, rule_keys[i], where, i < 6 ? INT32_MAX : INT64_MAX, &b[i], msg, len);
    if (st != HINT_SUCCESS)
        return st;
    *out = (struct coll_rule){.min_ranks = (int)b[0], .max_ranks = (int)b[1], .min_ppn = (int)b[2],
                              .max_ppn = (int)b[3], .min_nodes = (int)b[4], .max_nodes = (int)b[5],
                              .min_bytes = (size_t)b[6], .max_bytes = (size_t)b[7], .min_total = (size_t)b[8],
                              .max_total = (size_t)b[9], .copy = -1};
    json_t *alg = json_object_get(r, "algorithm"), *cp = json_object_get(r, "copy");
    if (alg == NULL)
        FAIL("%s.algorithm: missing", where);
    if ((st = parse_algorithms(alg, op, where, out, msg, len)) != HINT_SUCCESS)
        return st;
    if (cp && (!json_is_string(cp) || (out->copy = copy_index(json_string_value(cp))) == -2))
        FAIL("%s.copy: must be \"temporal\", \"nt\" or \"hybrid\"", where);
    return HINT_SUCCESS;
}

static struct coll_rule *add_rule(struct coll_rules *rs, int op, const char *where, char *msg, size_t len)
{
    if (rs->n[op] == RULES_PER_OP) {
        snprintf(msg, len, "%s: more than %d rules for %s", where, RULES_PER_OP, coll_tables[op].op);
        return NULL;
    }
    if (rs->r[op] == NULL && (rs->r[op] = calloc(RULES_PER_OP, sizeof *rs->r[op])) == NULL) {
        snprintf(msg, len, "%s: out of memory", where);
        return NULL;
    }
    return &rs->r[op][rs->n[op]++];
}

/* Version 2: a list of rules per operation. */
static int parse_v2(json_t *list, int op, const char *where, struct coll_rules *rs, char *msg, size_t len)
{
    size_t i;
    json_t *r;
    char at[200];
    json_array_foreach(list, i, r)
    {
        snprintf(at, sizeof at, "%s[%zu]", where, i);
        struct coll_rule *out = add_rule(rs, op, at, msg, len);
        int st = out ? parse_rule(r, op, at, out, msg, len) : HINT_ERR_ARG;
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

/* Version 1: per rank count, a list of rules each read as version 2 reads it, then bounded to
   that rank count. */
static int parse_v1(json_t *list, int op, const char *where, struct coll_rules *rs, char *msg, size_t len)
{
    size_t i;
    json_t *e;
    char at[200];
    json_array_foreach(list, i, e)
    {
        snprintf(at, sizeof at, "%s[%zu]", where, i);
        json_t *P = json_object_get(e, "P"), *rules = json_object_get(e, "rules");
        if (!json_is_integer(P) || json_integer_value(P) < 1 || json_integer_value(P) > INT32_MAX)
            FAIL("%s.P: must be a positive integer", at);
        if (!json_is_array(rules) || json_array_size(rules) == 0)
            FAIL("%s.rules: must be a non-empty array", at);
        int first = rs->n[op];
        strncat(at, ".rules", sizeof at - strlen(at) - 1);
        int st = parse_v2(rules, op, at, rs, msg, len);
        if (st != HINT_SUCCESS)
            return st;
        for (int k = first; k < rs->n[op]; k++)
            rs->r[op][k].min_ranks = rs->r[op][k].max_ranks = (int)json_integer_value(P);
    }
    return HINT_SUCCESS;
}

static int parse_root(json_t *root, const char *origin, struct coll_rules *rs, char *msg, size_t len)
{
    if (!json_is_object(root))
        FAIL("%s: the top level must be an object", origin);
    json_t *ver = json_object_get(root, "version");
    if (!json_is_integer(ver) || (json_integer_value(ver) != 1 && json_integer_value(ver) != 2))
        FAIL("%s: version: must be 1 or 2", origin);
    bool v1 = json_integer_value(ver) == 1;
    const char *key;
    json_t *val;
    char where[128];
    json_object_foreach(root, key, val)
    {
        if (!strcmp(key, "version") || key[0] == '_')
            continue;
        int op = coll_op_by_name(key);
        if (op < 0)
            FAIL("%s: %s: not a collective operation", origin, key);
        if (!json_is_array(val))
            FAIL("%s: %s: must be an array", origin, key);
        snprintf(where, sizeof where, "%s: %s", origin, key);
        int st = v1 ? parse_v1(val, op, where, rs, msg, len) : parse_v2(val, op, where, rs, msg, len);
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

int rules_parse(const char *text, const char *origin, struct coll_rules *out, char *msg, size_t len)
{
    json_error_t err;
    memset(out, 0, sizeof *out);
    json_t *root = json_loads(text, 0, &err);
    if (root == NULL) {
        snprintf(msg, len, "%s:%d:%d: %s", origin, err.line, err.column, err.text);
        return HINT_ERR_ARG;
    }
    int st = parse_root(root, origin, out, msg, len);
    json_decref(root);
    if (st != HINT_SUCCESS)
        rules_free(out); /* a bad file is ignored as a whole */
    return st;
}

void rules_free(struct coll_rules *rs)
{
    for (int op = 0; op < COLL_NOPS; op++)
        free(rs->r[op]);
    memset(rs, 0, sizeof *rs);
}

/* The group's shape: its size, and from its collective state (collectives/group_state.c) the
   nodes its members are on and the most members on one node. */
static void shape_of(const struct coll_args *a, int *ranks, int *ppn, int *nodes)
{
    *ranks = a->size;
    coll_shape(a, nodes, ppn);
}

void coll_shape(const struct coll_args *a, int *nodes, int *ppn)
{
    const struct coll_group *cg = a->g && coll_group_key >= 0 ? coll_group_of(a->g) : NULL;
    *nodes = cg && cg->nodes > 0 ? cg->nodes : 1;
    *ppn = cg && cg->ppn > 0 ? cg->ppn : a->size;
}

static void load_lazy(struct coll_rules *rs, int op);

static bool fits_shape(const struct coll_rule *r, int ranks, int ppn, int nodes)
{
    return ranks >= r->min_ranks && ranks <= r->max_ranks && ppn >= r->min_ppn && ppn <= r->max_ppn &&
           nodes >= r->min_nodes && nodes <= r->max_nodes;
}

/* The operation's rules for this shape, filtered on first sight of the shape. */
static const struct rule_shape *rules_for_shape(struct coll_rules *rs, int op, int ranks, int ppn, int nodes)
{
    struct rule_shape *c = rs->shapes[op];
    for (int i = 0; i < RULE_CACHE_SHAPES; i++)
        if (c[i].ranks == ranks && c[i].ppn == ppn && c[i].nodes == nodes)
            return &c[i];
    struct rule_shape *s = &c[rs->next_shape[op]++ % RULE_CACHE_SHAPES];
    *s = (struct rule_shape){.ranks = ranks, .ppn = ppn, .nodes = nodes};
    for (int k = 0; k < rs->n[op]; k++)
        if (fits_shape(&rs->r[op][k], ranks, ppn, nodes))
            s->idx[s->n++] = (unsigned char)k;
    return s;
}

int rules_pick(struct coll_rules *rs, const struct coll_args *a, int *copy)
{
    int op = a->op_id, ranks, ppn, nodes;
    if (rs->lazy && !rs->loaded[op])
        load_lazy(rs, op);
    if (rs->n[op] == 0)
        return -1;
    shape_of(a, &ranks, &ppn, &nodes);
    const struct rule_shape *s = rules_for_shape(rs, op, ranks, ppn, nodes);
    size_t bytes = a->block, total = a->block * (size_t)(ranks > 0 ? ranks : 1);
    for (int i = 0; i < s->n; i++) {
        const struct coll_rule *r = &rs->r[op][s->idx[i]];
        if (bytes < r->min_bytes || bytes > r->max_bytes || total < r->min_total || total > r->max_total)
            continue;
        for (int k = 0; k < r->nalgs; k++) {
            if (coll_alg_usable(r->algs[k], a)) {
                *copy = r->copy;
                return r->algs[k];
            }
        }
    }
    return -1;
}

/* One row of the generated table as parse_rule reads a rule: the same bounds, names and checks
   (the place in messages: built-in defaults: OP[i], formatted only on failure). */
#define SRC_FAIL(fmt, ...) FAIL("built-in defaults: %s[%d]" fmt, src->op, i, __VA_ARGS__)
static int rule_from_src(const struct coll_rule_src *src, int i, int op, struct coll_rule *out, char *msg, size_t len)
{
    const long long *b = src->b;
    for (int k = 0; k < 10; k++)
        if (b[k] < 0 || b[k] > (k < 6 ? INT32_MAX : INT64_MAX))
            SRC_FAIL(".%s: must be an integer from 0 to %lld", rule_keys[k],
                     k < 6 ? (long long)INT32_MAX : (long long)INT64_MAX);
    *out = (struct coll_rule){.min_ranks = (int)b[0], .max_ranks = (int)b[1], .min_ppn = (int)b[2],
                              .max_ppn = (int)b[3], .min_nodes = (int)b[4], .max_nodes = (int)b[5],
                              .min_bytes = (size_t)b[6], .max_bytes = (size_t)b[7], .min_total = (size_t)b[8],
                              .max_total = (size_t)b[9], .copy = -1};
    if (src->nalgs < 1 || src->nalgs > RULE_MAX_ALGS)
        SRC_FAIL(".algorithm: must be a name or a list of 1 to %d names", RULE_MAX_ALGS);
    for (int k = 0; k < src->nalgs; k++) {
        int alg = coll_alg_by_name(op, src->algs[k]);
        if (alg < 0)
            SRC_FAIL(".algorithm: '%s' is not a %s algorithm (see hint_info --algorithms)", src->algs[k],
                     coll_tables[op].op);
        out->algs[out->nalgs++] = alg;
    }
    if (src->copy && (out->copy = copy_index(src->copy)) == -2)
        SRC_FAIL(".copy: must be %s", "\"temporal\", \"nt\" or \"hybrid\"");
    return HINT_SUCCESS;
}

/* One operation's rules from the generated table of the defaults, on its first pick. */
static void load_lazy(struct coll_rules *rs, int op)
{
    char msg[512] = "";
    int st = HINT_SUCCESS;
    rs->loaded[op] = true;
    const struct coll_rule_span *span = NULL;
    for (int k = 0; k < coll_default_nops && !span; k++)
        if (!strcmp(coll_default_ops[k].op, coll_tables[op].op))
            span = &coll_default_ops[k];
    if (span == NULL || span->n == 0)
        return;
    /* its rows, not add_rule's RULES_PER_OP; static, so the first pick allocates nothing (a small
       allocation there made the heap reserve and commit 1 MiB, ~0.3 ms, in the first 32 KiB
       allgather of hint-bench at P=2: strace -k showed fallocate under load_lazy) */
    if (span->n <= RULES_PER_OP && rs->r[op] == NULL)
        rs->r[op] = &coll_default_rows[span->first];
    for (int i = 0; i < span->n && st == HINT_SUCCESS; i++) {
        struct coll_rule *out = add_rule(rs, op, "built-in defaults", msg, sizeof msg);
        st = out ? rule_from_src(&coll_default_src[span->first + i], i, op, out, msg, sizeof msg) : HINT_ERR_ARG;
    }
    if (st != HINT_SUCCESS) {
        rs->n[op] = 0; /* broken (tests/unit/test_select.c catches that): the first algorithm runs */
        RT_ERR("coll", "%s; %s runs its first algorithm", msg, coll_tables[op].op);
    }
}

struct coll_rules *rules_default(void)
{
    static struct coll_rules rs = {.lazy = true};
    return &rs;
}

struct coll_rules *rules_default_for(int op)
{
    struct coll_rules *rs = rules_default();
    if (!rs->loaded[op])
        load_lazy(rs, op);
    return rs;
}
