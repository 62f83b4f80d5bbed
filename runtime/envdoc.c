/*
 * runtime/envdoc.c — the configuration table (see envdoc.h). A variable read anywhere in hint has
 * a row here, and is read through rt_cfg_* (runtime/runtime.h) so that its parser, range and
 * default are these. To add a variable: add its row in the section of its layer, read it with
 * rt_cfg_*, regenerate README.md's table with `hint_info --env --markdown`.
 */
#include <stdio.h>
#include <string.h>

#include "runtime/envdoc.h"

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})
#define KIB (1LL << 10)
#define MIB (1LL << 20)
#define GIB (1LL << 30)
#define TIB (1LL << 40)
#define LAUNCHER(var, what) {.name = var, .kind = RT_ENV_LAUNCHER, .dflt = "", .meaning = what}

const struct rt_env_var rt_env_vars[] = {
    /* ---- collectives/ ---- */
    {.name = "HINT_<OP>", .kind = RT_ENV_FAMILY, .dflt = "auto",
     .meaning = "force a collective's algorithm, e.g. HINT_ALLTOALL=pairwise (names: hint_info --algorithms); "
                "an unknown name is reported and the defaults run"},
    {.name = "HINT_I<OP>", .kind = RT_ENV_FAMILY, .dflt = "auto",
     .meaning = "force a nonblocking collective's algorithm, e.g. HINT_IALLTOALL=linear (heap: single-copy over the "
                "shared heap; the others: message schedules; hint_info --algorithms); unset: HINT_<OP> when it names "
                "one of them; an unknown name is reported and the defaults run"},
    {.name = "HINT_TUNING_FILE", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "JSON tuning file (from hint-tune or by hand; format in collectives/rules.h, as `hint_info --rules` "
                "prints the built-in rules) choosing algorithm and copy mode per operation, group shape and size"},
    {.name = "HINT_AUTOTUNE", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: online autotuning (alltoall(v): the shared-heap orders; allgather(v): Morton and the "
                "message-based algorithms; each 1 warm-up + 3 timed runs per operation, group and block size "
                "(allgatherv: receive counts; alltoallv: once per group), never per buffer address; the ranks "
                "agree before each trial call; all keep the same fastest)"},
    {.name = "HINT_COLL_FALLBACK", .kind = RT_ENV_ENUM, .dflt = "error", .choices = NAMES("error", "warn", "silent"),
     .meaning = "when a forced algorithm cannot run: error (the call returns HINT_ERR_UNSUPPORTED), warn or "
                "silent (run the default)"},
    {.name = "HINT_COLL_STATS", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: each rank prints at finalize how many derived-type bcast/alltoall(v)/allgather(v) calls were "
                "copied straight from the layouts and how many were packed, and per operation how many copy-order "
                "calls ran on the shared heap, through CMA (a buffer off the heap; with derived types as iovecs) "
                "or fell back (CMA refused, no piece list for a derived type), and how many had a type's piece "
                "list copied to the shared heap or read through CMA"},
    {.name = "HINT_COLL_TYPED", .kind = RT_ENV_BOOL, .dflt = "1",
     .meaning = "0: derived-type bcast/alltoall(v)/allgather(v) calls are always packed through scratch, never "
                "copied straight from the layouts (for comparison)"},
    {.name = "HINT_COPY", .kind = RT_ENV_ENUM, .dflt = "hybrid", .choices = NAMES("temporal", "nt", "hybrid"),
     .meaning = "shared-heap collectives' copies: temporal (memcpy), nt (non-temporal stores) or hybrid (temporal "
                "up to L2/ranks, then non-temporal; the threshold halves at run time while that pays)"},
    {.name = "HINT_COPY_KERNEL", .kind = RT_ENV_ENUM, .dflt = "auto",
     .choices = NAMES("auto", "avx512", "avx2", "sse2", "memcpy"),
     .meaning = "non-temporal copy kernel; auto: the widest this CPU has"},
    {.name = "HINT_COLL_CHECK", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: before each collective the group checks that every rank called the same operation with the "
                "same root, count x type size and reduction op; a mismatch is an error on every rank instead of "
                "a wrong result (one small exchange per call)"},
    {.name = "HINT_VIRTUAL_SOCKETS", .kind = RT_ENV_INT, .dflt = "0", .min = 0, .max = 1 << 20,
     .meaning = "s > 0: split a group's ranks into s equal runs that the NUMA-aware morton_numa algorithms and "
                "neighbor_allgather's distance_halving treat as sockets (one socket when s does not divide P), and the node's ranks into s NUMA domains whose "
                "heap partitions are bound (mbind) to real nodes modulo their number; 0: the packages hwloc reports"},

    /* ---- runtime/ and transport/ ---- */
    {.name = "HINT_WAIT_SPIN_US", .kind = RT_ENV_INT, .dflt = "50", .note = "(0 when oversubscribed)",
     .min = 0, .max = 10000000,
     .meaning = "microseconds a waiting rank spins (pause loop) before it polls with sched_yield"},
    {.name = "HINT_WAIT_YIELD_US", .kind = RT_ENV_INT, .dflt = "1000", .note = "(200 when oversubscribed)",
     .min = 0, .max = 10000000,
     .meaning = "microseconds a waiting rank polls with sched_yield before it sleeps on a futex; in a job across "
                "nodes it goes on polling while its bytes move between nodes and, where its node's ranks fit the "
                "cores, for 10 ms after the network's last completion (docs/RUNTIME.md)"},
    {.name = "HINT_SHM_BUDGET", .kind = RT_ENV_SIZE, .dflt = "48M", .min = MIB, .max = TIB,
     .meaning = "bytes of the node segment for point-to-point channels; sets the cell size (256 B to 32 KiB)"},
    {.name = "HINT_HEAP", .kind = RT_ENV_ENUM, .dflt = "shared", .choices = NAMES("shared", "private"),
     .meaning = "shared: after hint_init, malloc and co. serve from this rank's partition of the node's shared "
                "heap; private: glibc's malloc only"},
    {.name = "HINT_HEAP_SIZE", .kind = RT_ENV_SIZE, .dflt = "",
     .note = "half of /dev/shm's free space / ranks on the node, at most 1G", .min = 1, .max = TIB,
     .meaning = "shared heap per rank, rounded up to 64 MiB"},
    {.name = "HINT_HEAP_STRICT", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: malloc returns NULL when the partition is full instead of falling back to glibc's heap"},
    {.name = "HINT_P2P_PATH", .kind = RT_ENV_ENUM, .dflt = "auto", .choices = NAMES("auto", "heap", "cma", "bounce"),
     .meaning = "large messages: heap (the receiver copies from the sender's heap buffer), cma "
                "(process_vm_readv), bounce (through the cells) or auto (heap when the send buffer is on the "
                "heap, else cma, else bounce)"},
    {.name = "HINT_P2P_STATS", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: each rank prints at finalize how many messages took each path, and on a line of its own "
                "the data bytes they carried (shm sends; across nodes a third line, `bytes sent across nodes: ofi N`, "
                "and one on the large eager pool's credits, `large eager messages: N sent, ...`)"},
    {.name = "HINT_OFI_PROVIDER", .kind = RT_ENV_STRING, .dflt = "", .note = "FI_PROVIDER's choice, else the preferred one offered",
     .meaning = "libfabric provider for ranks on other nodes, as fi_info names it (e.g. tcp;ofi_rxm, verbs;ofi_rxm); "
                "it needs FI_EP_RDM endpoints with FI_TAGGED",
     .syntax = "a provider name as fi_info gives it"},
    {.name = "HINT_OFI_EAGER_MAX", .kind = RT_ENV_SIZE, .dflt = "8K", .min = 0, .max = MIB,
     .meaning = "largest message sent between nodes at once into the receiver's buffers; larger ones wait for the "
                "matching receive (rendezvous)"},
    {.name = "HINT_OFI_LARGE_MAX", .kind = RT_ENV_SIZE, .dflt = "256K", .min = 0, .max = 64 * MIB,
     .meaning = "largest message sent between nodes at once into the receiver's large buffers (above "
                "HINT_OFI_EAGER_MAX; one message, copied out on arrival, no round trip); larger ones, synchronous "
                "ones and all when not above HINT_OFI_EAGER_MAX wait for the matching receive"},
    {.name = "HINT_OFI_LARGE_BUFFERS", .kind = RT_ENV_INT, .dflt = "8", .min = 0, .max = 4096,
     .meaning = "large receive buffers (HINT_OFI_LARGE_MAX + 32 bytes each, 2 posted at a time) each rank keeps for "
                "messages from other nodes; 0: none"},
    {.name = "HINT_OFI_LARGE_UNEXPECTED_MAX", .kind = RT_ENV_SIZE, .dflt = "16M", .min = 0, .max = TIB,
     .meaning = "bound on the large eager messages from other nodes a rank holds before its receives take them: "
                "each rank on another node may send it this over (their number x HINT_OFI_LARGE_MAX) of them, "
                "at most 64, before it returns credits; beyond, messages go by rendezvous; below one each, no large "
                "pool"},
    {.name = "HINT_OFI_RMA_MIN", .kind = RT_ENV_SIZE, .dflt = "64K", .min = 0, .max = TIB,
     .meaning = "where the provider has FI_RMA reads, messages between nodes of at least this many bytes that are not "
                "eager (synchronous ones too) are read by the receiver straight from the sender's registered "
                "buffer (RTS, fi_read, FIN); smaller ones, and all without FI_RMA, go by the provider's tagged "
                "rendezvous (RTS, CTS, fi_tsend); 1T: never read"},
    {.name = "HINT_OFI_INJECT", .kind = RT_ENV_BOOL, .dflt = "1",
     .meaning = "1: control messages between nodes (eager ones with their payload, RTS, CTS, FIN) that fit the "
                "provider's inject size go by fi_tinject, done at once with no send completion to read; 0: always "
                "fi_tsend"},
    {.name = "HINT_OFI_RX_BUFFERS", .kind = RT_ENV_INT, .dflt = "128", .min = 8, .max = 65536,
     .meaning = "receive buffers (HINT_OFI_EAGER_MAX + 32 bytes each) each rank keeps for messages from other "
                "nodes (16 of them posted at a time, the rest stand in for those unexpected messages hold)"},
    {.name = "HINT_OFI_UNEXPECTED_MAX", .kind = RT_ENV_SIZE, .dflt = "64M", .min = 0, .max = TIB,
     .meaning = "bytes of unexpected messages from other nodes copied out of the receive buffers when they run low "
                "(and one message per 4 KiB of it, at least 64); beyond it they keep their buffers, and the job ends "
                "with a message when every buffer holds one (large eager ones: HINT_OFI_LARGE_UNEXPECTED_MAX)"},

    {.name = "HINT_ERRORS", .kind = RT_ENV_ENUM, .dflt = "return", .choices = NAMES("return", "fatal"),
     .meaning = "what a failed call does on a group whose handler was not set (hint_group_set_errhandler): return "
                "(its status code) or fatal (print the call, group, rank and message, end the job with the code)"},
    {.name = "HINT_HANG_TIMEOUT", .kind = RT_ENV_SECONDS, .dflt = "0", .min = 0, .max = 1000000,
     .meaning = "a rank that waits longer than this many seconds in one wait prints one line saying what it waits "
                "in: operation, group, call number, algorithm and for which rank(s) (docs/RUNTIME.md); 0: off"},
    {.name = "HINT_SINGLETON", .kind = RT_ENV_BOOL, .dflt = "0",
     .meaning = "1: a process not started by hintrun runs as a world of one even when a launcher's variables say "
                "it is one of several ranks (SLURM_STEP_NUM_TASKS, OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK); by "
                "default hint_init then joins PMIx or PMI-1, or fails naming the launcher (docs/LAUNCHER.md)"},
    {.name = "HINT_TEST_DIE_IN_INIT", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "test hook, STAGE:RANK: world rank RANK prints jobid=<id> and dies of SIGKILL in hint_init at STAGE "
                "(segment: local rank 0 made the node segment, before the fence; attach: after mapping it; heap, "
                "heap-attach: the same for the shared heap), for tests that nothing is left behind",
     .syntax = "STAGE:RANK"},
    {.name = "HINT_TEST_LISTS_KEPT_MAX", .kind = RT_ENV_SIZE, .dflt = "64M", .min = 0, .max = TIB,
     .meaning = "test hook: bytes of peers' piece lists read through CMA (derived types off the shared heap) that a "
                "group's copy orders keep for later calls; past it the lists a call does not use are dropped and "
                "read again when needed"},
    {.name = "HINT_TEST_STAGE_NOMEM", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "test hook, RANK[:N]: world rank RANK finds no room on the shared heap for its staging areas at its "
                "first N tries (default 1) on each group, as with a full partition: its staged collectives fail with "
                "HINT_ERR_NOMEM, and so do those of the members that wait for it, until a try succeeds",
     .syntax = "RANK[:N]"},
    {.name = "HINT_TEST_NEIGHBOR_NOMEM", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "test hook, RANK[:N]: world rank RANK cannot allocate the staged neighbourhood algorithm's plan at its "
                "first N tries (default 1) on each group: its neighbor_allgather and neighbor_alltoall staged fail with "
                "HINT_ERR_NOMEM, and so do those of its out-neighbours, until a try succeeds",
     .syntax = "RANK[:N]"},
    {.name = "HINT_TEST_NEIGHBOR_LISTS_NOMEM", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "test hook, RANK[:N]: world rank RANK has no memory for the exchange of the neighbour lists "
                "(neighbor_alltoall staged's matches, the morton algorithm's plan, distance_halving's pattern) at its "
                "first N tries (default 1) "
                "on each group: that call fails with HINT_ERR_NOMEM on every rank, and every rank exchanges again "
                "at its next call",
     .syntax = "RANK[:N]"},
    {.name = "HINT_TEST_DH_BUILD_NOMEM", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "test hook, RANK[:N]: on world rank RANK the k-th build of distance_halving's pattern on each group "
                "(k = 1..N, default N 1) finds no memory at its k-th allocation (its set-up before the exchanges, matrix "
                "A's rows, the halving steps' descriptors, the final phase): that call fails with HINT_ERR_NOMEM on "
                "every rank, and every rank builds again at its next call",
     .syntax = "RANK[:N]"},

    /* ---- datatype/ ---- */
    {.name = "HINT_PACK", .kind = RT_ENV_ENUM, .dflt = "auto", .choices = NAMES("auto", "loop", "iovec", "mars"),
     .meaning = "datatype pack representation; auto: chosen per type and size by a cost model (docs/DATATYPES.md)"},
    {.name = "HINT_PACK_SEGMENT", .kind = RT_ENV_INT, .dflt = "", .note = "8 KiB of extent", .min = 1,
     .max = 1 << 30, .meaning = "MARs plan segment, in elements (docs/DATATYPES.md)"},

    /* ---- topology/ ---- */
    {.name = "HINT_TOPO_FILE", .kind = RT_ENV_STRING, .dflt = "",
     .meaning = "per-rank node/socket/NUMA/core table replacing hwloc discovery (docs/TOPOLOGY.md)"},

    /* ---- launcher/: read by hintrun itself, not by the ranks ---- */
    {.name = "HINT_STORE_ADDR", .kind = RT_ENV_STRING, .dflt = "",
     .note = "the address of the route to the first other host",
     .meaning = "hintrun --host: the IP address of this machine that the hosts reach the store at "
                "(--store-addr overrides it; docs/LAUNCHER.md)",
     .syntax = "an IP address"},
    {.name = "HINT_AGENT_START_TIMEOUT", .kind = RT_ENV_SECONDS, .dflt = "60", .min = 1, .max = 1000000,
     .meaning = "hintrun --host: seconds each host's agent has to reach the store; then the job ends, naming "
                "the host and its launch agent command"},

    /* ---- new rows go above this line, in the section of the layer that reads them ---- */

    /* ---- set by hintrun for its ranks; a program started without them is a world of one ---- */
    LAUNCHER("HINT_RANK", "world rank"),
    LAUNCHER("HINT_SIZE", "world size"),
    LAUNCHER("HINT_LOCAL_RANK", "rank on its node"),
    LAUNCHER("HINT_LOCAL_SIZE", "ranks on that node"),
    LAUNCHER("HINT_NODE_ID", "node index"),
    LAUNCHER("HINT_NNODES", "node count"),
    LAUNCHER("HINT_JOBID", "16 hex digits naming the job's shared-memory objects"),
    LAUNCHER("HINT_STORE", "bootstrap store address (runtime/boot.h)"),
    LAUNCHER("HINT_TOKEN", "the job's secret for the store"),
    LAUNCHER("HINT_OVERSUBSCRIBED", "1 when ranks outnumber usable cores: wait without spinning"),
    LAUNCHER("HINT_LAUNCHER_PID", "pid of hintrun"),
};

const int rt_env_nvars = (int)(sizeof rt_env_vars / sizeof rt_env_vars[0]);

const struct rt_env_var *rt_env_find(const char *name)
{
    for (int i = 0; i < rt_env_nvars; i++)
        if (strcmp(rt_env_vars[i].name, name) == 0)
            return &rt_env_vars[i];
    return NULL;
}

/* A byte count as a person writes it: 48M rather than 50331648. */
static void size_text(long long bytes, char *buf, size_t n)
{
    static const char units[] = "KMGT";
    int u = -1;
    while (u < 3 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    if (u < 0)
        snprintf(buf, n, "%lld", bytes);
    else
        snprintf(buf, n, "%lld%c", bytes, units[u]);
}

static void choices_text(const char *const *c, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; c && c[i] && len < n; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i == 0 ? "" : c[i + 1] ? ", " : " or ", c[i]);
}

void rt_env_accepts(const struct rt_env_var *v, char *buf, size_t n)
{
    char lo[32], hi[32], names[256];
    switch (v->kind) {
    case RT_ENV_BOOL:
        snprintf(buf, n, "0 or 1");
        break;
    case RT_ENV_INT:
        snprintf(buf, n, "an integer from %lld to %lld", v->min, v->max);
        break;
    case RT_ENV_SIZE:
        size_text(v->min, lo, sizeof lo);
        size_text(v->max, hi, sizeof hi);
        snprintf(buf, n, "bytes from %s to %s, with an optional K, M, G or T suffix (powers of 1024)", lo, hi);
        break;
    case RT_ENV_SECONDS:
        snprintf(buf, n, "seconds from %lld to %lld, e.g. 2.5", v->min, v->max);
        break;
    case RT_ENV_ENUM:
        choices_text(v->choices, names, sizeof names);
        snprintf(buf, n, "%s", names);
        break;
    case RT_ENV_STRING:
        snprintf(buf, n, "%s", v->syntax ? v->syntax : "a path");
        break;
    case RT_ENV_FAMILY:
        snprintf(buf, n, "auto or an algorithm of that operation");
        break;
    case RT_ENV_LAUNCHER:
        snprintf(buf, n, "set by hintrun");
        break;
    }
}

void rt_env_default_text(const struct rt_env_var *v, char *buf, size_t n)
{
    if (v->kind == RT_ENV_LAUNCHER)
        snprintf(buf, n, "set by hintrun");
    else if (*v->dflt && v->note)
        snprintf(buf, n, "%s %s", v->dflt, v->note);
    else
        snprintf(buf, n, "%s", *v->dflt ? v->dflt : v->note ? v->note : "unset");
}
