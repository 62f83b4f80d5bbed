/*
 * datatype/copy.c — typed-to-typed copy in one address space: what a send to self, the local
 * block of an alltoall or a single copy over the shared heap needs, without packing the whole
 * message first. A contiguous side is packed into or unpacked from directly; two derived sides
 * go through a small bounce buffer, slice by slice (the range calls resume at any byte).
 */
#include <string.h>

#include "datatype/type.h"

#define DT_BOUNCE 8192 /* small enough for the stack, large enough to amortise a slice's seek */

/* Signatures that cannot match: both sides of one kind each, and the kinds differ. Bytes are
   let through either way: moving raw bytes to and from typed buffers is a common idiom. */
static bool dt_sig_clash(hint_type a, hint_type b)
{
    return a->sig >= 0 && b->sig >= 0 && a->sig != b->sig && a->sig != DT_BYTE && b->sig != DT_BYTE;
}

int dt_copy_typed(const void *src, size_t scount, hint_type st, void *dst, size_t rcount, hint_type rt,
                  size_t *bytes)
{
    int s;
    size_t n, room, done, d2;
    if (bytes == NULL)
        return HINT_ERR_ARG;
    *bytes = 0;
    if ((s = dt_check(st)) != HINT_SUCCESS || (s = dt_check(rt)) != HINT_SUCCESS)
        return s;
    if (__builtin_mul_overflow(scount, st->size, &n) || __builtin_mul_overflow(rcount, rt->size, &room))
        return HINT_ERR_COUNT;
    if (n > 0 && dt_sig_clash(st, rt))
        return HINT_ERR_TYPE;
    if (n > room)
        return HINT_ERR_TRUNCATE;
    if (n == 0)
        return HINT_SUCCESS;
    if (st->contig)
        s = dt_unpack_range_rep(src, n, 0, dst, rcount, rt, &done, DT_REP_AUTO);
    else if (rt->contig)
        s = dt_pack_range_rep(src, scount, st, 0, dst, n, &done, DT_REP_AUTO);
    else {
        char bounce[DT_BOUNCE];
        for (size_t off = 0; off < n && s == HINT_SUCCESS; off += done) {
            size_t len = n - off < DT_BOUNCE ? n - off : DT_BOUNCE;
            s = dt_pack_range_rep(src, scount, st, off, bounce, len, &done, DT_REP_AUTO);
            if (s == HINT_SUCCESS)
                s = dt_unpack_range_rep(bounce, done, off, dst, rcount, rt, &d2, DT_REP_AUTO);
        }
    }
    if (s == HINT_SUCCESS)
        *bytes = n;
    return s;
}
