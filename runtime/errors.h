/*
 * runtime/errors.h — error handlers (hint_group_set_errhandler, HINT_ERRORS): what a failed
 * public call does. Called from the generated wrappers (runtime/gen_api_wrap.py) only, which
 * every public call passes through; nothing else in the library needs to know.
 */
#ifndef HINT_RUNTIME_ERRORS_H
#define HINT_RUNTIME_ERRORS_H

#include "hint.h"

/* A public call failed with st: returns st under HINT_ERRORS_RETURN; under
   HINT_ERRORS_ARE_FATAL prints the call, the group, the rank and the message and ends the job.
   g: the call's group, or HINT_GROUP_NULL for calls without one (the world's handler). */
int err_raise(const char *call, hint_group g, int st);
/* The group of the request *r (read before a call that may free it); HINT_GROUP_NULL when r is
   NULL or *r is not a live request, or when no group can have a fatal handler (then which group
   the error is raised on makes no difference, and a wait pays one load and one branch for it). */
extern int err_fatal_state; /* -1: not known yet; 0: no group has a fatal handler; 1: some may */
hint_group err_request_group_slow(const hint_request *r);
static inline hint_group err_request_group(const hint_request *r)
{
    return err_fatal_state != 0 ? err_request_group_slow(r) : HINT_GROUP_NULL;
}
/* child (made by a call on parent, may be HINT_GROUP_NULL) takes parent's handler. */
void err_inherit(hint_group parent, hint_group child);

#endif
