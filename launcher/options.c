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
        "usage: hintrun -n N [options] PROGRAM [ARGS...] [: -n M PROGRAM2 [ARGS...]]...\n"
        "Start N ranks of PROGRAM on this machine (or on hosts) and serve their bootstrap store.\n"
        "\n"
        "  -n, --np N              ranks to start (1..%d in all; with --host, at most the slots,\n"
        "                          and all the slots when -n is not given)\n"
        "  PROG1 ARGS : -n M PROG2 MPMD: one job, one world; ranks of PROG2 follow those of PROG1\n"
        "  --bind-to core|l3|numa|socket|none\n"
        "                          pin each rank to its cores, or to the whole L3, NUMA node or\n"
        "                          socket holding them (default: core when N <= cores, else none)\n"
        "  --cpus-per-rank N       give each rank N consecutive cores (hybrid MPI+threads codes)\n"
        "  --map-by core|l3|numa|socket\n"
        "                          place consecutive ranks on consecutive cores (core), or round\n"
        "                          robin over L3s, NUMA nodes or sockets (the mixed-radix order\n"
        "                          [objects, cores] with objects fastest)\n"
        "  --hierarchy H --order S mixed-radix mapping and binding, e.g. --hierarchy 2,2,4 --order 2,0,1\n"
        "                          (H: level sizes outermost first; S: a permutation of levels, the first\n"
        "                          changing fastest; see hint-topo and docs/TOPOLOGY.md)\n"
        "  --report-bindings       print each rank's cores and cpuset\n"
        "  --shared-heap           preload libhint so that even a program not linked with it gets the\n"
        "                          shared-heap malloc (for programs that load hint later, e.g. by dlopen)\n"
        "  --nodes K               split the ranks into K virtual nodes on this machine: blocks of\n"
        "                          consecutive ranks, sizes differing by at most one, each with its\n"
        "                          own shared memory; bytes between them go through libfabric\n"
        "  --host A[:SLOTS],B[:SLOTS],...\n"
        "                          run the ranks on these hosts (SLOTS ranks each, default 1) as\n"
        "                          blocks of consecutive ranks, one agent per host started through\n"
        "                          the launch agent; each host is a node (HINT_NODE_ID)\n"
        "  --hostfile FILE         hosts from FILE: one a line, 'host slots=N' or 'host:N', # comments\n"
        "  --launch-agent CMD      how to start a host's agent (default: ssh): {host} in CMD is\n"
        "                          replaced by the host, else the host is appended as ssh wants it;\n"
        "                          e.g. --launch-agent 'ip netns exec {host}'\n"
        "  --store-addr ADDR       the IP address of this machine that the hosts reach the store at\n"
        "                          (default: HINT_STORE_ADDR, else the address of the route to the\n"
        "                          first host that is not this machine)\n"
        "  --agent                 internal: what the launch agent starts on each host; it reads\n"
        "                          its job from stdin\n"
        "  --stdin all|none|RANK   which ranks get hintrun's stdin (default: rank 0; the others\n"
        "                          read /dev/null)\n"
        "  --tag-output            prefix each output line with [rank]\n"
        "  --timestamp-output      prefix each output line with the time hintrun read it\n"
        "  --output-filename DIR   write rank N's stdout and stderr to DIR/rank.N/stdout and\n"
        "                          DIR/rank.N/stderr instead of hintrun's\n"
        "  --timeout SECONDS       end the job after SECONDS (exit 124); each rank first says what it\n"
        "                          waits in\n"
        "  -x NAME[=VALUE]         pass an environment variable (NAME alone: hintrun's value)\n"
        "  -h, --help              this text\n"
        "  -V, --version           hintrun's version\n"
        "\n"
        "Exit status: 0 when every rank exits 0; else the first failing rank's status, 128+signal\n"
        "for a rank killed by a signal, 1 for a rank that exits 0 after hint_init without\n"
        "hint_finalize, 124 on timeout, 126/127 when PROGRAM cannot be run, 2 for a usage error,\n"
        "1 when a host's agent cannot be started.\n"
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

enum opt_kind { OPT_NP, OPT_TIMEOUT, OPT_X, OPT_BIND, OPT_NODES, OPT_HIERARCHY, OPT_ORDER,
                OPT_MAP, OPT_CPUS, OPT_STDIN, OPT_OUTDIR, OPT_HOST, OPT_HOSTFILE, OPT_AGENT_CMD,
                OPT_STORE_ADDR };

/* Options that an agent does not get as they are: the front keeps them (--timeout, --stdin, the
   hosts) or rebuilds them (-n, -x with hintrun's values). */
static int opt_front_only(enum opt_kind k)
{
    return k == OPT_NP || k == OPT_TIMEOUT || k == OPT_X || k == OPT_STDIN || k == OPT_HOST ||
           k == OPT_HOSTFILE || k == OPT_AGENT_CMD || k == OPT_STORE_ADDR;
}

/* index of v in names[], or -1 */
static int word_index(const char *v, const char *const names[], int n)
{
    for (int k = 0; k < n; k++)
        if (strcmp(v, names[k]) == 0)
            return k;
    return -1;
}

static int parse_bind_to(const char *v, struct launch_opts *o)
{
    static const char *const names[] = {"core", "none", "l3", "numa", "socket"};
    static const int kinds[] = {LAUNCH_BIND_CORE, LAUNCH_BIND_NONE, LAUNCH_BIND_L3,
                                LAUNCH_BIND_NUMA, LAUNCH_BIND_SOCKET};
    int k = word_index(v, names, 5);
    if (k < 0)
        return usage_error("--bind-to expects core, l3, numa, socket or none, not '%s'", v);
    o->bind = kinds[k];
    return -1;
}

static int parse_map_by(const char *v, struct launch_opts *o)
{
    static const char *const names[] = {"core", "l3", "numa", "socket"};
    static const int kinds[] = {LAUNCH_MAP_CORE, LAUNCH_MAP_L3, LAUNCH_MAP_NUMA, LAUNCH_MAP_SOCKET};
    int k = word_index(v, names, 4);
    if (k < 0)
        return usage_error("--map-by expects core, l3, numa or socket, not '%s'", v);
    o->map_by = kinds[k];
    return -1;
}

/* The rank number itself is checked against N once N is known. */
static int parse_stdin(const char *v, struct launch_opts *o)
{
    if (strcmp(v, "all") == 0 || strcmp(v, "none") == 0) {
        o->stdin_rank = v[0] == 'a' ? LAUNCH_STDIN_ALL : LAUNCH_STDIN_NONE;
        return -1;
    }
    char *end;
    errno = 0;
    long r = strtol(v, &end, 10);
    if (errno || end == v || *end || r < 0 || r >= LAUNCH_MAX_RANKS)
        return usage_error("--stdin expects all, none or a rank, not '%s'", v);
    o->stdin_rank = (int)r;
    return -1;
}

static int parse_nodes(const char *v, struct launch_opts *o)
{
    return parse_count("--nodes", v, 1, LAUNCH_MAX_RANKS, &o->nodes) ? 2 : -1;
}

/* Handles one option that takes a value; returns -1 when done, 0 when argv[*i] was not one of
   these, else an exit status. */
static int parse_valued(int argc, char **argv, int *i, struct launch_opts *o, enum opt_kind *kind)
{
    static const struct { const char *name; int is_short; enum opt_kind kind; } opts[] = {
        {"--np", 0, OPT_NP}, {"-np", 0, OPT_NP}, /* -np: the mpirun habit, before -n */
        {"-n", 1, OPT_NP}, {"--timeout", 0, OPT_TIMEOUT}, {"-x", 1, OPT_X},
        {"--bind-to", 0, OPT_BIND}, {"--nodes", 0, OPT_NODES},
        {"--hierarchy", 0, OPT_HIERARCHY}, {"--order", 0, OPT_ORDER},
        {"--map-by", 0, OPT_MAP}, {"--cpus-per-rank", 0, OPT_CPUS}, {"--stdin", 0, OPT_STDIN},
        {"--output-filename", 0, OPT_OUTDIR}, {"--hostfile", 0, OPT_HOSTFILE},
        {"--host", 0, OPT_HOST}, {"--launch-agent", 0, OPT_AGENT_CMD},
        {"--store-addr", 0, OPT_STORE_ADDR},
    };
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        const char *v = NULL, *name = opts[k].name;
        int m = take_value(argc, argv, i, name, opts[k].is_short, &v);
        if (m == 0)
            continue;
        if (m < 0)
            return usage_error("option %s needs a value", name);
        *kind = opts[k].kind;
        switch (opts[k].kind) {
        case OPT_NP: return parse_count(name, v, 1, LAUNCH_MAX_RANKS, &o->np) ? 2 : -1;
        case OPT_TIMEOUT: return parse_seconds(name, v, &o->timeout) ? 2 : -1;
        case OPT_X: o->xvars[o->nx++] = (char *)v; return -1;
        case OPT_BIND: return parse_bind_to(v, o);
        case OPT_NODES: return parse_nodes(v, o);
        case OPT_HIERARCHY: o->hierarchy = v; return -1;
        case OPT_ORDER: o->order = v; return -1;
        case OPT_MAP: return parse_map_by(v, o);
        case OPT_CPUS: return parse_count(name, v, 1, LAUNCH_MAX_RANKS, &o->cpus_per_rank) ? 2 : -1;
        case OPT_STDIN: o->stdin_given = 1; return parse_stdin(v, o);
        case OPT_HOST: return launch_add_hosts(o, v) ? 2 : -1;
        case OPT_HOSTFILE: return launch_read_hostfile(o, v) ? 2 : -1;
        case OPT_AGENT_CMD:
            if (!*v)
                return usage_error("--launch-agent needs a command");
            o->launch_agent = v;
            return -1;
        case OPT_STORE_ADDR:
            if (!*v)
                return usage_error("--store-addr needs an IP address");
            o->store_addr = v;
            return -1;
        case OPT_OUTDIR:
            if (!*v)
                return usage_error("--output-filename needs a directory");
            o->output_dir = v;
            return -1;
        }
    }
    return 0;
}

/* The programs after the first (`: -n M PROGRAM ARGS...`): argv[*i] is the ':' ending the
   previous one. Only -n is taken per program; everything else applies to the whole job. */
static int parse_more_apps(int argc, char **argv, int i, struct launch_opts *o)
{
    while (i < argc) {
        /* argv[i] is ":" */
        argv[i++] = NULL; /* ends the previous program's argv */
        struct launch_app *a = &o->apps[o->napps];
        *a = (struct launch_app){.first = o->np};
        for (; i < argc && argv[i][0] == '-' && argv[i][1] != '\0'; i++) {
            const char *v = NULL;
            int m = 0;
            static const char *const names[] = {"--np", "-np", "-n"};
            for (int k = 0; k < 3 && m == 0; k++)
                m = take_value(argc, argv, &i, names[k], k == 2, &v);
            if (m < 0)
                return usage_error("option %s needs a value", argv[i]);
            if (m == 0)
                return usage_error("after ':' only -n N may precede a program, not '%s' (options "
                                   "for the whole job go before the first program)", argv[i]);
            if (parse_count("-n", v, 1, LAUNCH_MAX_RANKS, &a->np))
                return 2;
        }
        if (a->np == 0)
            return usage_error("each program after ':' needs its number of ranks: ': -n M PROGRAM'");
        if (i >= argc || strcmp(argv[i], ":") == 0)
            return usage_error("no PROGRAM after ': -n %d'", a->np);
        a->argv = argv + i;
        o->np += a->np;
        o->napps++;
        if (o->np > LAUNCH_MAX_RANKS)
            return usage_error("%d ranks in all; at most %d", o->np, LAUNCH_MAX_RANKS);
        while (i < argc && strcmp(argv[i], ":") != 0)
            i++;
    }
    return -1;
}

/* What the whole command line asks for, once every option is read. */
static int check_combinations(const struct launch_opts *o)
{
    if (o->order && !o->hierarchy)
        return usage_error("--order needs --hierarchy");
    if (o->hierarchy && o->bind == LAUNCH_BIND_NONE)
        return usage_error("--hierarchy places and binds ranks; it cannot go with --bind-to none");
    if (o->hierarchy && (o->bind > LAUNCH_BIND_NONE || o->map_by || o->cpus_per_rank > 1))
        return usage_error("--hierarchy binds each rank to one core; it cannot go with --map-by, "
                           "--cpus-per-rank or --bind-to l3|numa|socket");
    if (o->stdin_rank >= o->np)
        return usage_error("--stdin %d: the job has ranks 0 to %d", o->stdin_rank, o->np - 1);
    if (o->nodes > o->np)
        return usage_error("--nodes %d: a node needs at least one rank, and the job has %d", o->nodes, o->np);
    if (o->nodes > 1 && o->hierarchy)
        return usage_error("--hierarchy describes one machine's cores; virtual nodes (--nodes %d) share "
                           "them, so the two cannot go together", o->nodes);
    if (o->nhosts && o->nodes > 1)
        return usage_error("--nodes %d splits this machine into virtual nodes; with --host or "
                           "--hostfile each host is one node, so the two cannot go together", o->nodes);
    if (o->nhosts && o->stdin_given && o->stdin_rank != LAUNCH_STDIN_NONE)
        return usage_error("--stdin: ranks on other hosts read /dev/null (only --stdin none goes "
                           "with --host or --hostfile)");
    if (!o->nhosts && (o->launch_agent || o->store_addr))
        return usage_error("--launch-agent and --store-addr need --host or --hostfile");
    return -1;
}

int launch_parse_options(int argc, char **argv, struct launch_opts *o)
{
    *o = (struct launch_opts){.np = 0, .nodes = 1, .cpus_per_rank = 1, .argv = argv};
    /* -x may repeat up to once per argument; a program per ':' at most */
    o->xvars = calloc((size_t)argc + 1, sizeof *o->xvars);
    o->apps = calloc((size_t)argc + 1, sizeof *o->apps);
    o->pass = calloc((size_t)argc + 1, 1);
    if (!o->xvars || !o->apps || !o->pass) {
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
        static const char *const flags[] = {"--tag-output", "--shared-heap", "--report-bindings",
                                            "--timestamp-output"};
        int *flag_of[] = {&o->tag_output, &o->shared_heap, &o->report_bindings,
                          &o->timestamp_output};
        int f = word_index(a, flags, 4);
        if (f >= 0) {
            *flag_of[f] = 1;
            o->pass[i] = 1;
            continue;
        }
        if (strcmp(a, "--agent") == 0)
            return usage_error("--agent is internal: a front hintrun with --host starts it through "
                               "the launch agent and writes its job on its stdin");
        enum opt_kind kind = OPT_NP;
        int start = i;
        int rc = parse_valued(argc, argv, &i, o, &kind);
        if (rc == 0)
            return usage_error("unknown option '%s'", a);
        if (rc > 0)
            return rc;
        for (int k = start; k <= i; k++)
            o->pass[k] = !opt_front_only(kind);
    }
    o->optend = i;
    if (o->np == 0 && !o->nhosts)
        return usage_error("the number of ranks is required: -n N");
    if (i >= argc || strcmp(argv[i], ":") == 0)
        return usage_error("no PROGRAM to run");
    o->apps[0] = (struct launch_app){.np = o->np, .first = 0, .argv = argv + i};
    o->napps = 1;
    while (i < argc && strcmp(argv[i], ":") != 0)
        i++;
    int rc = parse_more_apps(argc, argv, i, o);
    if (rc >= 0)
        return rc;
    if (o->nhosts && o->apps[0].np == 0 && o->napps > 1)
        return usage_error("with ':' every program needs its -n, the first one too");
    if (o->nhosts && launch_deal_hosts(o) != 0)
        return 2;
    if (o->apps[0].np == 0)
        o->apps[0].np = o->np; /* --host without -n: every slot */
    if (o->nhosts && !o->stdin_given)
        o->stdin_rank = LAUNCH_STDIN_NONE; /* the front's stdin feeds the agents */
    return check_combinations(o);
}

const struct launch_app *launch_app_of(const struct launch_opts *o, int rank)
{
    int k = 0;
    while (k + 1 < o->napps && rank >= o->apps[k + 1].first)
        k++;
    return &o->apps[k];
}
