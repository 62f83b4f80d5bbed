/*
 * runtime/config.c — reading HINT_* environment variables with range checks. A malformed value
 * is reported once and the default used, so a typo never silently changes behaviour.
 */
#include <errno.h>
#include <stdlib.h>

#include "runtime/runtime.h"

long rt_env_long(const char *name, long dflt, long min, long max)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 0);
    if (errno != 0 || *end != '\0' || v < min || v > max) {
        rt_log("config", __func__, "%s=%s is not an integer in [%ld, %ld]; using %ld", name, s, min, max, dflt);
        return dflt;
    }
    return v;
}

const char *rt_env_str(const char *name, const char *dflt)
{
    const char *s = getenv(name);
    return s != NULL && *s != '\0' ? s : dflt;
}

size_t rt_env_size(const char *name, size_t dflt)
{
    const char *s = getenv(name);
    if (s == NULL || *s == '\0')
        return dflt;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    size_t mult = 1;
    switch (*end) {
    case 'k': case 'K': mult = (size_t)1 << 10; end++; break;
    case 'm': case 'M': mult = (size_t)1 << 20; end++; break;
    case 'g': case 'G': mult = (size_t)1 << 30; end++; break;
    default: break;
    }
    if (*end == 'i' && (end[-1] != *s))
        end++;
    if (*end == 'B' || *end == 'b')
        end++;
    if (errno != 0 || end == s || *end != '\0' || v < 0 || v * (double)mult > 1e18) {
        rt_log("config", __func__, "%s=%s is not a size (bytes, or with K, M, G); using the default", name, s);
        return dflt;
    }
    return (size_t)(v * (double)mult);
}
