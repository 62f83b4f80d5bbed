/*
 * runtime/error.c — status texts, errno translation and logging.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

const char *hint_strerror(int status)
{
    switch (status) {
#define HINT_XX_TEXT(name, value, text)                                                          \
    case value:                                                                                  \
        return text;
        HINT_STATUS_MAP(HINT_XX_TEXT)
#undef HINT_XX_TEXT
    default:
        return "unknown status code";
    }
}

int rt_from_errno(int err)
{
    switch (err) {
    case 0:
        return HINT_SUCCESS;
    case ENOMEM:
    case ENOSPC:
        return HINT_ERR_NOMEM;
    case EINVAL:
        return HINT_ERR_ARG;
    case ENOSYS:
    case EOPNOTSUPP:
        return HINT_ERR_UNSUPPORTED;
    default:
        return HINT_ERR_TRANSPORT;
    }
}

void rt_log(const char *subsys, const char *func, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* One write per line so lines of different ranks never interleave. */
    /* rt.boot is filled in before anything can fail after boot_init */
    /* a public call's body is hint_X__impl (runtime/gen_api_wrap.py): name it as users call it */
    size_t flen = strlen(func);
    if (flen > 6 && strcmp(func + flen - 6, "__impl") == 0)
        flen -= 6;
    fprintf(stderr, "hint[rank %d] %s: %.*s: %s\n", rt.boot.size > 0 ? rt.boot.rank : -1, subsys, (int)flen, func,
            msg);
}
