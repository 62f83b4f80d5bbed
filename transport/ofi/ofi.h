/*
 * transport/ofi/ofi.h — the libfabric transport as the runtime sees it: its ops table
 * (runtime/transport.h), listed in lib/components.c after shm, so it carries the ranks on other
 * nodes. One FI_EP_RDM endpoint per rank with tagged messages; matching stays in the runtime
 * (runtime/match.c). The wire protocol is in p2p.c, the fabric's set-up and the wait object in
 * fabric.c.
 */
#ifndef HINT_TRANSPORT_OFI_H
#define HINT_TRANSPORT_OFI_H

#include "runtime/transport.h"

extern const struct rt_transport ofi_transport;

/* The provider this rank uses ("tcp;ofi_rxm"); before or without a started transport, the one
   fi_getinfo would pick under the current environment (hint_info), or NULL with *why set to
   what is missing. */
const char *ofi_provider_name(const char **why);

#endif
