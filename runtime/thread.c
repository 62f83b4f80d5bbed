/*
 * runtime/thread.c — thread levels, the library's run-time version and the processor name.
 *
 * The level hint provides is HINT_THREAD_SERIALIZED, whatever is required. Why not more: the
 * runtime takes no locks (p2p queues, request pool, group registry, collective sequence numbers
 * are plain process-wide state), so two calls at once would race. Why that much: nothing is
 * tied to the calling thread's identity either. The shared heap gives each thread its own
 * mimalloc heap in the rank's arena (runtime/heap.c), a wait sleeps on a futex in shared memory
 * that any thread may wait on, and error messages are kept per thread. So calls from different
 * threads, ordered by the program (a mutex, a join), are as safe as calls from one; the test
 * tests/ranks/threads.c runs point to point and collectives that way.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hint_config.h"
#include "runtime/runtime.h"
#include "runtime/thread.h"

static pthread_t main_thread;
static bool main_known;

void rt_thread_note_main(void)
{
    main_thread = pthread_self();
    main_known = true;
}

/* Why the helper threads leave the rank's file table: while a process's threads share one, the
   kernel takes and drops a reference on the file at every system call on a descriptor (fdget's
   lock-free path is only for a table with one user), so each epoll_wait, sendto and recvfrom of
   the rank's own thread costs ~30 ns more: measured across two network namespace hosts, an
   empty epoll_wait of libfabric's net provider took 142-146 ns in fi_pingpong with an idle
   pthread added by LD_PRELOAD and 111-117 ns without one or with a thread that has its own
   table (clone without CLONE_FILES); hint's took 145-149 ns with its two helpers. The copy it
   gets holds every descriptor open at that moment, which would keep sockets and files alive
   after the rank closes them: all but the kept ones (and 0-2) are closed in the copy. That needs
   close_range (Linux 5.9; called through syscall() so an older glibc builds): where the kernel or
   a seccomp profile refuses it, the thread keeps the shared table (and the cost), since a copy it
   could not trim would hold the rank's pipes and sockets open until finalize. */
static bool close_range_works(void)
{
#ifdef SYS_close_range
    return syscall(SYS_close_range, ~0u, ~0u, 0) == 0; /* an empty range: only asks */
#else
    return false;
#endif
}

static void close_fds(unsigned first, unsigned last)
{
#ifdef SYS_close_range
    (void)syscall(SYS_close_range, first, last, 0);
#else
    (void)first;
    (void)last;
#endif
}

void rt_thread_own_files(int keep_a, int keep_b)
{
    if (!close_range_works() || unshare(CLONE_FILES) != 0)
        return;
    int keep[2] = {keep_a < keep_b ? keep_a : keep_b, keep_a < keep_b ? keep_b : keep_a};
    unsigned from = 3; /* standard input, output and error stay: what the thread may print goes there */
    for (int i = 0; i < 2; i++) {
        if (keep[i] < (int)from)
            continue;
        if ((unsigned)keep[i] > from)
            close_fds(from, (unsigned)keep[i] - 1);
        from = (unsigned)keep[i] + 1;
    }
    close_fds(from, ~0u);
}

int hint_init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (required < HINT_THREAD_SINGLE || required > HINT_THREAD_MULTIPLE || provided == NULL)
        return HINT_ERR_ARG;
    int st = hint_init(argc, argv);
    if (st == HINT_SUCCESS)
        *provided = HINT_THREAD_SERIALIZED; /* as MPI allows: more than required, or the most hint has */
    return st;
}

int hint_query_thread(int *provided)
{
    RT_CHECK_INIT();
    if (provided == NULL)
        return HINT_ERR_ARG;
    *provided = HINT_THREAD_SERIALIZED;
    return HINT_SUCCESS;
}

int hint_is_thread_main(int *flag)
{
    RT_CHECK_INIT();
    if (flag == NULL)
        return HINT_ERR_ARG;
    *flag = main_known && pthread_equal(main_thread, pthread_self());
    return HINT_SUCCESS;
}

/* From the build's version (meson's project version), not from hint.h: a program built against
   one header and run with another library sees the difference. */
int hint_get_version(int *major, int *minor, int *patch)
{
    if (major == NULL || minor == NULL || patch == NULL)
        return HINT_ERR_ARG;
    int v[3] = {0, 0, 0};
    if (sscanf(HINT_VERSION, "%d.%d.%d", &v[0], &v[1], &v[2]) < 2)
        return HINT_ERR_INTERNAL;
    *major = v[0];
    *minor = v[1];
    *patch = v[2];
    return HINT_SUCCESS;
}

int hint_get_processor_name(char name[HINT_MAX_PROCESSOR_NAME], int *len)
{
    if (name == NULL || len == NULL)
        return HINT_ERR_ARG;
    if (gethostname(name, HINT_MAX_PROCESSOR_NAME) != 0)
        return rt_from_errno(errno);
    name[HINT_MAX_PROCESSOR_NAME - 1] = '\0';
    *len = (int)strlen(name);
    return HINT_SUCCESS;
}
