/*
 * collectives/op.h — the predefined reduction operations and their kernels.
 */
#ifndef HINT_COLL_OP_H
#define HINT_COLL_OP_H

#include <stdbool.h>
#include <stddef.h>

#include "hint.h"

enum op_id { OP_SUM, OP_PROD, OP_MIN, OP_MAX, OP_LAND, OP_LOR, OP_BAND, OP_BOR, OP_BXOR, OP_NOPS };

/* inout[i] = in[i] op inout[i] for count elements of the predefined kind `basic`. */
typedef void (*op_kernel)(const void *in, void *inout, size_t count);

struct hint_op_s {
    unsigned magic;
    int id;             /* enum op_id */
    const char *name;
};

/* HINT_SUCCESS, HINT_ERR_OP for an unknown op or one that has no meaning for the kind. */
int op_check(hint_op op, int basic);
op_kernel op_kernel_for(hint_op op, int basic);
void op_reduce(hint_op op, int basic, const void *in, void *inout, size_t count);

#endif
