/*
 * transport/ofi/signals.c — undo the signal handlers that loading libfabric brings along.
 * Debian's libfabric links the PSM provider, whose libinfinipath installs handlers for SIGINT,
 * SIGILL, SIGABRT, SIGBUS, SIGSEGV and SIGTERM in its constructor (print a backtrace, exit 1),
 * before any code of ours or the user's runs. A rank that crashed or was told to stop would then
 * end with status 1 instead of its signal: hintrun, the other launchers and the user's own
 * handlers all rely on the signal. Our constructor runs after those of the libraries we link, so
 * it puts the default back for each handler that lives in that library, and nothing else.
 */
#include <dlfcn.h>
#include <signal.h>
#include <string.h>

static int installed_by_psm(const struct sigaction *a)
{
    Dl_info where;
    void *fn = (a->sa_flags & SA_SIGINFO) ? (void *)a->sa_sigaction : (void *)a->sa_handler;
    if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN || !dladdr(fn, &where) || !where.dli_fname)
        return 0;
    return strstr(where.dli_fname, "libinfinipath") != NULL || strstr(where.dli_fname, "libpsm") != NULL;
}

__attribute__((constructor)) static void ofi_restore_default_signals(void)
{
    static const int sigs[] = {SIGINT, SIGILL, SIGABRT, SIGBUS, SIGFPE, SIGSEGV, SIGTERM, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction a;
        if (sigaction(sigs[i], NULL, &a) == 0 && installed_by_psm(&a))
            signal(sigs[i], SIG_DFL);
    }
}
