/*
 * tests/launcher/test_output.c — forwarding of rank output (whole lines, --tag-output), the
 * environment every rank gets, -x, and stdin.
 */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lt_util.h"

#define SPAM_LINES 3000

/* Checks one line written by lt_rank spam: "rank R line I <payload>", payload as generated. */
static int spam_line_ok(const char *line, size_t len, int *rank, int *idx)
{
    char buf[512];
    int n = 0;
    if (len >= sizeof buf)
        return 0;
    memcpy(buf, line, len);
    buf[len] = '\0';
    if (sscanf(buf, "rank %d line %d %n", rank, idx, &n) != 2)
        return 0;
    int pay = (*idx * 7 + *rank) % 200;
    char head[64];
    int hn = snprintf(head, sizeof head, "rank %d line %d ", *rank, *idx);
    if ((size_t)(hn + pay) != len)
        return 0;
    for (int k = 0; k < pay; k++)
        if (buf[hn + k] != (char)('a' + (*idx + k) % 26))
            return 0;
    return 1;
}

/* Every stdout line is whole and in order per rank; with tag, it starts with "[R] ". */
static void check_spam(const char *out, int np, int tag)
{
    int next[64] = {0};
    for (const char *p = out; *p;) {
        const char *e = strchr(p, '\n');
        cr_assert(e, "last line without newline: %.80s", p);
        int tr = -1, rank, idx, skip = 0;
        if (tag) {
            cr_assert_eq(sscanf(p, "[%d] %n", &tr, &skip), 1, "untagged line: %.80s", p);
        }
        cr_assert(spam_line_ok(p + skip, (size_t)(e - p - skip), &rank, &idx),
                  "broken line: %.*s", (int)(e - p), p);
        cr_assert(rank >= 0 && rank < np);
        if (tag)
            cr_assert_eq(tr, rank, "tag [%d] on a line of rank %d", tr, rank);
        cr_assert_eq(idx, next[rank], "rank %d: line %d after %d", rank, idx, next[rank] - 1);
        next[rank]++;
        p = e + 1;
    }
    for (int r = 0; r < np; r++)
        cr_expect_eq(next[r], SPAM_LINES, "rank %d: %d lines", r, next[r]);
}

static void spam_case(int tag)
{
    struct lt_run r;
    char lines[16];
    snprintf(lines, sizeof lines, "%d", SPAM_LINES);
    const char *const tagged[] = {"-n", "4", "--tag-output", lt_rank(), "spam", lines, NULL};
    const char *const plain[] = {"-n", "4", lt_rank(), "spam", lines, NULL};
    cr_assert_eq(lt_run(&r, tag ? tagged : plain, NULL, NULL), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    check_spam(r.out, 4, tag);
    for (int k = 0; k < 4; k++) {
        char want[64];
        if (tag)
            snprintf(want, sizeof want, "[%d] rank %d eline 0\n", k, k);
        else
            snprintf(want, sizeof want, "rank %d eline 0\n", k);
        cr_expect(strstr(r.err, want), "stderr misses '%s'", want);
    }
    cr_expect_eq(lt_count(r.err, "eline"), 4 * ((SPAM_LINES + 9) / 10));
    lt_run_free(&r);
}

Test(output, lines_whole_tagged) { spam_case(1); }
Test(output, lines_whole_untagged) { spam_case(0); }

Test(output, partial_last_line_tagged)
{
    struct lt_run r;
    const char *const args[] = {"-n", "2", "--tag-output", lt_rank(), "partial", NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "[0] no newline\n") && strstr(r.out, "[1] no newline\n"), "%s", r.out);
    cr_expect_eq(strlen(r.out), 2 * strlen("[0] no newline\n"));
    lt_run_free(&r);
}

static const char *value_of(const char *out, const char *name, char *buf, size_t cap)
{
    char pat[128];
    snprintf(pat, sizeof pat, "%s=", name);
    const char *p = strstr(out, pat);
    if (!p)
        return NULL;
    p += strlen(pat);
    size_t n = strcspn(p, "\n");
    snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
    return buf;
}

static int is_hex(const char *s, size_t n)
{
    if (strlen(s) != n)
        return 0;
    return strspn(s, "0123456789abcdef") == n;
}

static int cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
}

/* Reference for --nodes: deal the ranks out as blocks, the first np % nodes one larger. */
static void node_of(int np, int nodes, int rank, int *id, int *lrank, int *lsize)
{
    int first = 0;
    for (int k = 0; k < nodes; k++) {
        int size = np / nodes + (k < np % nodes);
        if (rank < first + size) {
            *id = k, *lrank = rank - first, *lsize = size;
            return;
        }
        first += size;
    }
}

static void env_case_nodes(int np, int nodes)
{
    struct lt_run r;
    char n[16], v[256], pid[16], nn[16];
    snprintf(n, sizeof n, "%d", np);
    snprintf(nn, sizeof nn, "%d", nodes);
    const char *const args[] = {"--tag-output", "--nodes", nn, "-n", n, lt_rank(), "env", "HINT_RANK",
        "HINT_SIZE", "HINT_LOCAL_RANK", "HINT_LOCAL_SIZE", "HINT_NODE_ID", "HINT_NNODES",
        "HINT_JOBID", "HINT_STORE", "HINT_TOKEN", "HINT_OVERSUBSCRIBED", "HINT_LAUNCHER_PID",
        NULL};
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 0);
    snprintf(pid, sizeof pid, "%d", (int)r.pid);
    for (int k = 0; k < np; k++) {
        char pre[16], want[16], line[8192];
        snprintf(pre, sizeof pre, "[%d] ", k);
        /* the lines of rank k only */
        size_t m = 0;
        for (const char *p = r.out; (p = strstr(p, pre)); p++) {
            size_t len = strcspn(p, "\n") + 1;
            if (m + len < sizeof line) {
                memcpy(line + m, p + strlen(pre), len - strlen(pre));
                m += len - strlen(pre);
            }
        }
        line[m] = '\0';
        int id = -1, lrank = -1, lsize = -1;
        node_of(np, nodes, k, &id, &lrank, &lsize);
        snprintf(want, sizeof want, "%d", k);
        cr_expect_str_eq(value_of(line, "HINT_RANK", v, sizeof v), want);
        snprintf(want, sizeof want, "%d", lrank);
        cr_expect_str_eq(value_of(line, "HINT_LOCAL_RANK", v, sizeof v), want, "rank %d", k);
        cr_expect_str_eq(value_of(line, "HINT_SIZE", v, sizeof v), n);
        snprintf(want, sizeof want, "%d", lsize);
        cr_expect_str_eq(value_of(line, "HINT_LOCAL_SIZE", v, sizeof v), want, "rank %d", k);
        snprintf(want, sizeof want, "%d", id);
        cr_expect_str_eq(value_of(line, "HINT_NODE_ID", v, sizeof v), want, "rank %d", k);
        cr_expect_str_eq(value_of(line, "HINT_NNODES", v, sizeof v), nn);
        cr_expect(is_hex(value_of(line, "HINT_JOBID", v, sizeof v), 16), "jobid %s", v);
        cr_expect(is_hex(value_of(line, "HINT_TOKEN", v, sizeof v), 32), "token %s", v);
        cr_expect(strncmp(value_of(line, "HINT_STORE", v, sizeof v), "unix:@hint-", 11) == 0, "%s", v);
        cr_expect_str_eq(value_of(line, "HINT_OVERSUBSCRIBED", v, sizeof v),
                         np > cpus() ? "1" : "0");
        cr_expect_str_eq(value_of(line, "HINT_LAUNCHER_PID", v, sizeof v), pid);
        cr_expect(strstr(line, "stdin eof"), "hintrun's stdin is /dev/null: every rank must see EOF");
    }
    lt_run_free(&r);
}

static void env_case(int np) { env_case_nodes(np, 1); }

Test(output, rank_environment_p1) { env_case(1); }
Test(output, rank_environment_nodes) /* uneven blocks, and as many nodes as ranks */
{
    env_case_nodes(5, 2);
    env_case_nodes(8, 3);
    env_case_nodes(3, 3);
}
Test(output, rank_environment_p3) { env_case(3); }
Test(output, rank_environment_oversubscribed) { env_case(cpus() + 1); }

Test(output, x_passes_variables)
{
    struct lt_run r;
    const char *const env[] = {"LT_FROM_HINTRUN=inherited value", "LT_OVERRIDDEN=old",
                               "HINT_RANK=99", NULL};
    const char *const args[] = {"-n", "2", "-x", "LT_SET=a=b c", "-x", "LT_FROM_HINTRUN",
        "-x", "LT_OVERRIDDEN=new", "-x", "LT_NOT_SET_ANYWHERE", lt_rank(), "env", "LT_SET",
        "LT_FROM_HINTRUN", "LT_OVERRIDDEN", "LT_NOT_SET_ANYWHERE", "HINT_RANK", NULL};
    cr_assert_eq(lt_run(&r, args, env, NULL), 0);
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(lt_count(r.out, "LT_SET=a=b c\n"), 2, "%s", r.out);
    cr_expect_eq(lt_count(r.out, "LT_FROM_HINTRUN=inherited value\n"), 2, "%s", r.out);
    cr_expect_eq(lt_count(r.out, "LT_OVERRIDDEN=new\n"), 2, "%s", r.out);
    cr_expect_eq(lt_count(r.out, "LT_NOT_SET_ANYWHERE unset\n"), 2, "%s", r.out);
    cr_expect(strstr(r.err, "LT_NOT_SET_ANYWHERE: not set"), "warning expected: %s", r.err);
    /* a stale HINT_RANK in hintrun's own environment never reaches the ranks */
    cr_expect_eq(lt_count(r.out, "HINT_RANK=0\n") + lt_count(r.out, "HINT_RANK=1\n"), 2, "%s",
                 r.out);
    lt_run_free(&r);
}
