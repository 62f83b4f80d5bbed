/*
 * runtime/config.c — reading HINT_* environment variables through their rows of the table in
 * runtime/envdoc.c, and the library's one parser of each kind of value (sizes, integers, seconds).
 *
 * A malformed value is never ignored in silence. hint_init checks every row first and fails with
 * HINT_ERR_ARG after one message per malformed variable naming it, its value and what it accepts
 * (rt_cfg_check_all), so a typo cannot quietly change how a job runs. The readers below see a
 * malformed value only where hint_init did not look first (a program that uses datatypes without
 * hint_init, or a setenv after it): they give the same message and use the default. An empty value
 * counts as unset.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "runtime/envdoc.h"
#include "runtime/runtime.h"

/* ---- the parsers ---- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

int rt_parse_size(const char *s, size_t *out)
{
    unsigned long long whole = 0, frac = 0, den = 1;
    const char *p = s;
    if (s == NULL || !is_digit(*p))
        return HINT_ERR_ARG;
    for (; is_digit(*p); p++)
        if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, (unsigned)(*p - '0'), &whole))
            return HINT_ERR_ARG;
    if (*p == '.') {
        if (!is_digit(*++p))
            return HINT_ERR_ARG;
        for (; is_digit(*p); p++)
            if (den < 1000000) { /* six decimals are plenty; the rest only has to be digits */
                frac = frac * 10 + (unsigned)(*p - '0');
                den *= 10;
            }
    }
    int shift = 0;
    switch (*p) {
    case 'k': case 'K': shift = 10; break;
    case 'm': case 'M': shift = 20; break;
    case 'g': case 'G': shift = 30; break;
    case 't': case 'T': shift = 40; break;
    default: break;
    }
    if (shift) {
        p++;
        if (*p == 'i')
            p++;
    }
    if (*p == 'B' || *p == 'b')
        p++;
    if (*p != '\0' || (frac != 0 && shift == 0) || whole > (SIZE_MAX >> shift))
        return HINT_ERR_ARG; /* trailing text, a fraction of a byte, or too large */
    size_t v = (size_t)whole << shift, part = (size_t)((frac << shift) / den);
    if (v > SIZE_MAX - part)
        return HINT_ERR_ARG;
    *out = v + part;
    return HINT_SUCCESS;
}

int rt_parse_int(const char *s, long long min, long long max, long long *out)
{
    if (s == NULL || !(is_digit(*s) || ((*s == '-' || *s == '+') && is_digit(s[1]))))
        return HINT_ERR_ARG;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10); /* base 10: "010" is ten, not eight */
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return HINT_ERR_ARG;
    *out = v;
    return HINT_SUCCESS;
}

int rt_parse_seconds(const char *s, double min, double max, double *out)
{
    if (s == NULL || !(is_digit(*s) || (*s == '.' && is_digit(s[1]))))
        return HINT_ERR_ARG;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end == 's')
        end++;
    if (errno != 0 || *end != '\0' || !isfinite(v) || v < min || v > max)
        return HINT_ERR_ARG;
    *out = v;
    return HINT_SUCCESS;
}

/* ---- one value through its row ---- */

struct cfg_value {
    long long i;      /* BOOL, INT; ENUM: index of the choice */
    size_t size;      /* SIZE */
    double seconds;   /* SECONDS */
    const char *text; /* ENUM: the choice as the row spells it; STRING and the others: the value */
    bool given;       /* the variable holds an accepted value (not the default) */
};

static int cfg_parse(const struct rt_env_var *v, const char *s, struct cfg_value *out)
{
    long long i;
    out->text = s;
    switch (v->kind) {
    case RT_ENV_BOOL:
        if (rt_parse_int(s, 0, 1, &i) != HINT_SUCCESS || (s[0] != '0' && s[0] != '1') || s[1] != '\0')
            return HINT_ERR_ARG;
        out->i = i;
        return HINT_SUCCESS;
    case RT_ENV_INT:
        return rt_parse_int(s, v->min, v->max, &out->i);
    case RT_ENV_SIZE:
        if (rt_parse_size(s, &out->size) != HINT_SUCCESS || out->size < (size_t)v->min ||
            out->size > (size_t)v->max)
            return HINT_ERR_ARG;
        return HINT_SUCCESS;
    case RT_ENV_SECONDS:
        return rt_parse_seconds(s, (double)v->min, (double)v->max, &out->seconds);
    case RT_ENV_ENUM:
        for (int c = 0; v->choices[c]; c++)
            if (strcasecmp(s, v->choices[c]) == 0) {
                out->i = c;
                out->text = v->choices[c];
                return HINT_SUCCESS;
            }
        return HINT_ERR_ARG;
    default:
        return HINT_SUCCESS; /* STRING: any non-empty text; FAMILY, LAUNCHER: checked where read */
    }
}

/* Checked rows are those whose values this file parses. */
static bool cfg_checked(const struct rt_env_var *v)
{
    return v->kind != RT_ENV_FAMILY && v->kind != RT_ENV_LAUNCHER;
}

/* where: hint_init, or "settings" for a reader after it */
static void cfg_complain(const struct rt_env_var *v, const char *value, const char *where, const char *then)
{
    char accepts[512];
    rt_env_accepts(v, accepts, sizeof accepts);
    rt_log("config", where, "%s=%s is not accepted: it takes %s; %s", v->name, value, accepts, then);
}

static void cfg_read(const char *name, struct cfg_value *out)
{
    const struct rt_env_var *v = rt_env_find(name);
    *out = (struct cfg_value){0};
    if (v == NULL) {
        rt_log("config", "settings", "%s has no row in runtime/envdoc.c (a bug in hint); reading it as unset", name);
        return;
    }
    const char *s = getenv(name);
    if (s != NULL && *s != '\0') {
        if (cfg_parse(v, s, out) == HINT_SUCCESS) {
            out->given = cfg_checked(v);
            return;
        }
        char dflt[128], then[160];
        rt_env_default_text(v, dflt, sizeof dflt);
        snprintf(then, sizeof then, "using the default (%s)", dflt);
        cfg_complain(v, s, "settings", then);
        *out = (struct cfg_value){0};
    }
    if (*v->dflt != '\0')
        cfg_parse(v, v->dflt, out); /* every row's default parses (tests/unit/test_config.c) */
}

int rt_cfg_check_all(void)
{
    int bad = 0;
    for (int i = 0; i < rt_env_nvars; i++) {
        const struct rt_env_var *v = &rt_env_vars[i];
        const char *s = getenv(v->name);
        struct cfg_value val;
        if (!cfg_checked(v) || s == NULL || *s == '\0' || cfg_parse(v, s, &val) == HINT_SUCCESS)
            continue;
        cfg_complain(v, s, "hint_init", "hint_init fails (unset it or give an accepted value)");
        bad++;
    }
    return bad ? HINT_ERR_ARG : HINT_SUCCESS;
}

long rt_cfg_long(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return (long)v.i;
}

long rt_cfg_long_or(const char *name, long computed)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return v.given ? (long)v.i : computed;
}

size_t rt_cfg_size(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return v.size;
}

double rt_cfg_seconds(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return v.seconds;
}

const char *rt_cfg_str(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return v.text;
}

int rt_cfg_enum(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return (int)v.i;
}

bool rt_cfg_given(const char *name)
{
    struct cfg_value v;
    cfg_read(name, &v);
    return v.given;
}

