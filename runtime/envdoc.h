/*
 * runtime/envdoc.h — the configuration table: one row for each HINT_* environment variable hint
 * reads, with its name, kind (which parser reads it), default, what it accepts and what it means.
 *
 * Everything comes from the rows: the readers in runtime/config.c (rt_cfg_*) take the parser,
 * range and default from them, hint_init checks every row's value, `hint_info --env` prints them,
 * and README.md's table is `hint_info --env --markdown` (tests/unit/check_env_table.py fails when
 * the two disagree or when a variable read somewhere has no row).
 */
#ifndef HINT_RUNTIME_ENVDOC_H
#define HINT_RUNTIME_ENVDOC_H

#include <stddef.h>

enum rt_env_kind {
    RT_ENV_BOOL,     /* 0 or 1 */
    RT_ENV_INT,      /* a decimal integer in [min, max] */
    RT_ENV_SIZE,     /* bytes in [min, max], an optional K, M, G or T suffix (rt_parse_size) */
    RT_ENV_SECONDS,  /* a decimal number of seconds in [min, max], e.g. 2.5 */
    RT_ENV_ENUM,     /* one of the names in choices, any letter case */
    RT_ENV_STRING,   /* any non-empty text, e.g. a path */
    RT_ENV_FAMILY,   /* one variable per instance (HINT_<OP>), checked by the layer that reads it */
    RT_ENV_LAUNCHER, /* set by hintrun for its ranks, checked by runtime/boot_client.c */
};

struct rt_env_var {
    const char *name;
    enum rt_env_kind kind;
    const char *dflt;                 /* in the variable's own syntax; "" when unset means "not given" */
    const char *note;                 /* NULL, or how the default varies at run time (shown after dflt) */
    long long min, max;               /* INT, SIZE (bytes), SECONDS */
    const char *const *choices;       /* ENUM, FAMILY: the accepted names, NULL-terminated */
    const char *meaning;
    const char *syntax;               /* STRING: what it accepts, as documentation shows it (NULL: a path) */
};

extern const struct rt_env_var rt_env_vars[];
extern const int rt_env_nvars;

/* The row of a variable, NULL when it has none. */
const struct rt_env_var *rt_env_find(const char *name);
/* What a row accepts, as the messages and `hint_info --env` say it ("one of error, warn, silent"). */
void rt_env_accepts(const struct rt_env_var *v, char *buf, size_t n);
/* The default as documentation shows it ("1000 (200 when oversubscribed)", "unset"). */
void rt_env_default_text(const struct rt_env_var *v, char *buf, size_t n);

#endif
