/*
 * runtime/errors.c — error handlers per group and for the job (HINT_ERRORS).
 *
 * The default is HINT_ERRORS_RETURN, unlike MPI's fatal default: hint's contract (docs/API.md)
 * has always been that every call returns a status, programs written for hint check it, and some
 * errors are conditions a program handles (hint_coll_set with an algorithm this build lacks,
 * hint_group_split_type by socket on a machine that cannot tell sockets). A program ported from
 * MPI that checks nothing asks for MPI's behaviour with HINT_ERRORS=fatal, for the job, or
 * hint_group_set_errhandler per group.
 *
 * A group's handler is kept here by context id, which no two groups of a rank ever share
 * (runtime/group.c), beside the group's address to tell a live entry from one whose group was
 * freed. Only groups whose handler differs from the job's have an entry.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/errors.h"
#include "runtime/group.h"
#include "runtime/registry.h"
#include "runtime/request.h"
#include "runtime/runtime.h"

struct err_entry {
    hint_group g;
    uint32_t ctx;
    int handler;
};

static struct {
    struct err_entry *v;
    size_t n, cap;
} table;

/* HINT_ERRORS: the handler every group starts with. */
static int job_handler(void)
{
    const char *s = rt_cfg_str("HINT_ERRORS");
    return s != NULL && strcmp(s, "fatal") == 0 ? HINT_ERRORS_ARE_FATAL : HINT_ERRORS_RETURN;
}

static bool live(hint_group g) { return g != HINT_GROUP_NULL && reg_live(REG_GROUP, g); }

static struct err_entry *find(hint_group g)
{
    for (size_t i = 0; i < table.n; i++)
        if (table.v[i].g == g && table.v[i].ctx == g->ctx)
            return &table.v[i];
    return NULL;
}

/* Drop the entries of freed groups (an address may be reused, a context id never is). */
static void sweep(void)
{
    size_t k = 0;
    for (size_t i = 0; i < table.n; i++)
        if (live(table.v[i].g) && table.v[i].g->ctx == table.v[i].ctx)
            table.v[k++] = table.v[i];
    table.n = k;
}

static int set_handler(hint_group g, int handler)
{
    struct err_entry *e = find(g);
    if (e != NULL) {
        e->handler = handler;
        return HINT_SUCCESS;
    }
    if (handler == HINT_ERRORS_ARE_FATAL)
        err_fatal_state = 1;
    if (handler == job_handler())
        return HINT_SUCCESS;
    if (table.n == table.cap)
        sweep();
    if (table.n == table.cap) {
        size_t cap = table.cap ? 2 * table.cap : 8;
        struct err_entry *v = realloc(table.v, cap * sizeof *v);
        if (v == NULL)
            return HINT_ERR_NOMEM;
        table.v = v;
        table.cap = cap;
    }
    table.v[table.n++] = (struct err_entry){.g = g, .ctx = g->ctx, .handler = handler};
    return HINT_SUCCESS;
}

static int handler_of(hint_group g)
{
    if (!live(g))
        g = rt_running() ? rt.world : HINT_GROUP_NULL;
    const struct err_entry *e = g != HINT_GROUP_NULL ? find(g) : NULL;
    return e != NULL ? e->handler : job_handler();
}

int hint_group_set_errhandler(hint_group g, int handler)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (handler != HINT_ERRORS_RETURN && handler != HINT_ERRORS_ARE_FATAL)
        return HINT_ERR_ARG;
    return set_handler(g, handler);
}

int hint_group_get_errhandler(hint_group g, int *handler)
{
    RT_CHECK_INIT();
    if (grp_check(g) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (handler == NULL)
        return HINT_ERR_ARG;
    *handler = handler_of(g);
    return HINT_SUCCESS;
}

void err_inherit(hint_group parent, hint_group child)
{
    if (!live(child) || !live(parent))
        return;
    const struct err_entry *e = find(parent);
    if (e != NULL && set_handler(child, e->handler) != HINT_SUCCESS)
        RT_ERR("errors", "no memory to give a new group its parent's error handler; it has HINT_ERRORS's");
}

int err_fatal_state = -1;

hint_group err_request_group_slow(const hint_request *r)
{
    if (err_fatal_state < 0)
        err_fatal_state = job_handler() == HINT_ERRORS_ARE_FATAL;
    if (err_fatal_state == 0 || r == NULL || *r == HINT_REQUEST_NULL || !reg_live(REG_REQUEST, *r))
        return HINT_GROUP_NULL;
    return (*r)->group; /* err_raise checks that it is still live */
}

/* "HINT_WORLD" or "group <ctx> (<size> ranks)": the context id is what hang reports and
   HINT_COLL_CHECK messages call a group too. */
static void describe(hint_group g, char *buf, size_t n)
{
    if (!rt_running())
        snprintf(buf, n, "%s", "no group (hint is not running)");
    else if (!live(g))
        snprintf(buf, n, "%s", g == HINT_GROUP_NULL ? "no group" : "an invalid group handle");
    else if (g == rt.world)
        snprintf(buf, n, "HINT_WORLD (%d ranks), rank %d", g->size, g->rank);
    else
        snprintf(buf, n, "group %u (%d ranks), rank %d of it", (unsigned)g->ctx, g->size, g->rank);
}

int err_raise(const char *call, hint_group g, int st)
{
    if (handler_of(g) != HINT_ERRORS_ARE_FATAL)
        return st;
    char where[128];
    describe(g, where, sizeof where);
    /* one write: lines of different ranks never interleave */
    fprintf(stderr, "hint[rank %d] fatal error in %s on %s: %s (code %d); HINT_ERRORS_ARE_FATAL ends the job\n",
            rt.boot.size > 0 ? rt.boot.rank : -1, call, where, hint_strerror(st), st);
    hint_abort(st);
    return st; /* not reached */
}
