/*
 * runtime/boot_backend.h — the back ends behind runtime/boot.h. The front (runtime/boot.c) picks
 * one from the environment and sends every boot_* call to it, so the rest of the runtime never
 * knows which process manager started it:
 *   hintrun's store, or a singleton's in-process store  runtime/boot_client.c  (HINT_RANK, or none)
 *   PMIx (Open MPI's mpirun, srun --mpi=pmix)           runtime/boot_pmix.c    (PMIX_NAMESPACE + PMIX_RANK)
 *   PMI-1's simple wire protocol (MPICH's Hydra)        runtime/boot_pmi1.c    (PMI_FD or PMI_PORT)
 * Keys and values reach a back end already checked (boot_key_valid, length <= BOOT_VAL_MAX).
 */
#ifndef HINT_RUNTIME_BOOT_BACKEND_H
#define HINT_RUNTIME_BOOT_BACKEND_H

#include <stddef.h>

#include "runtime/boot.h"

struct boot_backend {
    const char *name; /* for messages: "hintrun", "PMIx", "PMI-1" */
    int (*put)(const char *key, const void *val, size_t len);
    int (*get)(const char *key, void *val, size_t cap, size_t *len);
    int (*fence)(void);
    /* Asks the process manager to end the job; returns only when it could not be asked. */
    void (*abort)(int code, const char *msg);
    void (*fini)(void);
};

/* hintrun's store (HINT_RANK set) or, without it, a singleton's in-process store. */
int boot_store_init(struct boot_info *info, const struct boot_backend **be);
/* Each returns HINT_ERR_BOOTSTRAP, with a message, when its process manager cannot be joined. */
int boot_pmi1_init(struct boot_info *info, const struct boot_backend **be);
#ifdef HINT_HAVE_PMIX
int boot_pmix_init(struct boot_info *info, const struct boot_backend **be);
#endif

/* Shared by the back ends (runtime/boot.c). */
void boot_say(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* jobid (16 hex digits) from the process manager's name of the job (namespace, kvsname). */
void boot_jobid_from_name(const char *name, char jobid[17]);
/* Node geometry from an exchange of host names through be (one put, a fence, size gets): node
   ids in order of their first rank, local rank and size, node count, oversubscription. */
int boot_geometry_from_hosts(struct boot_info *in, const struct boot_backend *be);
/* Hex text of binary values (PMI-1 values are text). out holds 2 * len + 1 bytes. */
void boot_hex_encode(const void *val, size_t len, char *out);
/* Decodes n hex digits into out (n / 2 bytes); -1 when one is not a hex digit or n is odd. */
int boot_hex_decode(const char *hex, size_t n, void *out);

#endif
