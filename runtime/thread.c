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
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
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
