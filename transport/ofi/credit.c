/*
 * transport/ofi/credit.c — flow control of the large eager pool (p2p.c): credits per peer.
 *
 * A large eager message (above HINT_OFI_EAGER_MAX) arrives whole; while no receive has taken it,
 * it holds a large buffer or a copy of itself. So every rank grants each rank on another node a
 * window of credits, published with its address (fabric.c): HINT_OFI_LARGE_UNEXPECTED_MAX over
 * (those ranks x HINT_OFI_LARGE_MAX), at most OFI_CREDIT_MAX, and no large pool at all when that
 * is below one (64 with one rank on other nodes at the defaults: a window of 64 sends, as
 * hint-bench bandwidth's, goes whole). A sender spends a credit per large eager message (a compare on the fast path);
 * with none left the message goes by rendezvous (RTS), which leaves only its header unexpected.
 * Both paths share one sequence per sender (p2p.c), so non-overtaking holds across them. Large
 * eager messages unexpected at a rank then hold at most window x ranks-on-other-nodes x
 * (HINT_OFI_LARGE_MAX + 32) bytes, the bound and their headers, and their copies never need
 * HINT_OFI_UNEXPECTED_MAX.
 *
 * The receiver owes a credit back once a receive has taken the message (matched on arrival or
 * later: p2p.c's release_msg). What it owes a rank rides in the header of the next control
 * message it sends there (ofi_hdr.credits: a ping-pong's reply brings the credit home with no
 * message of its own); from half the window on, the next progress pass sends it alone in a
 * header-only OFI_CREDIT message (unless a reply took it first). Credits add up in any order, so
 * they travel outside the sequence and are counted as a header arrives, even one held for order.
 * A credit message needs neither a posted receive nor a credit, so no return can deadlock: two
 * ranks that flood each other before posting receives fall back to rendezvous at the window, and
 * each returns credits as its receives take messages. A rank about to sleep (fabric.c's
 * ofi_sleep_arm) first sends alone whatever it owes, however little: no reply of its may leave for
 * a long time, and meanwhile its senders would go by rendezvous for want of those credits.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"
#include "transport/ofi/ofi_int.h"

struct ofi_credits ofi_cr;

static int remote_ranks(void) { return rt.boot.size - rt_node_size(rt_node_of(rt.boot.rank)); }

static size_t large_slot(size_t large) { return (sizeof(struct ofi_hdr) + large + 63) / 64 * 64; }

int ofi_credit_window(size_t large)
{
    int remote = remote_ranks();
    if (remote <= 0 || large == 0)
        return 0;
    size_t w = rt_cfg_size("HINT_OFI_LARGE_UNEXPECTED_MAX") / ((size_t)remote * large);
    return w > OFI_CREDIT_MAX ? OFI_CREDIT_MAX : (int)w;
}

int ofi_credit_init(size_t large)
{
    int n = rt.boot.size;
    memset(&ofi_cr, 0, sizeof ofi_cr);
    ofi_cr.window = large ? ofi_credit_window(large) : 0;
    ofi_cr.batch = (ofi_cr.window + 1) / 2;
    ofi_cr.bound = (size_t)ofi_cr.window * (size_t)remote_ranks() * large_slot(large);
    ofi_cr.have = malloc((size_t)n);
    ofi_cr.owed = calloc((size_t)n, 1);
    ofi_cr.listed = calloc((size_t)n, 1);
    ofi_cr.due = malloc((size_t)n * sizeof *ofi_cr.due);
    ofi_cr.owing = malloc((size_t)n * sizeof *ofi_cr.owing);
    ofi_cr.owing_listed = calloc((size_t)n, 1);
    if (ofi_cr.have == NULL || ofi_cr.owed == NULL || ofi_cr.listed == NULL || ofi_cr.due == NULL ||
        ofi_cr.owing == NULL || ofi_cr.owing_listed == NULL)
        return HINT_ERR_NOMEM;
    for (int w = 0; w < n; w++)
        ofi_cr.have[w] = ofi.large_window[w];
    return HINT_SUCCESS;
}

/* Unexpected messages a rank may hold in large copies at once (match entries to reserve). */
size_t ofi_credit_held_max(void) { return (size_t)ofi_cr.window * (size_t)remote_ranks(); }

void ofi_credit_taken(int src)
{
    if (!ofi_cr.owing_listed[src]) {
        ofi_cr.owing_listed[src] = 1;
        ofi_cr.owing[ofi_cr.nowing++] = src;
    }
    if (++ofi_cr.owed[src] >= ofi_cr.batch && !ofi_cr.listed[src]) {
        ofi_cr.listed[src] = 1;
        ofi_cr.due[ofi_cr.ndue++] = src;
    }
}

/* Credits a failed header carried back, owed again and listed as ofi_credit_taken lists them, so
   that the flushes (from half the window, and before sleeping) see them. */
void ofi_credit_owe_again(int peer, uint8_t n)
{
    if (n == 0)
        return;
    ofi_cr.owed[peer] = (uint8_t)(ofi_cr.owed[peer] + n);
    if (!ofi_cr.owing_listed[peer]) {
        ofi_cr.owing_listed[peer] = 1;
        ofi_cr.owing[ofi_cr.nowing++] = peer;
    }
    if (ofi_cr.owed[peer] >= ofi_cr.batch && !ofi_cr.listed[peer]) {
        ofi_cr.listed[peer] = 1;
        ofi_cr.due[ofi_cr.ndue++] = peer;
    }
}

/* Credits owed from half the window on, each alone (p2p.c's ofi_send_alone); those a reply
   took meanwhile need nothing. What cannot go now waits for the next pass. */
void ofi_credit_flush(void)
{
    while (ofi_cr.ndue > 0) {
        int peer = ofi_cr.due[ofi_cr.ndue - 1];
        uint8_t n = ofi_cr.owed[peer];
        if (n >= ofi_cr.batch) {
            struct ofi_hdr h = {.src = (uint32_t)rt.boot.rank, .kind = OFI_CREDIT, .credits = n};
            if (!ofi_send_alone(peer, &h))
                return;
            ofi_cr.owed[peer] = 0;
            ofi_cr.alone++;
        }
        ofi_cr.listed[peer] = 0;
        ofi_cr.ndue--;
    }
}

/* Every credit still owed, each peer's alone (those a reply took need nothing); what cannot go
   now stays listed and false says so: the rank then polls instead of sleeping. */
bool ofi_credit_flush_owed(void)
{
    while (ofi_cr.nowing > 0) {
        int peer = ofi_cr.owing[ofi_cr.nowing - 1];
        uint8_t n = ofi_cr.owed[peer];
        if (n > 0) {
            struct ofi_hdr h = {.src = (uint32_t)rt.boot.rank, .kind = OFI_CREDIT, .credits = n};
            if (!ofi_send_alone(peer, &h))
                return false;
            ofi_cr.owed[peer] = 0;
            ofi_cr.alone++;
            ofi_cr.before_sleep++;
        }
        ofi_cr.owing_listed[peer] = 0;
        ofi_cr.nowing--;
    }
    return true;
}

void ofi_credit_copied(long bytes)
{
    ofi_cr.copied += (size_t)bytes;
    if (ofi_cr.copied > ofi_cr.copied_peak)
        ofi_cr.copied_peak = ofi_cr.copied;
}

void ofi_credit_fini(void)
{
    if (ofi_cr.have && rt_cfg_long("HINT_P2P_STATS"))
        RT_ERR("ofi", "large eager messages: %lu sent, %lu by rendezvous for want of a credit (window %d per rank); "
               "credits returned alone %lu times (%lu before sleeping); unexpected ones copied out at most %zu bytes "
               "(bound %zu)",
               ofi_cr.spent, ofi_cr.starved, ofi_cr.window, ofi_cr.alone, ofi_cr.before_sleep, ofi_cr.copied_peak,
               ofi_cr.bound);
    free(ofi_cr.have);
    free(ofi_cr.owed);
    free(ofi_cr.listed);
    free(ofi_cr.due);
    free(ofi_cr.owing);
    free(ofi_cr.owing_listed);
    memset(&ofi_cr, 0, sizeof ofi_cr);
}
