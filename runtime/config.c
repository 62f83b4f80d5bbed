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
