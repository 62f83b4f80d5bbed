/*
 * runtime/p2p.h — point to point for the runtime's and the collectives' own messages: no
 * argument checks, an explicit context (a group's ctx + 1 keeps collective traffic apart from
 * the user's).
 */
#ifndef HINT_RUNTIME_P2P_H
#define HINT_RUNTIME_P2P_H

#include <stddef.h>
#include <stdint.h>

#include "hint.h"

int p2p_isend(const void *buf, size_t count, hint_type t, int dest, int tag, hint_group g, uint32_t ctx,
              hint_request *r);
int p2p_irecv(void *buf, size_t count, hint_type t, int source, int tag, hint_group g, uint32_t ctx,
              hint_request *r);
/* Blocking byte helpers on the group's collective context. */
int p2p_send_bytes(const void *buf, size_t bytes, int dest, int tag, hint_group g);
int p2p_recv_bytes(void *buf, size_t bytes, int source, int tag, hint_group g);
int p2p_sendrecv_bytes(const void *sbuf, size_t sbytes, int dest, void *rbuf, size_t rbytes, int source, int tag,
                       hint_group g);
/* Wait without the public checks; returns the request's error. */
int p2p_wait(hint_request *r, hint_status *st);
int p2p_waitall(size_t n, hint_request r[]);

#endif
