/*
 * tests/unit/test_config.c — the configuration table and its parsers (runtime/config.c,
 * runtime/envdoc.c): sizes, integers and seconds at their edges and with garbage; every row is
 * well formed and its default parses; the readers take range and default from the row; a
 * malformed value makes rt_cfg_check_all (what hint_init calls) fail with a message naming it.
 * Criterion runs each test in its own process, so setenv does not leak between tests.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/envdoc.h"
#include "runtime/runtime.h"

static size_t size_of(const char *s)
{
    size_t v = 12345;
    cr_assert_eq(rt_parse_size(s, &v), HINT_SUCCESS, "\"%s\" should be a size", s);
    return v;
}

static void not_a_size(const char *s)
{
    size_t v = 777;
    cr_expect_eq(rt_parse_size(s, &v), HINT_ERR_ARG, "\"%s\" should not be a size", s);
    cr_expect_eq(v, 777, "a rejected \"%s\" must leave the result alone", s);
}

Test(config, size_plain_and_suffixes)
{
    cr_expect_eq(size_of("0"), 0);
    cr_expect_eq(size_of("4096"), 4096);
    cr_expect_eq(size_of("4096B"), 4096);
    cr_expect_eq(size_of("64K"), 64 << 10);
    cr_expect_eq(size_of("64k"), 64 << 10);
    cr_expect_eq(size_of("64KiB"), 64 << 10);
    cr_expect_eq(size_of("64KB"), 64 << 10);
    cr_expect_eq(size_of("48M"), (size_t)48 << 20);
    cr_expect_eq(size_of("2MiB"), (size_t)2 << 20);
    cr_expect_eq(size_of("1G"), (size_t)1 << 30);
    cr_expect_eq(size_of("1.5G"), (size_t)3 << 29);
    cr_expect_eq(size_of("0.5K"), 512);
    cr_expect_eq(size_of("2T"), (size_t)2 << 40);
    cr_expect_eq(size_of("010"), 10, "decimal, never octal");
}

Test(config, size_garbage)
{
    const char *bad[] = {"", "12abc", "abc", "-1", "+5", " 5", "5 ", "K", "1.5", "1.K", ".5K", "1e3", "1KK",
                         "1Kx", "0x10", "5 M", "1P", "99999999999999999999", "20000000T", NULL};
    for (int i = 0; bad[i]; i++)
        not_a_size(bad[i]);
    not_a_size(NULL);
}

Test(config, size_edges)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%zu", SIZE_MAX);
    cr_expect_eq(size_of(buf), SIZE_MAX);
    snprintf(buf, sizeof buf, "%zu0", SIZE_MAX);
    not_a_size(buf);
    cr_expect_eq(size_of("16777215T"), (size_t)16777215 << 40);
    not_a_size("16777216T"); /* 2^64 bytes */
}

Test(config, int_ranges)
{
    long long v = 0;
    cr_expect_eq(rt_parse_int("0", 0, 10, &v), HINT_SUCCESS);
    cr_expect_eq(rt_parse_int("10", 0, 10, &v), HINT_SUCCESS);
    cr_expect_eq(v, 10);
    cr_expect_eq(rt_parse_int("-3", -5, 10, &v), HINT_SUCCESS);
    cr_expect_eq(v, -3);
    cr_expect_eq(rt_parse_int("010", 0, 100, &v), HINT_SUCCESS);
    cr_expect_eq(v, 10, "base 10: 010 is ten");
    const char *bad[] = {"", "-3", "11", "12abc", "0x5", " 1", "1 ", "+", "-", "1.0", "99999999999999999999", NULL};
    for (int i = 0; bad[i]; i++) {
        v = 42;
        cr_expect_eq(rt_parse_int(bad[i], 0, 10, &v), HINT_ERR_ARG, "\"%s\" in [0, 10]", bad[i]);
        cr_expect_eq(v, 42);
    }
}

Test(config, seconds)
{
    double v = 0;
    cr_expect_eq(rt_parse_seconds("2.5", 0, 10, &v), HINT_SUCCESS);
    cr_expect_float_eq(v, 2.5, 1e-12);
    cr_expect_eq(rt_parse_seconds("3s", 0, 10, &v), HINT_SUCCESS);
    cr_expect_float_eq(v, 3.0, 1e-12);
    cr_expect_eq(rt_parse_seconds(".5", 0, 10, &v), HINT_SUCCESS);
    const char *bad[] = {"", "-1", "11", "nan", "inf", "2m", "abc", "1e999", " 1", NULL};
    for (int i = 0; bad[i]; i++)
        cr_expect_eq(rt_parse_seconds(bad[i], 0, 10, &v), HINT_ERR_ARG, "\"%s\" seconds in [0, 10]", bad[i]);
}

/* Every row: a HINT_ name, a meaning, choices for an enum, a sane range, a default that its own
   parser accepts, and no name twice. */
Test(config, table_rows_are_well_formed)
{
    cr_assert_gt(rt_env_nvars, 20);
    for (int i = 0; i < rt_env_nvars; i++) {
        const struct rt_env_var *v = &rt_env_vars[i];
        cr_expect_eq(strncmp(v->name, "HINT_", 5), 0, "%s", v->name);
        cr_expect(v->meaning && *v->meaning, "%s has no meaning", v->name);
        cr_expect(v->dflt != NULL, "%s: dflt must be \"\" rather than NULL", v->name);
        for (int j = 0; j < i; j++)
            cr_expect_neq(strcmp(rt_env_vars[j].name, v->name), 0, "%s has two rows", v->name);
        cr_expect_eq(rt_env_find(v->name), v);
        if (v->kind == RT_ENV_ENUM)
            cr_expect(v->choices && v->choices[0] && v->choices[1], "%s: an enum needs two names", v->name);
        if (v->kind == RT_ENV_INT || v->kind == RT_ENV_SIZE || v->kind == RT_ENV_SECONDS)
            cr_expect_leq(v->min, v->max, "%s", v->name);
        if (*v->dflt == '\0')
            continue;
        /* the default is read through the parser when the variable is unset */
        unsetenv(v->name);
        setenv(v->name, v->dflt, 1);
        cr_expect_eq(rt_cfg_check_all(), HINT_SUCCESS, "%s's default \"%s\" is not accepted by its row", v->name,
                     v->dflt);
        unsetenv(v->name);
    }
    cr_expect_null(rt_env_find("HINT_NO_SUCH_THING"));
}

Test(config, readers_use_the_row)
{
    unsetenv("HINT_WAIT_SPIN_US");
    cr_expect_eq(rt_cfg_long("HINT_WAIT_SPIN_US"), 50); /* the table default; wait.c uses 0 when oversubscribed */
    cr_expect_not(rt_cfg_given("HINT_WAIT_SPIN_US"));
    setenv("HINT_WAIT_SPIN_US", "250", 1);
    cr_expect_eq(rt_cfg_long("HINT_WAIT_SPIN_US"), 250);
    cr_expect(rt_cfg_given("HINT_WAIT_SPIN_US"));

    unsetenv("HINT_WAIT_YIELD_US");
    cr_expect_eq(rt_cfg_long_or("HINT_WAIT_YIELD_US", 200), 200, "a computed default when unset");
    setenv("HINT_WAIT_YIELD_US", "7", 1);
    cr_expect_eq(rt_cfg_long_or("HINT_WAIT_YIELD_US", 200), 7);

    unsetenv("HINT_SHM_BUDGET");
    cr_expect_eq(rt_cfg_size("HINT_SHM_BUDGET"), (size_t)48 << 20);
    setenv("HINT_SHM_BUDGET", "4M", 1);
    cr_expect_eq(rt_cfg_size("HINT_SHM_BUDGET"), (size_t)4 << 20);
    setenv("HINT_SHM_BUDGET", "4194304", 1);
    cr_expect_eq(rt_cfg_size("HINT_SHM_BUDGET"), (size_t)4 << 20, "plain bytes still work");

    unsetenv("HINT_HEAP_SIZE");
    cr_expect_eq(rt_cfg_size("HINT_HEAP_SIZE"), 0, "unset without a default: 0");

    setenv("HINT_COLL_FALLBACK", "WARN", 1);
    cr_expect_str_eq(rt_cfg_str("HINT_COLL_FALLBACK"), "warn", "enums: any case, the row's spelling back");
    cr_expect_eq(rt_cfg_enum("HINT_COLL_FALLBACK"), 1);
    setenv("HINT_COLL_FALLBACK", "", 1);
    cr_expect_str_eq(rt_cfg_str("HINT_COLL_FALLBACK"), "error", "empty counts as unset");

    unsetenv("HINT_TUNING_FILE");
    cr_expect_null(rt_cfg_str("HINT_TUNING_FILE"));
    setenv("HINT_TUNING_FILE", "/x/y.json", 1);
    cr_expect_str_eq(rt_cfg_str("HINT_TUNING_FILE"), "/x/y.json");

}

static void redirect(void) { cr_redirect_stderr(); }

/* Garbage after init is reported and the default used (hint_init has already refused it). */
Test(config, garbage_gives_message_and_default, .init = redirect)
{
    setenv("HINT_COLL_FALLBACK", "bogus", 1);
    cr_expect_str_eq(rt_cfg_str("HINT_COLL_FALLBACK"), "error");
    setenv("HINT_PACK_SEGMENT", "12abc", 1);
    cr_expect_eq(rt_cfg_long("HINT_PACK_SEGMENT"), 0);
    setenv("HINT_WAIT_SPIN_US", "-3", 1);
    cr_expect_eq(rt_cfg_long("HINT_WAIT_SPIN_US"), 50);
    setenv("HINT_P2P_STATS", "yes", 1);
    cr_expect_eq(rt_cfg_long("HINT_P2P_STATS"), 0);
    fflush(stderr);
    cr_expect_stderr_eq_str(
        "hint[rank -1] config: settings: HINT_COLL_FALLBACK=bogus is not accepted: it takes error, warn or silent; "
        "using the default (error)\n"
        "hint[rank -1] config: settings: HINT_PACK_SEGMENT=12abc is not accepted: it takes an integer from 1 to "
        "1073741824; using the default (8 KiB of extent)\n"
        "hint[rank -1] config: settings: HINT_WAIT_SPIN_US=-3 is not accepted: it takes an integer from 0 to "
        "10000000; using the default (50 (0 when oversubscribed))\n"
        "hint[rank -1] config: settings: HINT_P2P_STATS=yes is not accepted: it takes 0 or 1; using the default "
        "(0)\n");
}

/* What hint_init runs first: every malformed variable named, then HINT_ERR_ARG. */
Test(config, check_all_names_every_bad_variable, .init = redirect)
{
    cr_expect_eq(rt_cfg_check_all(), HINT_SUCCESS);
    setenv("HINT_COLL_FALLBACK", "bogus", 1);
    setenv("HINT_SHM_BUDGET", "1K", 1); /* below its 1M minimum */
    setenv("HINT_HEAP", "shared", 1);   /* fine */
    cr_expect_eq(rt_cfg_check_all(), HINT_ERR_ARG);
    fflush(stderr);
    cr_expect_stderr_eq_str(
        "hint[rank -1] config: hint_init: HINT_COLL_FALLBACK=bogus is not accepted: it takes error, warn or "
        "silent; hint_init fails (unset it or give an accepted value)\n"
        "hint[rank -1] config: hint_init: HINT_SHM_BUDGET=1K is not accepted: it takes bytes from 1M to 1T, with "
        "an optional K, M, G or T suffix (powers of 1024); hint_init fails (unset it or give an accepted value)\n");
}

Test(config, launcher_and_family_rows_are_not_parsed_here)
{
    setenv("HINT_RANK", "not-a-number", 1); /* runtime/boot_client.c checks these */
    setenv("HINT_ALLTOALL", "bogus", 1);   /* collectives/select.c checks HINT_<OP> */
    cr_expect_eq(rt_cfg_check_all(), HINT_SUCCESS);
    const struct rt_env_var *v = rt_env_find("HINT_RANK");
    cr_assert_not_null(v);
    cr_expect_eq(v->kind, RT_ENV_LAUNCHER);
}
