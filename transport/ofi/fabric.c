/*
 * transport/ofi/fabric.c — the libfabric transport's set-up and its ops table: the provider
 * (HINT_OFI_PROVIDER, else libfabric's own FI_PROVIDER filter, else the preferred one fi_getinfo
 * offers: provider_rank),
 * one FI_EP_RDM endpoint with tagged messages, an FI_AV_TABLE filled with the addresses of the
 * ranks on other nodes (exchanged through the bootstrap store as "ofi.<rank>"), one completion
 * queue read by the progress hook, and the wait object that lets a waiting rank sleep.
 * A job on one node opens no fabric: the transport then reaches no rank.
 *
 * Sleeping: the rank sleeps on its shm doorbell (the sleeper transport). Before it does,
 * sleep_arm asks fi_trywait whether the CQ may be waited on; when it may, a watcher thread
 * blocked in epoll on the CQ's wait fd (FI_GETWAIT, armed one-shot) rings the rank's own doorbell
 * when the fd turns readable. The watcher never touches the CQ: the rank reads it when it wakes.
 * A provider without a wait fd gets bounded sleeps instead.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "runtime/thread.h"
#include "runtime/transport.h"
#include "transport/ofi/ofi.h"
#include "transport/ofi/ofi_int.h"

/* The longest a rank sleeps when the network cannot ring its doorbell. */
#define OFI_POLL_SLEEP_NS (200 * 1000L)
/* How long after the network's last completion a waiting rank with requests out keeps polling
   instead of sleeping (ofi_sleep_arm): longer than a 4 MiB message takes between hosts. */
#define OFI_ACTIVE_POLL_NS (10 * 1000 * 1000L)

struct ofi_state ofi = {.wait_fd = -1};

static struct {
    int epfd, evfd;    /* the watcher's epoll set and the eventfd that stops it */
    pthread_t thread;
    bool running;
    unsigned long rings;             /* doorbells the watcher rang (it alone writes it) */
    unsigned long rings_seen, done_seen; /* at the last arming: rings, ofi_completions() */
    int idle_rings;                  /* rings in a row after which the CQ held nothing */
} W = {-1, -1, 0, false, 0, 0, 0, 0};

void ofi_fatal(const char *what, int rc)
{
    RT_ERR("ofi", "%s failed: %s (%d); the job cannot go on", what, fi_strerror(-rc), rc);
    boot_abort(HINT_ERR_TRANSPORT, "libfabric transport failed");
}

/* Registers buf when the provider needs it: always for remote access (FI_REMOTE_READ), for local
   operations only under FI_MR_LOCAL. The provider's mr_mode decides the rest: a key of our own
   choosing unless FI_MR_PROV_KEY (unique per domain: a counter), and under FI_MR_ENDPOINT the
   region is bound to the endpoint and enabled before use. *key is what a peer names it by. */
int ofi_register_key(void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc, uint64_t *key)
{
    *mr = NULL;
    *desc = NULL;
    bool remote = (access & (FI_REMOTE_READ | FI_REMOTE_WRITE)) != 0;
    if ((!ofi.mr_local && !remote) || len == 0)
        return HINT_SUCCESS;
    uint64_t requested = (ofi.mr_mode & FI_MR_PROV_KEY) ? 0 : ofi.next_key++;
    const char *what = "fi_mr_reg";
    int rc = fi_mr_reg(ofi.domain, buf, len, access, 0, requested, 0, mr, NULL);
    if (rc == 0 && (ofi.mr_mode & FI_MR_ENDPOINT)) {
        what = "fi_mr_bind";
        rc = fi_mr_bind(*mr, &ofi.ep->fid, 0);
        if (rc == 0) {
            what = "fi_mr_enable";
            rc = fi_mr_enable(*mr);
        }
    }
    if (rc) {
        RT_ERR("ofi", "%s of %zu bytes failed: %s", what, len, fi_strerror(-rc));
        if (*mr)
            fi_close(&(*mr)->fid);
        *mr = NULL;
        return HINT_ERR_TRANSPORT;
    }
    *desc = fi_mr_desc(*mr);
    if (key)
        *key = fi_mr_key(*mr);
    return HINT_SUCCESS;
}

int ofi_register(void *buf, size_t len, uint64_t access, struct fid_mr **mr, void **desc)
{
    return ofi_register_key(buf, len, access, mr, desc, NULL);
}

/* ---- choosing the provider ---- */

static const char *wanted_provider(void)
{
    const char *p = rt_cfg_str("HINT_OFI_PROVIDER");
    return p && *p ? p : NULL;
}

/* What hint needs: RDM, tagged messages (and RMA reads if asked), our context for every
   operation; registration modes it can follow (local descriptors, allocated virtual addresses,
   provider keys, regions bound to the endpoint); send-after-send order if asked. */
static struct fi_info *make_hints(const char *prov, bool sas, bool rma)
{
    struct fi_info *h = fi_allocinfo();
    if (h == NULL)
        return NULL;
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_TAGGED | (rma ? FI_RMA | FI_READ | FI_REMOTE_READ : 0);
    h->mode = FI_CONTEXT | FI_CONTEXT2;
    h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ENDPOINT;
    h->domain_attr->threading = FI_THREAD_DOMAIN;
    if (sas)
        h->tx_attr->msg_order = h->rx_attr->msg_order = FI_ORDER_SAS;
    if (prov)
        h->fabric_attr->prov_name = strdup(prov);
    return h;
}

static int getinfo(struct fi_info *hints, struct fi_info **out)
{
    *out = NULL;
    int rc = hints ? fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, out) : -FI_ENOMEM;
    fi_freeinfo(hints);
    return rc;
}

/* Whether a provider of that name exists here at all (to say which of two things is wrong). */
static bool provider_exists(const char *prov)
{
    struct fi_info *h = fi_allocinfo(), *info = NULL;
    if (h == NULL)
        return false;
    h->fabric_attr->prov_name = strdup(prov);
    int rc = getinfo(h, &info);
    fi_freeinfo(info);
    return rc == 0;
}

/* How much a provider is preferred when none is named (lower first; -1: never). The hardware
   ones first, in libfabric's order; then the tcp stack's native RDM endpoint (`net` in libfabric
   1.17, plain `tcp` from 1.18): a ping-pong message costs it 3 system calls (epoll_wait,
   recvfrom, sendto, as UCX's tcp transport) where tcp;ofi_rxm takes 6-7 (its tcp CQ's signal fd
   is written and read around each completion, and polled once more); then the tcp stack under a
   utility layer (tcp;ofi_rxm), then the rest (sockets, udp;ofi_rxd). shm reaches no other
   node. See docs/BENCHMARKS.md, "Across two hosts". */
static int provider_rank(const char *name)
{
    static const char *const software[] = {"net", "tcp", "sockets", "udp", "shm"};
    if (strcmp(name, "shm") == 0)
        return -1;
    if (strcmp(name, "net") == 0 || strcmp(name, "tcp") == 0)
        return 1;
    if (strcmp(name, "tcp;ofi_rxm") == 0)
        return 2;
    size_t core = strcspn(name, ";"); /* "udp;ofi_rxd": the core provider under the utility one */
    for (size_t i = 0; i < sizeof software / sizeof software[0]; i++)
        if (strlen(software[i]) == core && strncmp(name, software[i], core) == 0)
            return 3;
    return 0;
}

/* The preferred entry of list (rank below *best, which it lowers), detached and returned; NULL
   when none beats *best. The list is freed. */
static struct fi_info *take_preferred(struct fi_info *list, int *best)
{
    struct fi_info *pick = NULL;
    for (struct fi_info *i = list; i; i = i->next) {
        int r = provider_rank(i->fabric_attr->prov_name);
        if (r >= 0 && r < *best) {
            *best = r;
            pick = i;
        }
    }
    pick = pick ? fi_dupinfo(pick) : NULL;
    fi_freeinfo(list);
    return pick;
}

/* The provider's info; NULL with *why saying what is missing. RMA reads with send-after-send
   order are asked first (large messages then go by fi_read, p2p.c), then tagged messages alone
   with and without the order; a provider without it still works (p2p.c reorders by sequence
   number). Named (HINT_OFI_PROVIDER, or FI_PROVIDER's filter): the first entry offered. Not
   named: the best by provider_rank, then by that order of hints. */
static struct fi_info *choose_provider(const char **why)
{
    static char msg[512];
    const char *prov = wanted_provider();
    struct fi_info *info = NULL;
    const char *fi_prov = getenv("FI_PROVIDER");
    if (prov == NULL && (fi_prov == NULL || *fi_prov == '\0')) {
        int best = 1 << 30;
        struct fi_info *pick = NULL, *list;
        for (int level = 0; level < 3; level++) {
            if (getinfo(make_hints(NULL, level < 2, level == 0), &list) != 0)
                continue;
            struct fi_info *better = take_preferred(list, &best);
            if (better) {
                fi_freeinfo(pick);
                pick = better;
            }
        }
        if (pick)
            return pick;
    } else if (getinfo(make_hints(prov, true, true), &info) == 0 || getinfo(make_hints(prov, true, false), &info) == 0 ||
               getinfo(make_hints(prov, false, false), &info) == 0) {
        return info;
    }
    const char *name = prov ? prov : fi_prov;
    if (name == NULL || *name == '\0')
        snprintf(msg, sizeof msg, "no libfabric provider offers FI_EP_RDM endpoints with FI_TAGGED messages "
                 "here; install one (libfabric's tcp provider gives tcp;ofi_rxm) or run on one node");
    else if (!provider_exists(name))
        snprintf(msg, sizeof msg, "no libfabric provider '%s' here (from %s); unset it or name one this "
                 "libfabric has (tcp;ofi_rxm is always built)", name, prov ? "HINT_OFI_PROVIDER" : "FI_PROVIDER");
    else
        snprintf(msg, sizeof msg, "libfabric provider '%s' (from %s) offers no FI_EP_RDM endpoint with FI_TAGGED "
                 "messages, which hint needs between nodes; choose another with HINT_OFI_PROVIDER (e.g. "
                 "tcp;ofi_rxm)", name, prov ? "HINT_OFI_PROVIDER" : "FI_PROVIDER");
    *why = msg;
    return NULL;
}

const char *ofi_provider_name(const char **why)
{
    static char name[128];
    if (ofi.info)
        return ofi.info->fabric_attr->prov_name;
    struct fi_info *info = choose_provider(why);
    if (info == NULL)
        return NULL;
    snprintf(name, sizeof name, "%s", info->fabric_attr->prov_name);
    fi_freeinfo(info);
    return name;
}

/* ---- opening the fabric ---- */

/* A CQ with a wait fd when the provider has one (so a waiting rank can sleep), else none. */
static int open_cq(void)
{
    struct fi_cq_attr attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_FD, .size = 0};
    if (fi_cq_open(ofi.domain, &attr, &ofi.cq, NULL) == 0) {
        if (fi_control(&ofi.cq->fid, FI_GETWAIT, &ofi.wait_fd) != 0)
            ofi.wait_fd = -1;
        return 0;
    }
    attr.wait_obj = FI_WAIT_NONE;
    ofi.wait_fd = -1;
    return fi_cq_open(ofi.domain, &attr, &ofi.cq, NULL);
}

static int open_endpoint(void)
{
    struct fi_av_attr av = {.type = FI_AV_TABLE, .count = (size_t)rt.boot.size};
    int rc;
    const char *what = "fi_fabric";
    if ((rc = fi_fabric(ofi.info->fabric_attr, &ofi.fabric, NULL)))
        goto fail;
    what = "fi_domain";
    if ((rc = fi_domain(ofi.fabric, ofi.info, &ofi.domain, NULL)))
        goto fail;
    what = "fi_av_open";
    if ((rc = fi_av_open(ofi.domain, &av, &ofi.av, NULL)))
        goto fail;
    what = "fi_cq_open";
    if ((rc = open_cq()))
        goto fail;
    what = "fi_endpoint";
    if ((rc = fi_endpoint(ofi.domain, ofi.info, &ofi.ep, NULL)))
        goto fail;
    what = "fi_ep_bind";
    if ((rc = fi_ep_bind(ofi.ep, &ofi.av->fid, 0)) || (rc = fi_ep_bind(ofi.ep, &ofi.cq->fid, FI_TRANSMIT | FI_RECV)))
        goto fail;
    what = "fi_enable";
    if ((rc = fi_enable(ofi.ep)))
        goto fail;
    return HINT_SUCCESS;
fail:
    RT_ERR("ofi", "%s on provider %s failed: %s; ranks on other nodes cannot be reached", what,
           ofi.info->fabric_attr->prov_name, fi_strerror(-rc));
    return HINT_ERR_TRANSPORT;
}

/* HINT_OFI_LARGE_MAX, or 0 when no large pool is kept: not above HINT_OFI_EAGER_MAX, or a
   provider that cannot send a header and a payload in one message (iov_limit 1), or too many
   ranks on other nodes for one credit each within HINT_OFI_LARGE_UNEXPECTED_MAX (credit.c), and
   within its max_msg_size. */
size_t ofi_large_max(void)
{
    size_t large = rt_cfg_size("HINT_OFI_LARGE_MAX"), hdr = sizeof(struct ofi_hdr);
    if (large <= rt_cfg_size("HINT_OFI_EAGER_MAX") || rt_cfg_long("HINT_OFI_LARGE_BUFFERS") == 0 ||
        ofi.info->tx_attr->iov_limit < 2)
        return 0;
    large = large + hdr > ofi.chunk ? ofi.chunk - hdr : large;
    return ofi_credit_window(large) > 0 ? large : 0;
}

/* What a rank publishes: the largest eager payloads its pools take, the large eager credits it
   grants each sender, then its endpoint name. */
struct ofi_card {
    uint32_t eager_max;
    uint32_t large_max;
    uint32_t large_window;
    uint32_t len;
    char name[240];
};

static int publish_address(void)
{
    size_t large = ofi_large_max();
    struct ofi_card c = {.eager_max = (uint32_t)rt_cfg_size("HINT_OFI_EAGER_MAX"), .large_max = (uint32_t)large,
                         .large_window = large ? (uint32_t)ofi_credit_window(large) : 0};
    size_t len = sizeof c.name;
    int rc = fi_getname(&ofi.ep->fid, c.name, &len);
    if (rc) {
        RT_ERR("ofi", "fi_getname failed: %s (address of %zu bytes?)", fi_strerror(-rc), len);
        return HINT_ERR_TRANSPORT;
    }
    c.len = (uint32_t)len;
    char key[32];
    snprintf(key, sizeof key, "ofi.%d", rt.boot.rank);
    return boot_put(key, &c, sizeof c);
}

/* Every rank on another node into the AV (FI_AV_TABLE: one insert per peer, index = order). */
static int insert_peers(void)
{
    int n = rt.boot.size, st = HINT_SUCCESS;
    ofi.addr = malloc((size_t)n * sizeof *ofi.addr);
    ofi.eager_max = calloc((size_t)n, sizeof *ofi.eager_max);
    ofi.large_max = calloc((size_t)n, sizeof *ofi.large_max);
    ofi.large_window = calloc((size_t)n, sizeof *ofi.large_window);
    if (ofi.addr == NULL || ofi.eager_max == NULL || ofi.large_max == NULL || ofi.large_window == NULL)
        return HINT_ERR_NOMEM;
    for (int w = 0; w < n; w++) {
        ofi.addr[w] = FI_ADDR_NOTAVAIL;
        if (rt_same_node(w, rt.boot.rank))
            continue;
        struct ofi_card c;
        size_t len;
        char key[32];
        snprintf(key, sizeof key, "ofi.%d", w);
        CHECK_GOTO(boot_get(key, &c, sizeof c, &len), out);
        ofi.eager_max[w] = c.eager_max;
        ofi.large_max[w] = c.large_max;
        ofi.large_window[w] = (uint8_t)(c.large_window < OFI_CREDIT_MAX ? c.large_window : OFI_CREDIT_MAX);
        int rc = fi_av_insert(ofi.av, c.name, 1, &ofi.addr[w], 0, NULL);
        if (rc != 1) {
            RT_ERR("ofi", "fi_av_insert of rank %d's address failed (%d: %s); it cannot be reached", w, rc,
                   rc < 0 ? fi_strerror(-rc) : "not inserted");
            st = HINT_ERR_TRANSPORT;
            goto out;
        }
    }
out:
    return st;
}

/* ---- the watcher thread ---- */

static void *watch(void *arg)
{
    (void)arg;
    rt_thread_own_files(W.epfd, W.evfd);
    for (;;) {
        struct epoll_event ev[2];
        int n = epoll_wait(W.epfd, ev, 2, -1);
        for (int i = 0; i < n; i++) {
            if (ev[i].data.fd == W.evfd)
                return NULL;
            __atomic_add_fetch(&W.rings, 1, __ATOMIC_RELAXED);
            rt_wake(rt.boot.rank); /* rings this rank's own bell: it reads the CQ when it wakes */
        }
    }
}

/* The epoll set holds the CQ's wait fd disarmed (one-shot, no events) until sleep_arm arms it. */
static int start_watcher(void)
{
    if (ofi.wait_fd < 0)
        return HINT_SUCCESS;
    W.epfd = epoll_create1(EPOLL_CLOEXEC);
    W.evfd = eventfd(0, EFD_CLOEXEC);
    struct epoll_event stop = {.events = EPOLLIN, .data.fd = W.evfd};
    struct epoll_event cq = {.events = EPOLLONESHOT, .data.fd = ofi.wait_fd};
    if (W.epfd < 0 || W.evfd < 0 || epoll_ctl(W.epfd, EPOLL_CTL_ADD, W.evfd, &stop) ||
        epoll_ctl(W.epfd, EPOLL_CTL_ADD, ofi.wait_fd, &cq)) {
        RT_ERR("ofi", "epoll set-up for the CQ's wait fd failed (%m); waiting ranks poll the network");
        ofi.wait_fd = -1;
        return HINT_SUCCESS;
    }
    /* Signals stay with the rank's own thread (hintrun's SIGURG, the user's handlers). */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    W.running = pthread_create(&W.thread, NULL, watch, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!W.running) {
        RT_ERR("ofi", "no watcher thread could start; waiting ranks poll the network");
        ofi.wait_fd = -1;
    }
    return HINT_SUCCESS;
}

static void stop_watcher(void)
{
    if (W.running) {
        uint64_t one = 1;
        if (write(W.evfd, &one, sizeof one) != sizeof one)
            RT_ERR("ofi", "could not stop the watcher thread (%m)");
        else
            pthread_join(W.thread, NULL);
        W.running = false;
    }
    if (W.epfd >= 0)
        close(W.epfd);
    if (W.evfd >= 0)
        close(W.evfd);
    W.epfd = W.evfd = -1;
}

/* ---- the ops table ---- */

static void ofi_fini(void);

static int ofi_init(void)
{
    if (rt.boot.nnodes <= 1)
        return HINT_SUCCESS;
    const char *why = NULL;
    int st = HINT_SUCCESS;
    ofi.info = choose_provider(&why);
    if (ofi.info == NULL) {
        RT_ERR("ofi", "%s", why);
        return HINT_ERR_TRANSPORT;
    }
    ofi.mr_mode = ofi.info->domain_attr->mr_mode;
    ofi.mr_local = (ofi.mr_mode & FI_MR_LOCAL) != 0;
    ofi.rma = (ofi.info->caps & (FI_RMA | FI_READ | FI_REMOTE_READ)) == (FI_RMA | FI_READ | FI_REMOTE_READ);
    ofi.next_key = 1;
    ofi.chunk = ofi.info->ep_attr->max_msg_size;
    if (ofi.chunk == 0 || ofi.chunk > (1ull << 30))
        ofi.chunk = 1ull << 30;
    CHECK_GOTO(open_endpoint(), out);
    CHECK_GOTO(publish_address(), out);
    CHECK_GOTO(boot_fence(), out);
    CHECK_GOTO(insert_peers(), out);
    CHECK_GOTO(ofi_p2p_init(), out);
    CHECK_GOTO(start_watcher(), out);
out:
    return st;
}

static void close_fid(struct fid *f)
{
    if (f)
        fi_close(f);
}

static void ofi_fini(void)
{
    stop_watcher();
    if (ofi.ep)
        fi_close(&ofi.ep->fid); /* cancels the pool's receives before p2p.c frees their memory */
    ofi.ep = NULL;
    ofi_p2p_fini();
    close_fid(ofi.cq ? &ofi.cq->fid : NULL);
    close_fid(ofi.av ? &ofi.av->fid : NULL);
    /* A registration still open holds the domain (-FI_EBUSY): a leak of p2p.c's, said. */
    int rc = ofi.domain ? fi_close(&ofi.domain->fid) : 0;
    if (rc)
        RT_ERR("ofi", "closing the domain failed: %s (registrations left open)", fi_strerror(-rc));
    close_fid(ofi.fabric ? &ofi.fabric->fid : NULL);
    fi_freeinfo(ofi.info);
    free(ofi.addr);
    free(ofi.eager_max);
    free(ofi.large_max);
    free(ofi.large_window);
    ofi = (struct ofi_state){.wait_fd = -1};
}

static bool ofi_reaches(int world) { return ofi.ep != NULL && !rt_same_node(world, rt.boot.rank); }

/* Whether the CQ's wait fd woke this rank twice in a row with nothing in the CQ: libfabric 1.17's
   `net` provider answers fi_trywait with success without resetting the CQ's signal, so after its
   first completion the fd stays readable and an armed watcher would ring at once, every time (the
   rank and the watcher then take turns on the cores instead of sleeping). Such a rank sleeps
   bounded, as without a wait fd, until a completion comes; then the fd is tried again. */
static bool wait_fd_stuck(void)
{
    unsigned long rings = __atomic_load_n(&W.rings, __ATOMIC_RELAXED), done = ofi_completions();
    if (done != W.done_seen)
        W.idle_rings = 0;
    else if (rings != W.rings_seen && W.idle_rings < 2)
        W.idle_rings++;
    W.rings_seen = rings;
    W.done_seen = done;
    return W.idle_rings >= 2;
}

/* Did this rank read a completion in the last OFI_ACTIVE_POLL_NS? Asked only where a wait has
   passed its spin and yield windows, so the clock read costs nothing on a fast path; a count
   that moved since the last question counts as now. */
static bool network_active_recently(void)
{
    static unsigned long seen;
    static long active_ns;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    long now = ts.tv_sec * 1000000000L + ts.tv_nsec;
    unsigned long done = ofi_completions();
    if (done != seen) {
        seen = done;
        active_ns = now;
    }
    return now - active_ns < OFI_ACTIVE_POLL_NS;
}

/* Before any sleep: the large eager credits this rank owes, however few, go back alone
   (credit.c); false when the provider refused one for now. */
static bool owed_credits_sent(void) { return ofi_cr.nowing == 0 || ofi_credit_flush_owed(); }

/* -1: completions are waiting (read them); 0: the watcher rings the bell at the next one;
   a bound when nothing can ring it (no wait fd, one that stays readable, or sends waiting for
   the provider's queues). */
static long ofi_sleep_arm(void)
{
    if (ofi.ep == NULL)
        return 0;
    if (ofi.wait_fd < 0 || ofi_p2p_busy() || wait_fd_stuck()) {
        owed_credits_sent();
        return OFI_POLL_SLEEP_NS;
    }
    /* Poll (with a yield between passes) instead of sleeping while bytes of this rank's move
       (data operations, a large eager send), and, when the node's ranks fit its cores, while a
       request is in flight or a receive posted and the network completed something in the last
       OFI_ACTIVE_POLL_NS: a provider with manual data progress (tcp;ofi_rxm, net) moves the
       socket only inside this rank's calls, and a sleeper's wake through the wait fd and the
       watcher costs more than a message. Across two namespace hosts a 4 MiB ping-pong took
       1.73-1.80x fi_pingpong's time with sleeps, 1.12x without (docs/BENCHMARKS.md). A rank
       that waits longer for a peer still computing sleeps once the network has been quiet. */
    if (ofi_p2p_moving() || (!rt.boot.oversubscribed && (ofi_p2p_pending() > 0 || rt_match_posted() > 0) &&
                             network_active_recently()))
        return -1;
    if (!owed_credits_sent())
        return OFI_POLL_SLEEP_NS; /* the provider refused a credit return for now: bounded, as busy */
    struct fid *f = &ofi.cq->fid;
    int rc = fi_trywait(ofi.fabric, &f, 1);
    if (rc == -FI_EAGAIN)
        return -1;
    if (rc != FI_SUCCESS)
        return OFI_POLL_SLEEP_NS;
    struct epoll_event cq = {.events = EPOLLIN | EPOLLONESHOT, .data.fd = ofi.wait_fd};
    if (epoll_ctl(W.epfd, EPOLL_CTL_MOD, ofi.wait_fd, &cq))
        return OFI_POLL_SLEEP_NS;
    return 0;
}

static int ofi_stats(char *buf, size_t len)
{
    if (ofi_sent() == 0 && rt.boot.nnodes <= 1)
        return 0;
    int n = snprintf(buf, len, ", ofi %lu", ofi_sent());
    return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

static int ofi_stats_bytes(char *buf, size_t len)
{
    if (ofi_sent() == 0 && rt.boot.nnodes <= 1)
        return 0;
    int n = snprintf(buf, len, ", ofi %llu", ofi_sent_bytes());
    return n < 0 ? 0 : (size_t)n < len ? n : (int)len - 1;
}

const struct rt_transport ofi_transport = {
    .name = "ofi",
    .caps = 0,
    .init = ofi_init,
    .fini = ofi_fini,
    .reaches = ofi_reaches,
    .isend = ofi_isend,
    .send_now = ofi_send_now,
    .deliver = ofi_deliver,
    .msg_bytes = ofi_msg_bytes,
    .progress = ofi_progress,
    .pending = ofi_p2p_pending,
    .sleep_arm = ofi_sleep_arm,
    .stats = ofi_stats,
    .stats_bytes = ofi_stats_bytes,
};
