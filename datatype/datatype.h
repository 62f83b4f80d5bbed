/*
 * datatype/datatype.h — what the other layers may ask of a datatype.
 *
 * The datatype module owns struct hint_type_s (datatype/type.h); nothing outside datatype/
 * looks inside it. Transport and collectives use only these calls plus the public
 * hint_pack_range / hint_unpack_range.
 */
#ifndef HINT_DATATYPE_H
#define HINT_DATATYPE_H

#include <stddef.h>
#include <stdint.h>

#include "hint.h"

/* The predefined element kinds; reductions dispatch on these. */
enum dt_basic {
    DT_NONE = -1,
    DT_BYTE = 0,
    DT_CHAR,
    DT_INT,
    DT_LONG,
    DT_INT32,
    DT_INT64,
    DT_UINT32,
    DT_UINT64,
    DT_FLOAT,
    DT_DOUBLE,
    DT_COMPLEX_FLOAT,
    DT_COMPLEX_DOUBLE,
    DT_NBASIC
};

/* HINT_SUCCESS when t may be used in communication (predefined, or derived and committed),
   HINT_ERR_TYPE otherwise (NULL, freed, not committed). */
int dt_check(hint_type t);
/* Bytes of data in one element of t (MPI_Type_size). */
size_t dt_size(hint_type t);
/* MPI's lb and extent of t. */
ptrdiff_t dt_lb(hint_type t);
ptrdiff_t dt_extent(hint_type t);
/* 1 when count elements of t are one dense run of count * dt_size(t) bytes starting at the
   buffer address (lb == true_lb == 0, extent == size, no holes), so a plain memcpy moves them. */
int dt_is_contig(hint_type t);
/* The predefined kind when t is predefined or every byte of it is one predefined kind laid out
   densely (e.g. contiguous(4, HINT_DOUBLE)); DT_NONE otherwise. */
int dt_basic(hint_type t);
/* The size in bytes of one element of a predefined kind. */
size_t dt_basic_size(int basic);
/* Name of a predefined kind ("double"), for messages. */
const char *dt_basic_name(int basic);

#endif
