/*
 * datatype/type.h — the layout of struct hint_type_s, private to datatype/.
 */
#ifndef HINT_DATATYPE_TYPE_H
#define HINT_DATATYPE_TYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "datatype/datatype.h"

#define DT_MAGIC 0x68696e74u /* "hint": catches freed or foreign pointers */

struct hint_type_s {
    uint32_t magic;
    bool predefined;
    bool committed;
    int basic;              /* enum dt_basic, or DT_NONE */
    size_t size;            /* bytes of data in one element */
    ptrdiff_t lb, extent;   /* MPI lb and extent */
    ptrdiff_t true_lb, true_extent;
    const char *name;
};

#endif
