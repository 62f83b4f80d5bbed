/*
 * tools/hint_info.c — what this hint can do: every collective's algorithms (from the same
 * tables selection uses), every HINT_* variable with its default, and which algorithm the
 * defaults pick for a given number of ranks, nodes and size.
 *
 *   hint_info [--algorithms] [--env [--markdown]] [--rules] [--transports] [--np P] [--nodes K] [--size BYTES] [--rules-file FILE] [--version] [--help]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collectives/coll.h"
#include "collectives/rules.h"
#include "collectives/sched.h"
#include "hint.h"
#include "runtime/envdoc.h"
#include "runtime/transport.h"
#include "transport/ofi/ofi.h"

static void usage(FILE *to)
{
    fprintf(to, "usage: hint_info [--algorithms] [--env [--markdown]] [--rules] [--transports] [--np P] [--nodes K] [--size BYTES] [--rules-file FILE] [--version] [--help]\n"
                "With no option: everything, and the default choices for P = 2, 4, 8, 16 at 8 B, 4 KiB, 1 MiB.\n"
                "  --algorithms   every collective with its algorithms and what they do\n"
                "  --env          every HINT_* environment variable: default, accepted values, meaning\n"
                "  --markdown     with --env: as the Markdown table in README.md\n"
                "  --rules        the built-in selection rules, in the tuning-file format (a start for HINT_TUNING_FILE)\n"
                "  --transports   the transports in start order, and the libfabric provider this environment picks\n"
                "  --np P         show the algorithms the defaults pick for P ranks ...\n"
                "  --nodes K      ... spread over K nodes as hintrun --nodes K spreads them (default 1) ...\n"
                "  --size BYTES   ... at this many bytes per rank block (with --np)\n"
                "  --rules-file FILE  ... with FILE's rules (tuning-file format) first, as HINT_TUNING_FILE=FILE would\n"
                "                 choose, the built-in rules where none of FILE's matches (bench/cliffs.py reads this)\n");
}

static void print_algorithms(void)
{
    printf("Collective algorithms (force one with HINT_<OP>=name or hint_coll_set):\n");
    for (int op = 0; op < COLL_NOPS; op++) {
        const struct coll_table *t = &coll_tables[op];
        printf("  %s\n", t->op);
        for (int i = 0; i < t->nalgs; i++)
            printf("    %-20s %s\n", t->algs[i].name, t->algs[i].desc);
        char nb[128];
        if (nbc_alg_list(op, nb, sizeof nb)) /* hint_i<op>: HINT_I<OP>=name, or hint_coll_last("i<op>") */
            printf("    %-20s %s\n", "(nonblocking)", nb);
    }
}

/* text after a 25-column indent, wrapped at spaces to lines of at most 100 columns */
static void print_wrapped(const char *label, const char *text)
{
    const int indent = 25, width = 100;
    int col = printf("  %-22s %s", label, "");
    while (*text) {
        int n = (int)strcspn(text, " ");
        if (col > indent && col + 1 + n > width)
            col = printf("\n%*s", indent, "") - 1;
        else if (col > indent)
            col += printf(" ");
        col += printf("%.*s", n, text);
        text += n;
        text += strspn(text, " ");
    }
    printf("\n");
}

static void print_env(void)
{
    char dflt[256], accepts[512], line[600];
    printf("Environment variables (hint_init fails on a value a variable does not accept):\n");
    for (int i = 0; i < rt_env_nvars; i++) {
        const struct rt_env_var *v = &rt_env_vars[i];
        rt_env_default_text(v, dflt, sizeof dflt);
        rt_env_accepts(v, accepts, sizeof accepts);
        snprintf(line, sizeof line, "default %s", dflt);
        print_wrapped(v->name, line);
        if (v->kind != RT_ENV_LAUNCHER) {
            snprintf(line, sizeof line, "accepts %s", accepts);
            print_wrapped("", line);
        }
        print_wrapped("", v->meaning);
    }
}

/* Text for a Markdown table cell: a '|' would end the cell. */
static void put_cell(const char *s)
{
    for (; *s; s++)
        printf(*s == '|' ? "\\|" : "%c", *s);
}

/* README.md's table, exactly (tests/unit/check_env_table.py compares the two). */
static void print_env_markdown(void)
{
    char dflt[256], accepts[512];
    printf("| variable | default | accepts | meaning |\n| --- | --- | --- | --- |\n");
    for (int i = 0; i < rt_env_nvars; i++) {
        const struct rt_env_var *v = &rt_env_vars[i];
        rt_env_default_text(v, dflt, sizeof dflt);
        rt_env_accepts(v, accepts, sizeof accepts);
        printf("| `%s` | ", v->name);
        put_cell(dflt);
        printf(" | ");
        put_cell(v->kind == RT_ENV_LAUNCHER ? "" : accepts);
        printf(" | ");
        put_cell(v->meaning);
        printf(" |\n");
    }
}

/* The provider is what fi_getinfo offers under this environment (HINT_OFI_PROVIDER, FI_PROVIDER),
   as a rank on a job of several nodes would pick it. */
static void print_transports(void)
{
    printf("Transports (the first that reaches a rank carries it):\n");
    for (int i = 0; hint_transports[i]; i++)
        printf("  %-6s %s\n", hint_transports[i]->name,
               hint_transports[i]->caps & RT_TP_SAME_NODE ? "ranks on this node" : "ranks on other nodes");
    const char *why = NULL, *prov = ofi_provider_name(&why);
    printf("  libfabric provider: %s\n", prov ? prov : why);
}

/* Whether collectives/api.c takes its trivial path for such a call, so that what is printed
   is what hint_coll_last would name. The v variants cannot know locally that every rank's
   counts are 0, so only a group of one is trivial for them; a neighbourhood call copies along
   its self loops even in a group of one, and only its empty blocks are trivial (the v
   neighbourhood calls never are). */
static bool call_is_trivial(int op, int P, size_t bytes)
{
    switch (op) {
    case COLL_BARRIER:
    case COLL_GATHERV:
    case COLL_SCATTERV:
    case COLL_ALLGATHERV:
    case COLL_ALLTOALLV:
    case COLL_ALLTOALLW:
        return P == 1;
    case COLL_NEIGHBOR_ALLGATHER:
    case COLL_NEIGHBOR_ALLTOALL:
        return bytes == 0;
    case COLL_NEIGHBOR_ALLGATHERV:
    case COLL_NEIGHBOR_ALLTOALLV:
        return false;
    default:
        return P == 1 || bytes == 0;
    }
}

static void print_defaults(int P, size_t bytes)
{
    printf("Default choice for P=%d, %zu bytes per block (ranks on one node):\n", P, bytes);
    for (int op = 0; op < COLL_NOPS; op++)
        printf("  %-22s %s\n", coll_tables[op].op,
               call_is_trivial(op, P, bytes) ? "trivial" : coll_default_name(op, P, bytes));
}

/* A rule set's pick for P ranks on K nodes, as rules_pick makes it for a group of that shape
   (hintrun --nodes K gives the first P % K nodes one rank more, so the most on a node is the
   larger share): the first matching rule with an algorithm that can run, where a node-only one
   cannot on more than one node; NULL when none matches. */
static const char *pick_across(const struct coll_rules *rs, int op, int P, int K, size_t bytes)
{
    const struct coll_table *t = &coll_tables[op];
    struct coll_args a = {.op_id = op, .size = P, .block = bytes, .count = bytes / 8};
    int ppn = (P + K - 1) / K;
    for (int i = 0; i < rs->n[op]; i++) {
        const struct coll_rule *r = &rs->r[op][i];
        if (P < r->min_ranks || P > r->max_ranks || ppn < r->min_ppn || ppn > r->max_ppn || K < r->min_nodes ||
            K > r->max_nodes || bytes < r->min_bytes || bytes > r->max_bytes || bytes * (size_t)P < r->min_total ||
            bytes * (size_t)P > r->max_total)
            continue;
        for (int k = 0; k < r->nalgs; k++) {
            const struct coll_alg *x = &t->algs[r->algs[k]];
            if (!(x->node_only && K > 1) && (x->applicable == NULL || x->applicable(&a)))
                return x->name;
        }
    }
    return NULL;
}

/* --rules-file: its rules, read once (NULL: none given). */
static struct coll_rules file_rules;
static const char *file_path;

/* What selection picks: FILE's rules first (a tuning file's place), then the built-in ones, else
   the table's first. */
static const char *default_across(int op, int P, int K, size_t bytes)
{
    const char *name = file_path ? pick_across(&file_rules, op, P, K, bytes) : NULL;
    if (name == NULL)
        name = pick_across(rules_default_for(op), op, P, K, bytes);
    return name ? name : coll_tables[op].algs[0].name;
}

static int load_rules_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "hint_info: cannot open %s\n", path);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - n - 1, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char *more = realloc(text, cap *= 2);
            if (more == NULL)
                free(text);
            text = more;
        }
    }
    fclose(f);
    if (text == NULL) {
        fprintf(stderr, "hint_info: out of memory reading %s\n", path);
        return -1;
    }
    text[n] = '\0';
    char msg[512];
    int st = rules_parse(text, path, &file_rules, msg, sizeof msg);
    free(text);
    if (st != HINT_SUCCESS) {
        fprintf(stderr, "hint_info: %s\n", msg);
        return -1;
    }
    file_path = path;
    return 0;
}

static void print_defaults_across(int P, int K, size_t bytes)
{
    if (file_path)
        printf("Choice with %s's rules, then the built-in ones, ", file_path);
    else
        printf("Default choice ");
    printf("for P=%d on %d nodes (at most %d a node), %zu bytes per block:\n", P, K, (P + K - 1) / K, bytes);
    for (int op = 0; op < COLL_NOPS; op++)
        printf("  %-22s %s\n", coll_tables[op].op,
               call_is_trivial(op, P, bytes) ? "trivial" : default_across(op, P, K, bytes));
}

int main(int argc, char **argv)
{
    int algs = 0, env = 0, markdown = 0, np = 0, nodes = 1;
    long long size = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--version")) {
            printf("hint %s\n", HINT_VERSION_STRING);
            return 0;
        } else if (!strcmp(argv[i], "--algorithms")) {
            algs = 1;
        } else if (!strcmp(argv[i], "--env")) {
            env = 1;
        } else if (!strcmp(argv[i], "--rules")) {
            fputs(coll_default_rules, stdout);
            return 0;
        } else if (!strcmp(argv[i], "--transports")) {
            print_transports();
            return 0;
        } else if (!strcmp(argv[i], "--markdown")) {
            markdown = 1;
        } else if (!strcmp(argv[i], "--np") && i + 1 < argc) {
            np = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            nodes = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
            size = atoll(argv[++i]);
        } else if (!strcmp(argv[i], "--rules-file") && i + 1 < argc) {
            if (load_rules_file(argv[++i]) != 0)
                return 2;
        } else {
            fprintf(stderr, "hint_info: unknown or incomplete option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (markdown && !env) {
        fprintf(stderr, "hint_info: --markdown goes with --env\n");
        return 2;
    }
    if (np < 0 || (np == 0 && size >= 0) || size < -1 || nodes < 1 || (nodes > 1 && np < nodes)) {
        fprintf(stderr, "hint_info: --np must be a positive rank count, --size a byte count, --nodes at most --np\n");
        return 2;
    }
    if (!algs && !env && !np) {
        printf("hint %s\n\n", HINT_VERSION_STRING);
        print_transports();
        printf("\n");
        print_algorithms();
        printf("\n");
        print_env();
        static const int ps[] = {2, 4, 8, 16};
        static const size_t ss[] = {8, 4096, 1 << 20};
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 3; j++) {
                printf("\n");
                print_defaults(ps[i], ss[j]);
            }
        return 0;
    }
    if (algs)
        print_algorithms();
    if (env && markdown)
        print_env_markdown();
    else if (env)
        print_env();
    if (np && (nodes > 1 || file_path))
        print_defaults_across(np, nodes, size < 0 ? 8 : (size_t)size);
    else if (np)
        print_defaults(np, size < 0 ? 8 : (size_t)size);
    return 0;
}
