/*
 * transport/shm/shm.h — the shared-memory transport as the runtime sees it: its ops table
 * (runtime/transport.h), listed in lib/components.c. It reaches the ranks of this node, moves
 * messages through the channels of the node segment (p2p.c, cells.h), sleeps and wakes on the
 * ranks' doorbells and maps the node areas (segment.c, segment.h).
 */
#ifndef HINT_TRANSPORT_SHM_H
#define HINT_TRANSPORT_SHM_H

#include "runtime/transport.h"
#include "transport/shm/segment.h"

extern const struct rt_transport shm_transport;

/* ---- point to point over the node segment (transport/shm/p2p.c) ---- */
struct hint_request_s;
int shm_p2p_init(struct shm_node *n);
void shm_p2p_fini(void);
/* Post a send; r->peer is a world rank of this node. May complete at once. */
void shm_isend(struct hint_request_s *r);
bool shm_send_now(int world, const void *buf, size_t bytes, int tag, uint32_t ctx, int sig);
int shm_recv_now(int world, void *buf, size_t bytes, int tag, uint32_t ctx, int sig, size_t *got, int *got_tag);
/* Move a message matching paired with receive r (msg: its first cell). */
void shm_deliver(struct hint_request_s *r, int src, void *msg);
size_t shm_msg_bytes(const void *msg); /* an unexpected message's bytes (probe) */
void shm_progress(void);
/* Whether a progress pass would find something that rang no bell: a message in the cell its
   receiver looks at first, or a free cell for a send waiting for one. Read after `sleeping` is
   set, so a rank never sleeps through such an event (the senders ring only sleepers). */
bool shm_p2p_has_work(void);
/* Requests the transport holds (for finalize's leak report). */
int shm_pending(void);

#endif
