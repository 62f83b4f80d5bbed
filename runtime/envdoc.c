/*
 * runtime/envdoc.c — the table of HINT_* variables (see envdoc.h). A variable that is read
 * anywhere in hint must have a line here.
 */
#include "runtime/envdoc.h"

const struct rt_env_doc rt_env_docs[] = {
    {"HINT_<OP>", "auto",
     "force the algorithm of a collective, e.g. HINT_ALLTOALL=pairwise (names: hint_info --algorithms)"},
    {"HINT_TUNING_FILE", "(none)", "JSON tuning file (written by hint-tune) choosing algorithms and copy modes per op, P and size"},
    {"HINT_AUTOTUNE", "0", "1: try each candidate (alltoall: the shared-heap orders; allgather: morton and the message-based ones; 1 warm-up + 3 runs) per size and buffer pair, keep the fastest"},
    {"HINT_COLL_FALLBACK", "error",
     "when a forced algorithm cannot run: error (HINT_ERR_UNSUPPORTED), warn or silent (run the default)"},
    {"HINT_WAIT_SPIN_US", "0", "microseconds a waiting rank spins (pause loop) before it polls with sched_yield"},
    {"HINT_WAIT_YIELD_US", "1000 (200 when oversubscribed)",
     "microseconds a waiting rank polls with sched_yield before it sleeps on a futex"},
    {"HINT_SHM_BUDGET", "50331648 (48 MiB)",
     "bytes of the node segment for point-to-point channels; sets the cell size (256 B to 32 KiB)"},
    {"HINT_HEAP", "shared", "shared: malloc serves from this rank's partition of the node's shared heap after hint_init; private: glibc's malloc only"},
    {"HINT_HEAP_SIZE", "half of /dev/shm's free space / ranks on the node, at most 1G",
     "bytes of shared heap per rank (K, M, G suffixes), rounded up to 64 MiB"},
    {"HINT_HEAP_STRICT", "0", "1: malloc returns NULL when the partition is full instead of falling back to glibc's heap"},
    {"HINT_P2P_PATH", "auto",
     "large messages: heap (receiver copies from the sender's heap buffer), cma (process_vm_readv), bounce "
     "(through cells) or auto (heap when the send buffer is on the heap, else cma, else bounce)"},
    {"HINT_P2P_STATS", "0", "1: each rank prints at finalize how many messages took each path"},
    {"HINT_COLL_STATS", "0", "1: each rank prints at finalize how many derived-type bcast/alltoall(v)/allgather(v) calls were copied straight from the layouts and how many were packed"},
    {"HINT_COLL_TYPED", "1", "0: derived-type bcast/alltoall(v)/allgather(v) calls are always packed through scratch, never copied straight from the layouts (for comparison)"},
    {"HINT_PACK_SEGMENT", "8 KiB of extent", "MARs plan segment, in elements (docs/DATATYPES.md)"},
    {"HINT_COPY", "hybrid",
     "shared-heap collectives: temporal (memcpy), nt (non-temporal stores) or hybrid (temporal up to L2/ranks, "
     "halved at run time while it pays, non-temporal beyond)"},
    {"HINT_COPY_KERNEL", "auto", "non-temporal kernel: avx512, avx2, sse2 or memcpy (default: the widest this CPU has)"},
    {"HINT_VIRTUAL_SOCKETS", "(unset: hwloc's packages)", "split a group's ranks into s equal runs treated as sockets by the NUMA-aware (morton_numa) algorithms"},
    {"HINT_PACK", "auto", "datatype pack representation: loop, iovec, mars or auto (cost model)"},
    {"HINT_TOPO_FILE", "(none)", "per-rank node/socket/NUMA/core table replacing hwloc discovery (docs/TOPOLOGY.md)"},
    /* set by hintrun for its ranks; a program started without them is a singleton */
    {"HINT_RANK, HINT_SIZE", "(set by hintrun)", "world rank and size"},
    {"HINT_LOCAL_RANK, HINT_LOCAL_SIZE", "(set by hintrun)", "rank on its node and ranks on that node"},
    {"HINT_NODE_ID, HINT_NNODES", "(set by hintrun)", "node index and node count"},
    {"HINT_JOBID", "(set by hintrun)", "16 hex digits naming the job's shared-memory objects"},
    {"HINT_STORE, HINT_TOKEN", "(set by hintrun)", "bootstrap store address and the job's secret"},
    {"HINT_OVERSUBSCRIBED", "(set by hintrun)", "1 when ranks outnumber usable cores: wait without spinning"},
    {"HINT_LAUNCHER_PID", "(set by hintrun)", "pid of hintrun"},
};

const int rt_env_ndocs = (int)(sizeof rt_env_docs / sizeof rt_env_docs[0]);
