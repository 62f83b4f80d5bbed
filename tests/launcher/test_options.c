/*
 * tests/launcher/test_options.c — hintrun's job-shaping options with real ranks: --stdin,
 * MPMD (`-n 1 a : -n 2 b`), --output-filename, --timestamp-output, --bind-to
 * core|l3|numa|socket, --cpus-per-rank, --map-by and --report-bindings. Cpusets are read back
 * from each rank's /proc/self/status and compared with hwloc's objects; the map-by cases that
 * need more than this machine's one socket run on a synthetic hwloc topology (HWLOC_SYNTHETIC),
 * where only the plan --report-bindings prints can be checked.
 */
#include <criterion/criterion.h>
#include <hwloc.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lt_util.h"

#define RUN(r, ...)                                                                 \
    do {                                                                            \
        const char *const args_[] = {__VA_ARGS__, NULL};                            \
        cr_assert_eq(lt_run(r, args_, NULL, NULL), 0, "cannot spawn %s", lt_hintrun()); \
    } while (0)
#define RUN_IN(r, input, ...)                                                       \
    do {                                                                            \
        const char *const args_[] = {__VA_ARGS__, NULL};                            \
        cr_assert_eq(lt_run_input(r, args_, input), 0, "cannot spawn %s", lt_hintrun()); \
    } while (0)

/* each rank prints "R<rank>:<its stdin, newlines as commas>" */
#define ECHO_STDIN "sh", "-c", "printf 'R%s:%s\\n' \"$HINT_RANK\" \"$(tr '\\n' ,)\""

/* ---------------------------------------------------------------- --stdin */

static void expect_line(const char *out, const char *line)
{
    char want[256];
    snprintf(want, sizeof want, "%s\n", line);
    cr_expect(strstr(out, want), "expected the line '%s' in:\n%s", line, out);
}

Test(stdin, rank0_by_default)
{
    struct lt_run r;
    RUN_IN(&r, "hello\nworld\n", "-n", "3", ECHO_STDIN);
    cr_expect_eq(r.status, 0, "%s", r.err);
    expect_line(r.out, "R0:hello,world,");
    expect_line(r.out, "R1:");
    expect_line(r.out, "R2:");
    lt_run_free(&r);
}

Test(stdin, all_none_and_one_rank)
{
    struct lt_run r;
    RUN_IN(&r, "x\n", "-n", "3", "--stdin", "all", ECHO_STDIN);
    cr_expect_eq(r.status, 0, "%s", r.err);
    for (int k = 0; k < 3; k++) {
        char l[16];
        snprintf(l, sizeof l, "R%d:x,", k);
        expect_line(r.out, l);
    }
    lt_run_free(&r);
    RUN_IN(&r, "x\n", "-n", "2", "--stdin", "none", ECHO_STDIN);
    expect_line(r.out, "R0:");
    expect_line(r.out, "R1:");
    lt_run_free(&r);
    RUN_IN(&r, "y\n", "-n", "3", "--stdin=2", ECHO_STDIN);
    expect_line(r.out, "R0:");
    expect_line(r.out, "R1:");
    expect_line(r.out, "R2:y,");
    lt_run_free(&r);
}

/* More than one 64 KiB block, to every rank, and to ranks that do not read it all. */
Test(stdin, large_input_reaches_every_rank)
{
    size_t n = 1000000;
    char *big = malloc(n + 1);
    cr_assert(big);
    for (size_t i = 0; i < n; i++)
        big[i] = i % 61 == 60 ? '\n' : (char)('a' + i % 26);
    big[n] = '\0';
    struct lt_run r;
    RUN_IN(&r, big, "-n", "2", "--stdin", "all", "sh", "-c", "echo R$HINT_RANK $(cksum)");
    char sum[128]; /* cksum of the input, computed the same way */
    char path[] = "/tmp/lt_stdin_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, big, n), (ssize_t)n);
    close(fd);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "cksum < %s", path);
    FILE *p = popen(cmd, "r");
    cr_assert(p && fgets(sum, sizeof sum, p));
    pclose(p);
    unlink(path);
    sum[strcspn(sum, "\n")] = '\0';
    char l[192];
    for (int k = 0; k < 2; k++) {
        snprintf(l, sizeof l, "R%d %s", k, sum);
        expect_line(r.out, l);
    }
    lt_run_free(&r);
    /* a rank that reads nothing and exits must not stop the job or the others */
    RUN_IN(&r, big, "-n", "2", "--stdin", "all", "sh", "-c",
           "if [ $HINT_RANK = 0 ]; then exit 0; fi; echo R$HINT_RANK $(cksum)");
    cr_expect_eq(r.status, 0, "%s", r.err);
    snprintf(l, sizeof l, "R1 %s", sum);
    expect_line(r.out, l);
    lt_run_free(&r);
    free(big);
}

static void expect_usage(const char *const args[], const char *msg)
{
    struct lt_run r;
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 2, "status %d, stderr: %s", r.status, r.err);
    cr_expect(strstr(r.err, msg), "expected '%s' in stderr: %s", msg, r.err);
    lt_run_free(&r);
}

Test(stdin, bad_values)
{
    expect_usage((const char *[]){"-n", "2", "--stdin", "2", "true", NULL}, "ranks 0 to 1");
    expect_usage((const char *[]){"-n", "2", "--stdin", "some", "true", NULL}, "all, none or a rank");
    expect_usage((const char *[]){"-n", "2", "--stdin", "-1", "true", NULL}, "not '-1'");
}

/* ---------------------------------------------------------------- MPMD */

Test(mpmd, one_world_of_two_programs)
{
    struct lt_run r;
    /* the store's put/get/fence among all three ranks: one job, one world */
    RUN(&r, "-n", "1", lt_rank(), "kv", "3", ":", "-n", "2", lt_rank(), "kv", "3");
    cr_expect_eq(r.status, 0, "%s", r.err);
    for (int k = 0; k < 3; k++) {
        char l[64];
        snprintf(l, sizeof l, "kv ok rank %d size 3", k);
        expect_line(r.out, l);
    }
    lt_run_free(&r);
    RUN(&r, "-n", "2", "sh", "-c", "echo A $HINT_RANK $HINT_SIZE", ":", "--np", "1", "sh", "-c",
        "echo B $HINT_RANK $HINT_SIZE $0", "arg");
    cr_expect_eq(r.status, 0, "%s", r.err);
    expect_line(r.out, "A 0 3");
    expect_line(r.out, "A 1 3");
    expect_line(r.out, "B 2 3 arg");
    cr_expect_eq(lt_count(r.out, "\n"), 3, "%s", r.out);
    lt_run_free(&r);
}

Test(mpmd, failure_of_the_second_program_ends_the_job)
{
    struct lt_run r;
    RUN(&r, "-n", "1", lt_rank(), "sleep", ":", "-n", "1", "sh", "-c", "exit 3");
    cr_expect_eq(r.status, 3, "%s", r.err);
    cr_expect(strstr(r.err, "rank 1 (pid"), "%s", r.err);
    lt_run_free(&r);
}

Test(mpmd, errors)
{
    expect_usage((const char *[]){"-n", "1", "true", ":", "true", NULL}, "needs its number of ranks");
    expect_usage((const char *[]){"-n", "1", "true", ":", NULL}, "needs its number of ranks");
    expect_usage((const char *[]){"-n", "1", "true", ":", "-n", "2", NULL}, "no PROGRAM after ': -n 2'");
    expect_usage((const char *[]){"-n", "1", "true", ":", "-x", "A=1", "true", NULL}, "only -n N");
    expect_usage((const char *[]){"-n", "1", ":", "-n", "1", "true", NULL}, "no PROGRAM");
    expect_usage((const char *[]){"-n", "4000", "true", ":", "-n", "97", "true", NULL}, "at most 4096");
    /* a missing second program is found before anything starts */
    struct lt_run r;
    RUN(&r, "-n", "1", "true", ":", "-n", "1", "/nonexistent/prog");
    cr_expect_eq(r.status, 127, "%s", r.err);
    lt_run_free(&r);
}

/* ---------------------------------------------------------------- output */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = calloc(1, 65536);
    size_t n = fread(buf, 1, 65535, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

Test(output_files, per_rank_files)
{
    char dir[] = "/tmp/lt_outdir_XXXXXX";
    cr_assert(mkdtemp(dir));
    char sub[64];
    snprintf(sub, sizeof sub, "%s/a/b", dir); /* created as needed */
    struct lt_run r;
    RUN(&r, "-n", "2", "--output-filename", sub, "--tag-output", "sh", "-c",
        "echo out $HINT_RANK; echo err $HINT_RANK >&2; printf unfinished");
    cr_expect_eq(r.status, 0, "%s", r.err);
    cr_expect_eq(r.out[0], '\0', "nothing on hintrun's stdout: %s", r.out);
    for (int k = 0; k < 2; k++) {
        char p[128], want[64];
        snprintf(p, sizeof p, "%s/rank.%d/stdout", sub, k);
        char *s = slurp(p);
        snprintf(want, sizeof want, "[%d] out %d\n[%d] unfinished\n", k, k, k);
        cr_expect(s && strcmp(s, want) == 0, "%s holds '%s', want '%s'", p, s ? s : "(none)", want);
        free(s);
        unlink(p);
        snprintf(p, sizeof p, "%s/rank.%d/stderr", sub, k);
        s = slurp(p);
        snprintf(want, sizeof want, "[%d] err %d\n", k, k);
        cr_expect(s && strcmp(s, want) == 0, "%s holds '%s'", p, s ? s : "(none)");
        free(s);
        unlink(p);
        snprintf(p, sizeof p, "%s/rank.%d", sub, k);
        rmdir(p);
    }
    lt_run_free(&r);
    char p[128];
    snprintf(p, sizeof p, "%s/a/b", dir);
    rmdir(p);
    snprintf(p, sizeof p, "%s/a", dir);
    rmdir(p);
    cr_expect_eq(rmdir(dir), 0, "%s is left with files hintrun should not have made", dir);
    RUN(&r, "-n", "1", "--output-filename", "/proc/self/none", "true");
    cr_expect_eq(r.status, 1);
    cr_expect(strstr(r.err, "--output-filename: cannot create /proc/self/none/rank.0"), "%s", r.err);
    lt_run_free(&r);
}

Test(output_files, timestamps)
{
    struct lt_run r;
    RUN(&r, "-n", "2", "--timestamp-output", "--tag-output", "sh", "-c",
        "echo one; echo two >&2; echo three");
    cr_expect_eq(r.status, 0, "%s", r.err);
    regex_t re;
    cr_assert_eq(regcomp(&re, "^\\[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\] "
                              "\\[[01]\\] (one|two|three)$", REG_EXTENDED | REG_NOSUB), 0);
    int lines = 0;
    for (int k = 0; k < 2; k++) {
        char *copy = strdup(k ? r.err : r.out), *save = NULL;
        for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
            cr_expect_eq(regexec(&re, l, 0, NULL, 0), 0, "not a timestamped line: '%s'", l);
            lines++;
        }
        free(copy);
    }
    cr_expect_eq(lines, 6);
    regfree(&re);
    lt_run_free(&r);
}

/* ---------------------------------------------------------------- binding */

#define SHOW_CPUS "sh", "-c", "echo R$HINT_RANK $(grep Cpus_allowed_list /proc/self/status | cut -f2)"

static hwloc_topology_t topo;

static void topo_load(void)
{
    cr_assert_eq(hwloc_topology_init(&topo), 0);
    cr_assert_eq(hwloc_topology_load(topo), 0);
}

static void topo_free(void)
{
    hwloc_topology_destroy(topo);
}

static int ncores(void)
{
    return hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
}

/* hwloc's list of the PUs of the object of type that holds core (the core itself for CORE) */
static void cpus_of(hwloc_obj_type_t type, int core, char *buf, size_t cap)
{
    hwloc_obj_t c = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, (unsigned)core);
    cr_assert(c);
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int n = hwloc_get_nbobjs_by_type(topo, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, (unsigned)i);
        if (hwloc_bitmap_intersects(o->cpuset, c->cpuset))
            hwloc_bitmap_or(set, set, o->cpuset);
    }
    hwloc_bitmap_and(set, set, hwloc_topology_get_allowed_cpuset(topo));
    hwloc_bitmap_list_snprintf(buf, cap, set);
    hwloc_bitmap_free(set);
}

/* Each rank r's allowed CPUs are those of the object of type around core core_of(r), and
   --report-bindings says that cpuset. */
static void expect_bound(const struct lt_run *r, int np, hwloc_obj_type_t type, int step)
{
    for (int k = 0; k < np; k++) {
        char want[128], line[192];
        cpus_of(type, (k * step) % ncores(), want, sizeof want);
        snprintf(line, sizeof line, "R%d %s", k, want);
        expect_line(r->out, line);
        snprintf(line, sizeof line, "hintrun: rank %d (pid ", k);
        cr_expect(strstr(r->err, line), "%s", r->err);
        snprintf(line, sizeof line, ", cpuset %s\n", want);
        cr_expect(strstr(r->err, line), "--report-bindings does not say cpuset %s:\n%s", want, r->err);
    }
}

Test(binding, core_and_cpus_per_rank, .init = topo_load, .fini = topo_free)
{
    struct lt_run r;
    if (ncores() < 2)
        cr_skip_test("needs 2 cores, this machine has %d", ncores());
    RUN(&r, "-n", "2", "--bind-to", "core", "--report-bindings", SHOW_CPUS);
    cr_expect_eq(r.status, 0, "%s", r.err);
    expect_bound(&r, 2, HWLOC_OBJ_CORE, 1);
    cr_expect(strstr(r.err, "bound to core 1, cpuset"), "%s", r.err);
    lt_run_free(&r);
    /* a hybrid rank: both cores */
    RUN(&r, "-n", "1", "--cpus-per-rank", "2", "--report-bindings", SHOW_CPUS);
    cr_expect_eq(r.status, 0, "%s", r.err);
    char c0[64], c1[64], want[160];
    cpus_of(HWLOC_OBJ_CORE, 0, c0, sizeof c0);
    cpus_of(HWLOC_OBJ_CORE, 1, c1, sizeof c1);
    hwloc_bitmap_t a = hwloc_bitmap_alloc(), b = hwloc_bitmap_alloc();
    hwloc_bitmap_list_sscanf(a, c0);
    hwloc_bitmap_list_sscanf(b, c1);
    hwloc_bitmap_or(a, a, b);
    char both[64];
    hwloc_bitmap_list_snprintf(both, sizeof both, a);
    hwloc_bitmap_free(a);
    hwloc_bitmap_free(b);
    snprintf(want, sizeof want, "R0 %s", both);
    expect_line(r.out, want);
    cr_expect(strstr(r.err, "bound to cores 0-1"), "%s", r.err);
    lt_run_free(&r);
    /* too many cores asked for: errors with the numbers */
    char too[16];
    snprintf(too, sizeof too, "%d", ncores() + 1);
    RUN(&r, "-n", "1", "--cpus-per-rank", too, "true");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "only"), "%s", r.err);
    lt_run_free(&r);
    RUN(&r, "-n", "2", "--cpus-per-rank", "2", "--bind-to", "core", "true");
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "need 4 cores"), "%s", r.err);
    lt_run_free(&r);
}

static void bind_to_object(const char *name, hwloc_obj_type_t type)
{
    struct lt_run r;
    int n = ncores() + 1; /* more ranks than cores: allowed, they share the object */
    char np[16];
    snprintf(np, sizeof np, "%d", n);
    int nobj = hwloc_get_nbobjs_by_type(topo, type);
    RUN(&r, "-n", np, "--bind-to", name, "--report-bindings", SHOW_CPUS);
    if (nobj == 0) {
        /* e.g. a VM whose hwloc shows no L3: a clear refusal */
        cr_expect_eq(r.status, 2, "%s", r.err);
        cr_expect(strstr(r.err, "hwloc shows no"), "%s", r.err);
    } else {
        cr_expect_eq(r.status, 0, "%s", r.err);
        expect_bound(&r, n, type, 1);
        char what[64];
        snprintf(what, sizeof what, "bound to %s ", name);
        cr_expect(strstr(r.err, what), "%s", r.err);
    }
    lt_run_free(&r);
}

Test(binding, socket, .init = topo_load, .fini = topo_free) { bind_to_object("socket", HWLOC_OBJ_PACKAGE); }
Test(binding, numa, .init = topo_load, .fini = topo_free) { bind_to_object("numa", HWLOC_OBJ_NUMANODE); }
Test(binding, l3, .init = topo_load, .fini = topo_free) { bind_to_object("l3", HWLOC_OBJ_L3CACHE); }

Test(binding, map_by_on_this_machine, .init = topo_load, .fini = topo_free)
{
    /* one socket: round robin over sockets is filling cores */
    struct lt_run r;
    if (ncores() < 2)
        cr_skip_test("needs 2 cores");
    RUN(&r, "-n", "2", "--map-by", "socket", "--report-bindings", SHOW_CPUS);
    cr_expect_eq(r.status, 0, "%s", r.err);
    expect_bound(&r, 2, HWLOC_OBJ_CORE, 1);
    lt_run_free(&r);
    expect_usage((const char *[]){"-n", "1", "--map-by", "board", "true", NULL}, "core, l3, numa or socket");
    expect_usage((const char *[]){"-n", "1", "--bind-to", "board", "true", NULL}, "core, l3, numa, socket or none");
    expect_usage((const char *[]){"-n", "1", "--hierarchy", "1,2", "--map-by", "socket", "true", NULL},
                 "cannot go with --map-by");
}

/* The plan on a machine of 2 sockets x 2 NUMA x 2 cores (hwloc's synthetic topology: the
   ranks cannot really be bound there, so only the report is checked). */
static void synthetic(struct lt_run *r, const char *const args[])
{
    const char *const env[] = {"HWLOC_SYNTHETIC=pack:2 numa:2 core:2 pu:1", NULL};
    cr_assert_eq(lt_run(r, args, env, NULL), 0);
    cr_expect_eq(r->status, 0, "%s", r->err);
}

Test(binding, map_by_mixed_radix_orders)
{
    struct lt_run r;
    /* map-by socket = hierarchy [2 sockets, 4 cores] with sockets fastest */
    synthetic(&r, (const char *[]){"-n", "4", "--map-by", "socket", "--report-bindings", "true", NULL});
    const int sock[] = {0, 4, 1, 5};
    for (int k = 0; k < 4; k++) {
        char l[96];
        snprintf(l, sizeof l, "rank %d (pid", k);
        cr_expect(strstr(r.err, l), "%s", r.err);
        snprintf(l, sizeof l, "bound to core %d, cpuset %d\n", sock[k], sock[k]);
        const char *at = strstr(r.err, l);
        cr_expect(at, "rank %d: expected '%s' in %s", k, l, r.err);
    }
    lt_run_free(&r);
    /* map-by numa: 4 NUMA nodes of 2 cores, round robin; bound to the socket around */
    synthetic(&r, (const char *[]){"-n", "5", "--map-by", "numa", "--bind-to", "socket",
                                   "--report-bindings", "true", NULL});
    const char *want[] = {"socket 0 (core 0), cpuset 0-3", "socket 0 (core 2), cpuset 0-3",
                          "socket 1 (core 4), cpuset 4-7", "socket 1 (core 6), cpuset 4-7",
                          "socket 0 (core 1), cpuset 0-3"};
    for (int k = 0; k < 5; k++)
        cr_expect(strstr(r.err, want[k]), "rank %d: expected '%s' in %s", k, want[k], r.err);
    lt_run_free(&r);
    /* hybrid: 2 cores a rank, one rank per socket, bound to its NUMA node */
    synthetic(&r, (const char *[]){"-n", "2", "--map-by", "socket", "--cpus-per-rank", "2",
                                   "--bind-to", "numa", "--report-bindings", "true", NULL});
    cr_expect(strstr(r.err, "rank 0 (pid") && strstr(r.err, "numa 0 (cores 0-1), cpuset 0-1"), "%s", r.err);
    cr_expect(strstr(r.err, "numa 2 (cores 4-5), cpuset 4-5"), "%s", r.err);
    lt_run_free(&r);
    /* slots that do not divide the objects */
    const char *const env[] = {"HWLOC_SYNTHETIC=pack:2 numa:2 core:2 pu:1", NULL};
    cr_assert_eq(lt_run(&r, (const char *[]){"-n", "2", "--map-by", "numa", "--cpus-per-rank", "3",
                                             "true", NULL}, env, NULL), 0);
    cr_expect_eq(r.status, 2);
    cr_expect(strstr(r.err, "8 cores over 4 numas do not split into slots of 3"), "%s", r.err);
    lt_run_free(&r);
}
