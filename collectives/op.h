/*
 * collectives/op.h — the reduction operations: the predefined ones and their kernels, and the
 * user-defined ones (hint_op_create), which a reduction binds to its datatype for the call.
 */
#ifndef HINT_COLL_OP_H
#define HINT_COLL_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "hint.h"

enum op_id { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_LAND, OP_LOR, OP_BAND, OP_BOR, OP_BXOR, OP_MINLOC, OP_MAXLOC,
             OP_NOPS, OP_USER = OP_NOPS };

/* inout[i] = in[i] op inout[i] for count elements of the predefined kind `basic`. */
typedef void (*op_kernel)(const void *in, void *inout, size_t count);

struct hint_op_s {
    unsigned magic;
    int id;             /* enum op_id */
    const char *name;
    hint_user_fn *fn;   /* OP_USER: the user's function */
    bool commute;       /* OP_USER: as created; the predefined ops all commute */
    hint_type type;     /* a bound copy (op_bind): the call's datatype, which fn is given */
    struct hint_op_s *bound; /* a user op: its bound copies, one per type it was used with, freed
                                with it; a bound copy: the next one */
};

/* HINT_SUCCESS, HINT_ERR_OP for an op that is not live, or a predefined one that has no meaning
   for the kind. A user op goes with any kind (DT_NONE included). */
int op_check(hint_op op, int basic);
/* The last op and kind op_check_hot passed (a call's short path): the same pair again is one
   compare each. hint_op_free of that op forgets it, so it only ever names a live op. */
extern hint_op op_hot;
extern int op_hot_basic;
static inline bool op_check_hot(hint_op op, int basic)
{
    if (op == op_hot && basic == op_hot_basic)
        return true;
    if (op_check(op, basic) != HINT_SUCCESS)
        return false;
    op_hot = op;
    op_hot_basic = basic;
    return true;
}
/* Set by the nonblocking collectives (collectives/sched.c): true when calls in flight use the user
   op (or one of its bound copies); hint_op_free then takes it off the live list and leaves the
   memory to them, the last to complete calls op_destroy (MPI: freed once pending calls end). */
extern bool (*op_free_deferred)(hint_op op);
void op_destroy(hint_op op);
op_kernel op_kernel_for(hint_op op, int basic);
/* For an op past op_check (the algorithms' ops, bound copies included): a user op. */
static inline bool op_is_user(hint_op op) { return op != NULL && op->id == OP_USER; }
/* false only for a user op created with commute = 0: such an op must be combined in rank order,
   the lower ranks' part as the left operand. */
bool op_commutes(hint_op op);
/* The op a reduction runs with, in *bound: a predefined op itself; a user op's copy bound to
   the call's type t, kept by the op until hint_op_free (so a call may outlive its caller's
   frame, as a nonblocking one does, as long as the op is not freed before it completes).
   HINT_ERR_NOMEM when a first use with t finds no memory for the copy. */
int op_bind_user(hint_op op, hint_type t, hint_op *bound);
static inline int op_bind(hint_op op, hint_type t, hint_op *bound)
{
    *bound = op;
    return op_is_user(op) ? op_bind_user(op, t, bound) : HINT_SUCCESS;
}
/* inout = in op inout for count elements (packed: the algorithms move packed bytes; a bound
   user op on a non-contiguous type sees them unpacked into their layout). */
void op_reduce(hint_op op, int basic, const void *in, void *inout, size_t count);
/* The same with the operands' rank order given: in_first says in holds the lower ranks' part;
   otherwise inout = inout op in, computed in `in` (which must be scratch, `bytes` long) and
   copied back. A commutative op never needs the copy. */
void op_reduce_ordered(hint_op op, int basic, void *in, void *inout, size_t count, size_t bytes, bool in_first);

#endif
