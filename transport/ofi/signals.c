/*
 * transport/ofi/signals.c — keep the process's signal handlers across loading libfabric.
 * Debian's libfabric links the PSM provider, whose libinfinipath installs handlers for SIGINT,
 * SIGILL, SIGABRT, SIGBUS, SIGSEGV and SIGTERM in its constructor (print a backtrace, exit 1).
 * A rank that crashed or was told to stop would then end with status 1 instead of its signal:
 * hintrun, the other launchers and the user's own handlers all rely on the signal. libfabric is
 * opened at run time (dl.c), so the handlers in place just before are simply put back after.
 */
#include <signal.h>

#include "transport/ofi/ofi_dl.h"

static const int guarded[OFI_GUARDED_SIGNALS] = {SIGINT,  SIGILL,  SIGABRT, SIGBUS,
                                                 SIGFPE,  SIGSEGV, SIGTERM, SIGQUIT};

void ofi_signals_save(struct ofi_saved_signals *s)
{
    for (int i = 0; i < OFI_GUARDED_SIGNALS; i++)
        s->saved[i] = sigaction(guarded[i], NULL, &s->act[i]) == 0;
}

void ofi_signals_restore(const struct ofi_saved_signals *s)
{
    for (int i = 0; i < OFI_GUARDED_SIGNALS; i++)
        if (s->saved[i])
            sigaction(guarded[i], &s->act[i], NULL);
}
