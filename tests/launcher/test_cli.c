/* tests/launcher/test_cli.c — hintrun's command line: options, errors, PROGRAM checks. */
#include <criterion/criterion.h>
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

Test(cli, help)
{
    struct lt_run r;
    RUN(&r, "--help");
    cr_expect_eq(r.status, 0);
    const char *opts[] = {"usage: hintrun -n N", "--np", "--bind-to core|l3|numa|socket|none",
                          "--hierarchy", "--order", "--report-bindings", "--tag-output",
                          "--timeout", "-x NAME[=VALUE]", "--version", "--stdin all|none|RANK",
                          ": -n M PROGRAM2", "--output-filename DIR", "--timestamp-output",
                          "--cpus-per-rank N", "--map-by core|l3|numa|socket"};
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        cr_expect(strstr(r.out, opts[i]), "--help does not mention %s:\n%s", opts[i], r.out);
    lt_run_free(&r);
}

Test(cli, version)
{
    struct lt_run r;
    RUN(&r, "--version");
    cr_expect_eq(r.status, 0);
    cr_expect(strstr(r.out, "hintrun (hint) 0."), "version output: %s", r.out);
    lt_run_free(&r);
}

/* Each bad command line: exit 2 and a message that says what is wrong. */
static void expect_usage_error(const char *const args[], const char *msg)
{
    struct lt_run r;
    cr_assert_eq(lt_run(&r, args, NULL, NULL), 0);
    cr_expect_eq(r.status, 2, "%s: status %d, stderr: %s", args[0], r.status, r.err);
    cr_expect(strstr(r.err, msg), "expected '%s' in stderr: %s", msg, r.err);
    cr_expect_eq(r.out[0], '\0', "nothing on stdout, got %s", r.out);
    lt_run_free(&r);
}

Test(cli, bad_values)
{
    expect_usage_error((const char *[]){"-n", "0", "true", NULL}, "from 1 to");
    expect_usage_error((const char *[]){"-n", "abc", "true", NULL}, "not 'abc'");
    expect_usage_error((const char *[]){"-n", "4x", "true", NULL}, "not '4x'");
    expect_usage_error((const char *[]){"-n", "-3", "true", NULL}, "not '-3'");
    expect_usage_error((const char *[]){"-n", "99999999", "true", NULL}, "from 1 to");
    expect_usage_error((const char *[]){"-n", NULL}, "needs a value");
    expect_usage_error((const char *[]){"--timeout", "0", "-n", "1", "true", NULL}, "positive");
    expect_usage_error((const char *[]){"--timeout", "soon", "-n", "1", "true", NULL}, "soon");
    expect_usage_error((const char *[]){"-n", "1", "--frobnicate", "true", NULL}, "unknown option");
    expect_usage_error((const char *[]){"-n", "2", NULL}, "no PROGRAM");
    expect_usage_error((const char *[]){"true", NULL}, "-n N");
    expect_usage_error((const char *[]){"-n", "1", "-x", "1BAD=x", "true", NULL}, "not a valid");
    expect_usage_error((const char *[]){"-n", "1", "-x", "HINT_RANK=5", "true", NULL},
                       "sets this variable itself");
}

Test(cli, placement_errors)
{
    expect_usage_error((const char *[]){"-n", "1", "--bind-to", "board", "true", NULL},
                       "core, l3, numa, socket or none");
    expect_usage_error((const char *[]){"-n", "2", "--hierarchy", "3", "true", NULL},
                       "hierarchy 3");
    expect_usage_error((const char *[]){"-n", "1", "--order", "1,0", "true", NULL},
                       "--order needs --hierarchy");
    expect_usage_error((const char *[]){"-n", "2", "--hierarchy", "1,2", "--bind-to", "none", "true", NULL},
                       "cannot go with --bind-to none");
    expect_usage_error((const char *[]){"-n", "1", "--hierarchy", "1,y", "true", NULL}, "--hierarchy 1,y");
    expect_usage_error((const char *[]){"--nodes", "3", "-n", "2", "true", NULL},
                       "--nodes 3: a node needs at least one rank");
    expect_usage_error((const char *[]){"--nodes", "0", "-n", "2", "true", NULL}, "--nodes");
    expect_usage_error((const char *[]){"--nodes", "2", "-n", "2", "--hierarchy", "1,2", "true", NULL},
                       "cannot go together");
}

/* Accepted spellings all start the job. */
Test(cli, accepted_forms)
{
    const char *const forms[][8] = {
        {"-n", "2", "true", NULL},
        {"-n2", "true", NULL},
        {"--np", "2", "true", NULL},
        {"--np=2", "true", NULL},
        {"-np", "2", "true", NULL},
        {"-n", "2", "--bind-to", "none", "--nodes", "1", "true", NULL},
        {"-n", "3", "--nodes", "2", "true", NULL},
        {"-n", "1", "--timeout=30", "--", "true", NULL},
    };
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
        struct lt_run r;
        cr_assert_eq(lt_run(&r, forms[i], NULL, NULL), 0);
        cr_expect_eq(r.status, 0, "form %zu: status %d: %s", i, r.status, r.err);
        lt_run_free(&r);
    }
}

/* Options after PROGRAM belong to PROGRAM. */
Test(cli, program_args_untouched)
{
    struct lt_run r;
    RUN(&r, "-n", "1", "echo", "-n", "--tag-output", "-x");
    cr_expect_eq(r.status, 0);
    cr_expect_str_eq(r.out, "--tag-output -x");
    lt_run_free(&r);
}

Test(cli, missing_program)
{
    struct lt_run r;
    RUN(&r, "-n", "2", "/nonexistent/dir/prog");
    cr_expect_eq(r.status, 127);
    cr_expect(strstr(r.err, "/nonexistent/dir/prog"), "message names the path: %s", r.err);
    cr_expect(strstr(r.err, "no such file"), "%s", r.err);
    lt_run_free(&r);
    RUN(&r, "-n", "2", "no-such-program-hint-test");
    cr_expect_eq(r.status, 127);
    cr_expect(strstr(r.err, "no-such-program-hint-test") && strstr(r.err, "PATH"), "%s", r.err);
    lt_run_free(&r);
}

Test(cli, not_executable)
{
    char dir[] = "/tmp/hint-lt-XXXXXX", file[64];
    cr_assert(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/data", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs("not a program\n", f);
    fclose(f);
    chmod(file, 0644);
    struct lt_run r;
    RUN(&r, "-n", "2", file);
    cr_expect_eq(r.status, 126);
    cr_expect(strstr(r.err, file) && strstr(r.err, "permission denied"), "%s", r.err);
    lt_run_free(&r);
    RUN(&r, "-n", "1", dir); /* a directory */
    cr_expect_eq(r.status, 126);
    cr_expect(strstr(r.err, dir), "%s", r.err);
    lt_run_free(&r);
    unlink(file);
    rmdir(dir);
}

/* PROGRAM passes the checks but exec fails in the rank (bad interpreter): the rank's status. */
Test(cli, exec_fails_in_rank)
{
    char dir[] = "/tmp/hint-lt-XXXXXX", file[64];
    cr_assert(mkdtemp(dir));
    snprintf(file, sizeof file, "%s/script", dir);
    FILE *f = fopen(file, "w");
    cr_assert(f);
    fputs("#!/nonexistent/interpreter\n", f);
    fclose(f);
    chmod(file, 0755);
    struct lt_run r;
    RUN(&r, "-n", "2", file);
    cr_expect_eq(r.status, 127, "%s", r.err);
    cr_expect(strstr(r.err, "cannot execute") && strstr(r.err, file), "%s", r.err);
    cr_expect(strstr(r.err, "exited with status 127"), "%s", r.err);
    lt_run_free(&r);
    unlink(file);
    rmdir(dir);
}
