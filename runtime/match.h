/*
 * runtime/match.h — what the public point-to-point calls ask of matching beyond posting a
 * receive (runtime/match.c): probes, matched probes and the cancel of a posted receive. The
 * transports' side of matching is in runtime/transport.h.
 */
#ifndef HINT_RUNTIME_MATCH_H
#define HINT_RUNTIME_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hint.h"

struct rt_transport;
struct hint_request_s;

/* An unexpected message's envelope: an entry of match.c's pool. hint_mprobe hands one out as a
   hint_message, taken off the queue so that no receive can match it until hint_mrecv. */
struct hint_message_s {
    const struct rt_transport *tp;
    void *msg;             /* the transport's handle */
    int src, tag;          /* world rank of the sender, the message's tag */
    uint32_t ctx;
    bool taken;            /* handed out by hint_mprobe and not received yet */
    hint_group group;      /* taken: the group it was probed on */
    struct hint_message_s *next;
};

/* The oldest unexpected message on ctx from world rank src (-1: any) with tag (-1: any), left
   where it is; NULL when none. */
struct hint_message_s *rt_match_peek(uint32_t ctx, int src, int tag);
/* The same, taken off the queue (hint_mprobe); NULL when none. */
struct hint_message_s *rt_match_take(uint32_t ctx, int src, int tag);
/* Packed bytes of an unexpected message (0 when its transport cannot tell). */
size_t rt_match_bytes(const struct hint_message_s *m);
/* Whether m is a message rt_match_take handed out and nobody received yet (never reads memory
   that is not one of the pool's entries). */
bool rt_match_message_live(const struct hint_message_s *m);
/* Deliver taken message m into receive r (r->peer the sender) and give m's entry back. */
void rt_match_deliver_taken(struct hint_message_s *m, struct hint_request_s *r);
/* Take receive r off the posted list: true when it was there (not matched yet). */
bool rt_match_cancel(struct hint_request_s *r);

#endif
