/*
 * collectives/derived.c — collectives on derived (non-contiguous) datatypes: each call is turned
 * into the same call on contiguous bytes (or, for reductions, on the predefined kind the type is
 * made of): inputs are packed into scratch buffers, the byte call runs with every algorithm
 * unchanged, outputs are unpacked. One extra copy on each side, no new algorithm code.
 * Type signatures that can be compared on one rank (both sides of an allgather, alltoall, ...)
 * must be of the same predefined kind (bytes match anything): HINT_ERR_TYPE otherwise.
 */
#include <stdlib.h>
#include <string.h>

#include "collectives/derived.h"
#include "datatype/datatype.h"

static hint_type kind_type(int kind)
{
    static const hint_type t[DT_NBASIC] = {HINT_BYTE,  HINT_CHAR,   HINT_INT,    HINT_LONG,   HINT_INT32,
                                           HINT_INT64, HINT_UINT32, HINT_UINT64, HINT_FLOAT, HINT_DOUBLE,
                                           HINT_COMPLEX_FLOAT, HINT_COMPLEX_DOUBLE};
    return kind >= 0 && kind < DT_NBASIC ? t[kind] : HINT_TYPE_NULL;
}

bool coll_is_derived(hint_type t) { return dt_check(t) == HINT_SUCCESS && !dt_is_contig(t); }

/* Signatures of the two sides of one rank's call agree (or cannot be told apart). */
int coll_same_kind(hint_type a, hint_type b)
{
    int ka = dt_sig_basic(a), kb = dt_sig_basic(b);
    if (ka == DT_NONE || kb == DT_NONE || ka == kb || ka == DT_BYTE || kb == DT_BYTE)
        return HINT_SUCCESS;
    return HINT_ERR_TYPE;
}

/* count elements of t at buf as packed bytes: *out points at them (buf itself when t is
   contiguous, else a scratch copy in *tmp). */
static int pack(const void *buf, size_t count, hint_type t, void **tmp, const void **out, size_t *bytes)
{
    *tmp = NULL;
    *bytes = count * dt_size(t);
    if (!coll_is_derived(t) || *bytes == 0) {
        *out = buf;
        return HINT_SUCCESS;
    }
    if ((*tmp = malloc(*bytes)) == NULL)
        return HINT_ERR_NOMEM;
    size_t done;
    int st = dt_pack_range_rep(buf, count, t, 0, *tmp, *bytes, &done, DT_REP_AUTO);
    *out = *tmp;
    return st;
}

/* Where count elements of t at buf are received as bytes (scratch when t is derived). */
static int recv_area(void *buf, size_t count, hint_type t, void **tmp, void **out, size_t *bytes)
{
    *tmp = NULL;
    *bytes = count * dt_size(t);
    if (!coll_is_derived(t) || *bytes == 0) {
        *out = buf;
        return HINT_SUCCESS;
    }
    *out = *tmp = malloc(*bytes);
    return *tmp ? HINT_SUCCESS : HINT_ERR_NOMEM;
}

static int unpack(void *tmp, size_t bytes, void *buf, size_t count, hint_type t)
{
    if (tmp == NULL || bytes == 0)
        return HINT_SUCCESS;
    size_t done;
    return dt_unpack_range_rep(tmp, bytes, 0, buf, count, t, &done, DT_REP_AUTO);
}

static int keep_first(int a, int b) { return a != HINT_SUCCESS ? a : b; }

/* Reductions work on the predefined kind the type is made of. mode: 0 allreduce, 1 reduce,
   2 reduce_scatter_block (count = elements per rank). */
int coll_derived_reduce(int mode, const void *s, void *r, size_t count, hint_type t, hint_op op, int root,
                        hint_group g)
{
    int kind = dt_sig_basic(t), me, P;
    if (hint_group_rank(g, &me) != HINT_SUCCESS || hint_group_size(g, &P) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (kind == DT_NONE)
        return HINT_ERR_OP; /* a mix of kinds has no predefined reduction */
    size_t in_count = mode == 2 ? count * (size_t)P : count;
    bool out_here = mode != 1 || me == root;
    void *stmp = NULL, *rtmp = NULL;
    const void *sp;
    void *rp = r;
    size_t sbytes, rbytes = 0;
    /* in place: the input is r's content */
    int st = pack(s == HINT_IN_PLACE ? r : s, in_count, t, &stmp, &sp, &sbytes);
    if (st == HINT_SUCCESS && out_here)
        st = recv_area(r, count, t, &rtmp, &rp, &rbytes);
    size_t es = dt_basic_size(kind), n = count * dt_size(t) / es;
    hint_type kt = kind_type(kind);
    if (st == HINT_SUCCESS) {
        if (mode == 0)
            st = hint_allreduce(sp, rp, n, kt, op, g);
        else if (mode == 1)
            st = hint_reduce(sp, rp, n, kt, op, root, g);
        else
            st = hint_reduce_scatter_block(sp, rp, n, kt, op, g);
    }
    if (st == HINT_SUCCESS && out_here)
        st = unpack(rtmp, rbytes, r, count, t);
    free(stmp);
    free(rtmp);
    return st;
}

/* gather, scatter, allgather, alltoall: op 0..3. The send side holds sc (scatter, alltoall:
   P x sc) elements; the receive side rc (gather, allgather, alltoall: P x rc). */
int coll_derived_blocks(int op, const void *s, size_t sc, hint_type stype, void *r, size_t rc, hint_type rtype,
                        int root, hint_group g)
{
    int me, P;
    if (hint_group_rank(g, &me) != HINT_SUCCESS || hint_group_size(g, &P) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    bool in_place = op == 1 ? r == HINT_IN_PLACE : s == HINT_IN_PLACE;
    bool send_here = op != 1 || me == root, recv_here = op != 0 || me == root;
    if (!in_place && send_here && recv_here) {
        int st = coll_same_kind(stype, rtype);
        if (st != HINT_SUCCESS)
            return st;
    }
    size_t s_elems = (op == 1 || op == 3) ? sc * (size_t)P : sc;
    size_t r_elems = (op == 0 || op == 2 || op == 3) ? rc * (size_t)P : rc;
    void *stmp = NULL, *rtmp = NULL;
    const void *sp = s;
    void *rp = r;
    size_t sbytes = 0, rbytes = 0;
    int st = HINT_SUCCESS;
    if (op == 1 && in_place) {
        /* scatter in place at the root: its own block stays in s; others need only s */
        st = pack(s, s_elems, stype, &stmp, &sp, &sbytes);
        rp = HINT_IN_PLACE;
    } else if (in_place) {
        /* the input is (part of) r: work on a packed copy of all of r */
        st = pack(r, r_elems, rtype, &rtmp, (const void **)&rp, &rbytes);
        sp = HINT_IN_PLACE;
    } else {
        if (send_here)
            st = pack(s, s_elems, stype, &stmp, &sp, &sbytes);
        if (st == HINT_SUCCESS && recv_here)
            st = recv_area(r, r_elems, rtype, &rtmp, &rp, &rbytes);
    }
    /* block bytes of each side; an insignificant side takes the other's */
    bool s_sig = send_here && !(in_place && op != 1), r_sig = recv_here && !(in_place && op == 1);
    size_t sblk = s_sig ? sc * dt_size(stype) : 0, rblk = r_sig ? rc * dt_size(rtype) : 0;
    if (!s_sig)
        sblk = rblk;
    if (!r_sig)
        rblk = sblk;
    if (st == HINT_SUCCESS) {
        switch (op) {
        case 0: st = hint_gather(sp, sblk, HINT_BYTE, rp, rblk, HINT_BYTE, root, g); break;
        case 1: st = hint_scatter(sp, sblk, HINT_BYTE, rp, rblk, HINT_BYTE, root, g); break;
        case 2: st = hint_allgather(sp, sblk, HINT_BYTE, rp, rblk, HINT_BYTE, g); break;
        default: st = hint_alltoall(sp, sblk, HINT_BYTE, rp, rblk, HINT_BYTE, g); break;
        }
    }
    if (st == HINT_SUCCESS && recv_here && rp != HINT_IN_PLACE)
        st = unpack(rtmp, rbytes, r, r_elems, rtype);
    free(stmp);
    free(rtmp);
    return st;
}

/* ---- v variants: per-block packing into a dense byte layout ---- */

struct vlayout {
    void *tmp;                 /* packed blocks, or NULL when the user's buffer is used as is */
    size_t *counts, *displs;   /* bytes */
};

/* Blocks p of t (counts[p] elements at displs[p] extents from buf) as bytes: contiguous t keeps
   the user's buffer with byte counts/displacements; derived t packs into tmp if `fill`. */
static int vbytes(const void *buf, const size_t *counts, const size_t *displs, hint_type t, int P, bool fill,
                  struct vlayout *v)
{
    v->tmp = NULL;
    v->counts = malloc(2 * (size_t)P * sizeof(size_t));
    if (v->counts == NULL)
        return HINT_ERR_NOMEM;
    v->displs = v->counts + P;
    size_t size = dt_size(t), off = 0;
    ptrdiff_t ext = dt_extent(t);
    bool derived = coll_is_derived(t);
    for (int p = 0; p < P; p++) {
        v->counts[p] = counts[p] * size;
        v->displs[p] = derived ? off : displs[p] * (size_t)ext;
        off += v->counts[p];
    }
    if (!derived)
        return HINT_SUCCESS;
    if ((v->tmp = malloc(off ? off : 1)) == NULL)
        return HINT_ERR_NOMEM;
    for (int p = 0; fill && p < P; p++) {
        size_t done;
        int st = dt_pack_range_rep((const char *)buf + (ptrdiff_t)displs[p] * ext, counts[p], t, 0,
                                   (char *)v->tmp + v->displs[p], v->counts[p], &done, DT_REP_AUTO);
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

static int vunpack(const struct vlayout *v, void *buf, const size_t *counts, const size_t *displs, hint_type t, int P)
{
    if (v->tmp == NULL)
        return HINT_SUCCESS;
    ptrdiff_t ext = dt_extent(t);
    for (int p = 0; p < P; p++) {
        size_t done;
        int st = dt_unpack_range_rep((char *)v->tmp + v->displs[p], v->counts[p], 0,
                                     (char *)buf + (ptrdiff_t)displs[p] * ext, counts[p], t, &done, DT_REP_AUTO);
        if (st != HINT_SUCCESS)
            return st;
    }
    return HINT_SUCCESS;
}

static void vfree(struct vlayout *v)
{
    free(v->tmp);
    free(v->counts);
}

int coll_derived_alltoallv(const void *s, const size_t *sc, const size_t *sd, hint_type stype, void *r,
                           const size_t *rc, const size_t *rd, hint_type rtype, hint_group g)
{
    int P;
    if (hint_group_size(g, &P) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    if (rc == NULL || rd == NULL || (s != HINT_IN_PLACE && (sc == NULL || sd == NULL)))
        return HINT_ERR_ARG;
    if (s != HINT_IN_PLACE) {
        int st = coll_same_kind(stype, rtype);
        if (st != HINT_SUCCESS)
            return st;
    }
    struct vlayout sv = {0}, rv = {0};
    bool in_place = s == HINT_IN_PLACE;
    int st = vbytes(r, rc, rd, rtype, P, in_place, &rv);
    if (st == HINT_SUCCESS && !in_place)
        st = vbytes(s, sc, sd, stype, P, true, &sv);
    if (st == HINT_SUCCESS) {
        void *rp = rv.tmp ? rv.tmp : r;
        if (in_place)
            st = hint_alltoallv(HINT_IN_PLACE, NULL, NULL, HINT_BYTE, rp, rv.counts, rv.displs, HINT_BYTE, g);
        else
            st = hint_alltoallv(sv.tmp ? sv.tmp : s, sv.counts, sv.displs, HINT_BYTE, rp, rv.counts, rv.displs,
                                HINT_BYTE, g);
    }
    st = keep_first(st, st == HINT_SUCCESS ? vunpack(&rv, r, rc, rd, rtype, P) : HINT_SUCCESS);
    vfree(&sv);
    vfree(&rv);
    return st;
}

/* gatherv (op 0), scatterv (1), allgatherv (2): the v side is the receive side except for
   scatterv. */
int coll_derived_vblocks(int op, const void *s, const size_t *sc_v, size_t sc, hint_type stype, void *r,
                         const size_t *rc_v, size_t rc, const size_t *displs, hint_type rtype, int root,
                         hint_group g)
{
    int me, P;
    if (hint_group_rank(g, &me) != HINT_SUCCESS || hint_group_size(g, &P) != HINT_SUCCESS)
        return HINT_ERR_GROUP;
    bool v_here = op == 2 || me == root;
    const size_t *vcounts = op == 1 ? sc_v : rc_v;
    hint_type vtype = op == 1 ? stype : rtype;
    if (v_here && (vcounts == NULL || displs == NULL))
        return HINT_ERR_ARG;
    bool in_place = op == 1 ? r == HINT_IN_PLACE : s == HINT_IN_PLACE;
    if (!in_place && (op == 2 || me == root)) {
        int st = coll_same_kind(stype, rtype);
        if (st != HINT_SUCCESS)
            return st;
    }
    struct vlayout v = {0};
    void *ptmp = NULL;
    const void *pp = NULL;
    size_t pbytes = 0;
    int st = HINT_SUCCESS;
    /* the v side: packed blocks when sending (scatterv root) or in place, else a receive area */
    if (v_here)
        st = vbytes(op == 1 ? s : r, vcounts, displs, vtype, P, op == 1 || in_place, &v);
    /* the plain side */
    if (st == HINT_SUCCESS && !in_place) {
        if (op == 1)
            st = recv_area(r, rc, rtype, &ptmp, (void **)&pp, &pbytes);
        else
            st = pack(s, sc, stype, &ptmp, &pp, &pbytes);
    }
    if (st == HINT_SUCCESS) {
        void *vbuf = v.tmp ? v.tmp : (op == 1 ? (void *)s : r);
        if (op == 0)
            st = hint_gatherv(in_place ? HINT_IN_PLACE : pp, pbytes, HINT_BYTE, vbuf, v.counts, v.displs,
                              HINT_BYTE, root, g);
        else if (op == 1)
            st = hint_scatterv(vbuf, v.counts, v.displs, HINT_BYTE, in_place ? HINT_IN_PLACE : (void *)pp, pbytes,
                               HINT_BYTE, root, g);
        else
            st = hint_allgatherv(in_place ? HINT_IN_PLACE : pp, pbytes, HINT_BYTE, vbuf, v.counts, v.displs,
                                 HINT_BYTE, g);
    }
    if (st == HINT_SUCCESS && v_here && op != 1)
        st = vunpack(&v, r, vcounts, displs, vtype, P);
    if (st == HINT_SUCCESS && op == 1 && !in_place)
        st = unpack(ptmp, pbytes, r, rc, rtype);
    free(ptmp);
    vfree(&v);
    return st;
}
