/*
 * transport/ofi/ofi_dl.h — libfabric is opened on first use, not linked.
 * Included before any <rdma/...> header: the five functions of libfabric that are not inline
 * wrappers over its ops tables are renamed to the ones transport/ofi/dl.c defines, which look the
 * library up the first time one is called. The headers' own inline helpers (fi_allocinfo calls
 * fi_dupinfo) are renamed with them.
 */
#ifndef HINT_TRANSPORT_OFI_DL_H
#define HINT_TRANSPORT_OFI_DL_H

#define fi_getinfo ofi_dl_getinfo
#define fi_freeinfo ofi_dl_freeinfo
#define fi_dupinfo ofi_dl_dupinfo
#define fi_fabric ofi_dl_fabric
#define fi_strerror ofi_dl_strerror

#include <signal.h>

/* The handlers of the signals a provider library may take over while it loads (libinfinipath
   installs its own for SIGINT, SIGILL, SIGABRT, SIGBUS, SIGSEGV and SIGTERM: print a backtrace,
   exit 1), saved before and put back after, so that a crashed or stopped rank still ends with its
   signal and the user's own handlers stay (transport/ofi/signals.c). */
#define OFI_GUARDED_SIGNALS 8
struct ofi_saved_signals {
    struct sigaction act[OFI_GUARDED_SIGNALS];
    int saved[OFI_GUARDED_SIGNALS];
};
void ofi_signals_save(struct ofi_saved_signals *s);
void ofi_signals_restore(const struct ofi_saved_signals *s);

/* 0 when libfabric is open (opening it now if needed); -1 after saying why it cannot be. */
int ofi_dl_open(void);

/* Whether this process has opened libfabric (a job on one node never does). */
int ofi_dl_is_open(void);

#endif
