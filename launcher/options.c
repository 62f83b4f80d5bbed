/* launcher/options.c — hintrun's command line (the contract is in API.md: never rename). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hint_config.h"
#include "launcher/launch.h"

void launch_usage(FILE *to)
{
    fprintf(to,
        "usage: hintrun -n N [options] PROGRAM [ARGS...]\n"
        "Start N ranks of PROGRAM on this machine and serve their bootstrap store.\n"
        "\n"
        "  -n, --np N              ranks to start (1..%d)\n"
        "  --bind-to core|none     pin each rank (default: core when N <= cores, else none)\n"
        "  --hierarchy H --order S mixed-radix mapping and binding, e.g. --hierarchy 2,2,4 --order 2,0,1\n"
        "                          (H: level sizes outermost first; S: a permutation of levels, the first\n"
        "                          changing fastest; see hint-topo and docs/TOPOLOGY.md)\n"
        "  --report-bindings       print each rank's core\n"
        "  --shared-heap           preload libhint so that even a program not linked with it gets the\n"
        "                          shared-heap malloc (for programs that load hint later, e.g. by dlopen)\n"
        "  --nodes K               split the machine into K virtual nodes (only 1 for now)\n"
        "  --tag-output            prefix each output line with [rank]\n"
        "  --timeout SECONDS       end the job after SECONDS (exit 124); each rank first says what it\n"
        "                          waits in\n"
        "  -x NAME[=VALUE]         pass an environment variable (NAME alone: hintrun's value)\n"
        "  -h, --help              this text\n"
        "  -V, --version           hintrun's version\n"
        "\n"
        "Exit status: 0 when every rank exits 0; else the first failing rank's status, 128+signal\n"
        "for a rank killed by a signal, 1 for a rank that exits 0 after hint_init without\n"
        "hint_finalize, 124 on timeout, 126/127 when PROGRAM cannot be run, 2 for a usage error.\n"
        "A failing rank ends the whole job. See docs/LAUNCHER.md.\n",
        LAUNCH_MAX_RANKS);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "hintrun: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'hintrun --help' for more information.\n");
    va_end(ap);
    return 2;
}

static int parse_count(const char *opt, const char *s, int min, int max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < min || v > max) {
        fprintf(stderr, "hintrun: %s expects an integer from %d to %d, not '%s'\n", opt, min,
                max, s);
        return 2;
    }
    *out = (int)v;
    return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v) || v <= 0 || v > 1e8)
        return usage_error("%s expects a positive number of seconds, not '%s'", opt, s);
    *out = v;
    return 0;
}

/* Matches argv[*i] against a long option that takes a value, in the forms "--opt VALUE" and
   "--opt=VALUE" (short: "-n VALUE" and "-nVALUE"). Returns 1 with *val set, 0 when it is not
   this option, -1 when the value is missing. */
static int take_value(int argc, char **argv, int *i, const char *name, int is_short,
                      const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '\0') {
        if (*i + 1 >= argc)
            return -1;
        *val = argv[++*i];
        return 1;
    }
    if (is_short) {
        *val = a + n;
        return 1;
    }
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    return 0;
}

enum opt_kind { OPT_NP, OPT_TIMEOUT, OPT_X, OPT_BIND, OPT_NODES, OPT_HIERARCHY, OPT_ORDER };

static int parse_bind_to(const char *v, struct launch_opts *o)
{
    if (strcmp(v, "none") == 0 || strcmp(v, "core") == 0) {
        o->bind = strcmp(v, "none") == 0 ? LAUNCH_BIND_NONE : LAUNCH_BIND_CORE;
        return -1;
    }
    return usage_error("--bind-to expects 'core' or 'none', not '%s'", v);
}

static int parse_nodes(const char *v, struct launch_opts *o)
{
    if (parse_count("--nodes", v, 1, LAUNCH_MAX_RANKS, &o->nodes))
        return 2;
    if (o->nodes != 1) {
        fprintf(stderr, "hintrun: --nodes %d: virtual nodes are not implemented yet; only "
                "--nodes 1 is accepted\n", o->nodes);
        return 2;
    }
    return -1;
}

/* Handles one option that takes a value; returns -1 when done, 0 when argv[*i] was not one of
   these, else an exit status. */
static int parse_valued(int argc, char **argv, int *i, struct launch_opts *o)
{
    static const struct { const char *name; int is_short; enum opt_kind kind; } opts[] = {
        {"--np", 0, OPT_NP}, {"-np", 0, OPT_NP}, /* -np: the mpirun habit, before -n */
        {"-n", 1, OPT_NP}, {"--timeout", 0, OPT_TIMEOUT}, {"-x", 1, OPT_X},
        {"--bind-to", 0, OPT_BIND}, {"--nodes", 0, OPT_NODES},
        {"--hierarchy", 0, OPT_HIERARCHY}, {"--order", 0, OPT_ORDER},
    };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        const char *v = NULL, *name = opts[k].name;
        int m = take_value(argc, argv, i, name, opts[k].is_short, &v);
        if (m == 0)
            continue;
        if (m < 0)
            return usage_error("option %s needs a value", name);
        switch (opts[k].kind) {
        case OPT_NP: return parse_count(name, v, 1, LAUNCH_MAX_RANKS, &o->np) ? 2 : -1;
        case OPT_TIMEOUT: return parse_seconds(name, v, &o->timeout) ? 2 : -1;
        case OPT_X: o->xvars[o->nx++] = (char *)v; return -1;
        case OPT_BIND: return parse_bind_to(v, o);
        case OPT_NODES: return parse_nodes(v, o);
        case OPT_HIERARCHY: o->hierarchy = v; return -1;
        case OPT_ORDER: o->order = v; return -1;
        }
    }
    return 0;
}

int launch_parse_options(int argc, char **argv, struct launch_opts *o)
{
    *o = (struct launch_opts){.np = 0, .nodes = 1};
    /* -x may repeat up to once per argument */
    o->xvars = calloc((size_t)argc + 1, sizeof *o->xvars);
    if (!o->xvars) {
        fprintf(stderr, "hintrun: out of memory\n");
        return 1;
    }
    int i = 1;
    for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            launch_usage(stdout);
            return 0;
        }
        if (strcmp(a, "-V") == 0 || strcmp(a, "--version") == 0) {
            printf("hintrun (hint) %s\n", HINT_VERSION);
            return 0;
        }
        if (strcmp(a, "--tag-output") == 0) {
            o->tag_output = 1;
            continue;
        }
        if (strcmp(a, "--shared-heap") == 0) {
            o->shared_heap = 1;
            continue;
        }
        if (strcmp(a, "--report-bindings") == 0) {
            o->report_bindings = 1;
            continue;
        }
        int rc = parse_valued(argc, argv, &i, o);
        if (rc == 0)
            return usage_error("unknown option '%s'", a);
        if (rc > 0)
            return rc;
    }
    if (o->np == 0)
        return usage_error("the number of ranks is required: -n N");
    if (i >= argc)
        return usage_error("no PROGRAM to run");
    if (o->order && !o->hierarchy)
        return usage_error("--order needs --hierarchy");
    if (o->hierarchy && o->bind == LAUNCH_BIND_NONE)
        return usage_error("--hierarchy places and binds ranks; it cannot go with --bind-to none");
    o->prog_argv = argv + i;
    return -1;
}
