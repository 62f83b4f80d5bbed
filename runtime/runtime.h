/*
 * runtime/runtime.h — the process-wide state of a rank and the helpers every layer uses:
 * the init check, logging, configuration from HINT_* variables.
 */
#ifndef HINT_RUNTIME_H
#define HINT_RUNTIME_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hint.h"
#include "runtime/boot.h"

struct shm_node; /* transport/shm: the mapped node segment */

struct rt_state {
    int state;                  /* RT_NOT_STARTED, RT_RUNNING, RT_FINALIZED */
    struct boot_info boot;
    struct shm_node *shm;       /* this node's segment */
    hint_group world;
    uint32_t next_ctx;          /* lowest context id this rank has not used yet (always even) */
};

enum { RT_NOT_STARTED = 0, RT_RUNNING = 1, RT_FINALIZED = 2 };

extern struct rt_state rt;

static inline bool rt_running(void) { return rt.state == RT_RUNNING; }

#define RT_CHECK_INIT()                                                                          \
    do {                                                                                         \
        if (!rt_running())                                                                       \
            return HINT_ERR_NOT_INITIALIZED;                                                     \
    } while (0)

/* Jump to the error exit of the function with st set (STYLE.md's one error-path shape). */
#define CHECK_GOTO(call, label)                                                                  \
    do {                                                                                         \
        st = (call);                                                                             \
        if (st != HINT_SUCCESS)                                                                  \
            goto label;                                                                          \
    } while (0)

/* Log at the origin: subsystem, function, what was wrong and what happens now. */
void rt_log(const char *subsys, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define RT_ERR(subsys, ...) rt_log(subsys, __func__, __VA_ARGS__)

/* HINT_* configuration: every variable read through these is listed by rt_env_describe(). */
long rt_env_long(const char *name, long dflt, long min, long max);
const char *rt_env_str(const char *name, const char *dflt);
/* A size in bytes, with an optional K, M or G (powers of 1024) suffix. */
size_t rt_env_size(const char *name, size_t dflt);

/* Translate an errno into a HINT_ERR_* (one place). */
int rt_from_errno(int err);

#endif
