/*
 * tests/topology/test_tool.c — run hint-topo (path in HINT_TOPO_TOOL) and check its output:
 * the paper's Fig. 2 hierarchy in the table and in JSON, the detected hierarchy, usage errors.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run hint-topo with args; stdout (and stderr when merge) into a malloc'ed string. */
static char *run_tool(const char *args, int merge, int *status)
{
    const char *tool = getenv("HINT_TOPO_TOOL");
    char cmd[1024];
    cr_assert(tool, "HINT_TOPO_TOOL is not set (run through meson test)");
    snprintf(cmd, sizeof cmd, "'%s' %s%s", tool, args, merge ? " 2>&1" : " 2>/dev/null");
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t cap = 1 << 16, len = 0, got;
    char *out = malloc(cap);
    while ((got = fread(out + len, 1, cap - 1 - len, p)) > 0) {
        len += got;
        if (len == cap - 1)
            out = realloc(out, cap *= 2);
    }
    out[len] = '\0';
    int st = pclose(p);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return out;
}

/* The line of the table that starts with this order. */
static const char *line_of(const char *out, const char *order)
{
    const char *p = out;
    while ((p = strstr(p, order)) != NULL) {
        if (p == out || p[-1] == '\n')
            return p;
        p++;
    }
    return NULL;
}

Test(tool, fig2_table)
{
    int st;
    char *out = run_tool("--hierarchy 2,2,4 --group-size 4", 0, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "detected:") != NULL, "%s", out);
    const char *l = line_of(out, "[1,0,2]");
    cr_assert(l, "no row for order [1,0,2]:\n%s", out);
    /* ring cost 7, pairs [0,33.3,66.7], no Slurm equivalent, cores 0,4,8,12 */
    static const char want[] = "[1,0,2]      7  [0.0,33.3,66.7]";
    cr_expect(strncmp(l, want, sizeof want - 1) == 0, "%.100s", l);
    cr_expect(strstr(l, " -  ") != NULL && strstr(l, "0,4,8,12") != NULL, "%.100s", l);
    l = line_of(out, "[0,1,2]");
    cr_assert(l);
    cr_expect(strstr(l, "      9  ") != NULL && strstr(l, "cyclic:cyclic") != NULL, "%.100s", l);
    l = line_of(out, "[2,1,0]");
    cr_assert(l);
    cr_expect(strstr(l, "[100.0,0.0,0.0]") != NULL && strstr(l, "block:block") != NULL, "%.100s", l);
    /* six orders */
    int rows = 0;
    for (const char *p = out; (p = strstr(p, "\n[")) != NULL; p++)
        rows++;
    cr_expect_eq(rows, 6, "%s", out);
    free(out);
}

Test(tool, json)
{
    int st;
    char *out = run_tool("--hierarchy 2,2,4 --group-size 4 --json", 0, &st);
    cr_assert_eq(st, 0, "%s", out);
    cr_expect(out[0] == '{' && strstr(out, "\"detected\": {") != NULL, "%s", out);
    cr_expect(strstr(out, "{\"order\": [1, 0, 2], \"ring_cost\": 7, \"pairs_per_level\": [0.0, 33.3, 66.7], "
                          "\"slurm\": null, \"cores\": [0, 4, 8, 12]") != NULL,
              "%s", out);
    cr_expect(strstr(out, "{\"order\": [2, 0, 1], \"ring_cost\": 3, \"pairs_per_level\": [100.0, 0.0, 0.0], "
                          "\"slurm\": \"plane=4:block\"") != NULL,
              "%s", out);
    free(out);
    /* python3 (when present) must accept it as JSON */
    if (system("command -v python3 >/dev/null 2>&1") == 0) {
        const char *tool = getenv("HINT_TOPO_TOOL");
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' --hierarchy 2,2,4 --json | python3 -c 'import json,sys; json.load(sys.stdin)'",
                 tool);
        cr_expect_eq(system(cmd), 0);
    }
}

Test(tool, detected_and_errors)
{
    int st;
    char *out = run_tool("", 0, &st);
    cr_expect_eq(st, 0, "%s", out);
    cr_expect(strstr(out, "detected: 1,") != NULL, "%s", out);
    free(out);
    out = run_tool("--hierarchy 2,0,4", 1, &st);
    cr_expect_eq(st, 2);
    cr_expect(strstr(out, "level 1 has size 0") != NULL, "%s", out);
    free(out);
    out = run_tool("--hierarchy 2,2,4 --order 0,0,1", 1, &st);
    cr_expect_eq(st, 2);
    cr_expect(strstr(out, "level 0 appears twice") != NULL, "%s", out);
    free(out);
    out = run_tool("--hierarchy 2,2,4 --group-size 17", 1, &st);
    cr_expect_eq(st, 2);
    cr_expect(strstr(out, "16 positions") != NULL, "%s", out);
    free(out);
    out = run_tool("--help", 0, &st);
    cr_expect_eq(st, 0);
    cr_expect(strstr(out, "usage: hint-topo") != NULL);
    free(out);
}
