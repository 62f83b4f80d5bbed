/*
 * runtime/boot.h — the bootstrap client: how a rank learns who it is and exchanges the few
 * values needed to wire up transports (segment names, fabric addresses) through the key-value
 * store that hintrun serves.
 *
 * hintrun sets, for every rank:
 *   HINT_RANK, HINT_SIZE            world rank and size
 *   HINT_LOCAL_RANK, HINT_LOCAL_SIZE rank within its node and ranks on that node
 *   HINT_NODE_ID, HINT_NNODES       node index (0-based) and node count
 *   HINT_JOBID                      16 hex digits, unique per job; names every shm object
 *   HINT_STORE                      store address: "unix:/path/to/socket", "unix:@name" or "tcp:host:port"
 *   HINT_TOKEN                      the job's secret (32 hex digits); the store refuses others
 *   HINT_OVERSUBSCRIBED             1 when ranks on the node outnumber the cores hintrun may use
 *   HINT_LAUNCHER_PID               pid of hintrun
 * A process started without them (no HINT_RANK) is a singleton: a world of one, no store.
 *
 * The same calls work under the process managers clusters run (runtime/boot_backend.h: PMIx for
 * Open MPI's mpirun and srun --mpi=pmix, PMI-1 for MPICH's mpiexec.hydra); hint_init then takes
 * rank and size from them and the node geometry from an exchange of host names, and sets
 * HINT_JOBID in its own environment. Their key-value spaces show a put to other ranks only after
 * the next boot_fence, so callers fence between putting and getting (hintrun's store would
 * wait instead). A process that a launcher meant to be one of several ranks but that finds none
 * of these fails boot_init naming the launcher, instead of running as a world of one.
 */
#ifndef HINT_RUNTIME_BOOT_H
#define HINT_RUNTIME_BOOT_H

#include <stddef.h>
#include <stdint.h>

struct boot_info {
    int rank, size;
    int local_rank, local_size;
    int node_id, nnodes;
    int oversubscribed;
    int singleton;     /* 1 when started without hintrun */
    char jobid[17];    /* 16 hex digits + NUL; for a singleton, made from pid and time */
};

/* Reads the environment and connects to the store (not for a singleton). */
int boot_init(struct boot_info *info);
/* Store a value under key (keys are job-global; at most 255 bytes; values at most 1 MiB).
   Putting an existing key replaces its value. */
int boot_put(const char *key, const void *val, size_t len);
/* Fetch key's value, waiting until some rank has put it. *len = its length; HINT_ERR_TRUNCATE
   when cap is too small (*len still tells the size needed). */
int boot_get(const char *key, void *val, size_t cap, size_t *len);
/* Barrier over every rank of the job. */
int boot_fence(void);
/* Ask hintrun to end the whole job with this exit code, printing msg (may be NULL). */
void boot_abort(int code, const char *msg);
/* Disconnect. */
void boot_fini(void);
/* Test hook: dies of SIGKILL here when HINT_TEST_DIE_IN_INIT names this stage and rank. */
void boot_test_die(const char *stage);

#endif
