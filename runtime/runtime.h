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

struct rt_state {
    int state;                  /* RT_NOT_STARTED, RT_RUNNING, RT_FINALIZED */
    struct boot_info boot;
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

/* HINT_* configuration (runtime/config.c). Every variable has a row in runtime/envdoc.c giving
   its parser, range and default; these readers return the row's default when the variable is
   unset or empty, and, after a message naming the variable, its value and what it accepts, when
   the value is malformed (hint_init has already refused such a value: rt_cfg_check_all). */
long rt_cfg_long(const char *name);              /* BOOL, INT rows */
long rt_cfg_long_or(const char *name, long computed); /* rows whose default is computed at run time */
size_t rt_cfg_size(const char *name);            /* SIZE rows; 0 when unset without a default */
double rt_cfg_seconds(const char *name);         /* SECONDS rows */
int rt_cfg_enum(const char *name);               /* ENUM rows: index of the value in the row's names */
const char *rt_cfg_str(const char *name);        /* ENUM: the name as the row spells it; STRING: the
                                                    value; NULL when unset without a default */
bool rt_cfg_given(const char *name);             /* the variable holds an accepted value */
/* Every row's value: HINT_ERR_ARG, after one message per malformed variable, when any is. */
int rt_cfg_check_all(void);
/* The library's one parser of each kind (HINT_SUCCESS or HINT_ERR_ARG, *out untouched then):
   bytes "4096", "64K", "1.5G", "2MiB", "8KB" (K, M, G, T: powers of 1024; no sign, no spaces);
   a decimal integer in [min, max]; seconds "2.5" or "2.5s" in [min, max]. */
int rt_parse_size(const char *s, size_t *out);
int rt_parse_int(const char *s, long long min, long long max, long long *out);
int rt_parse_seconds(const char *s, double min, double max, double *out);

/* The node of every world rank (runtime/nodes.c): a node's ranks are consecutive world ranks.
   Valid from hint_init's bootstrap on, before the transports start. */
int rt_nodes_init(void);
void rt_nodes_fini(void);
int rt_node_of(int world);   /* node index of world rank */
int rt_node_first(int node); /* first world rank of node */
int rt_node_size(int node);  /* ranks on node */
bool rt_same_node(int w1, int w2);

/* Translate an errno into a HINT_ERR_* (one place). */
int rt_from_errno(int err);

#endif
