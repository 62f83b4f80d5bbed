/*
 * tests/ranks/ofi_wait.c — what waiting on the network costs a rank's own thread (issue 15 item 8).
 * Run at P=2 on 2 virtual nodes (hintrun binds each rank to a core of its own), FI_PROVIDER=tcp
 * over loopback as the other ranks-ofi tests:
 *   yields  in an 8-byte ping-pong, a rank whose spin the network took away (runtime/wait.c: its
 *           node's ranks and as many again do not fit its cores, where unseen "hosts" might share
 *           them) yields once every 4 polls, not after each: sched_yield, defined here, counts
 *           the calls, a progress hook counts the polls. Skipped where the spin stays or ranks
 *           outnumber cores (a yield per poll is then the policy).
 *   files   the runtime's helper threads (the shared heap's keeper, the network watcher) have
 *           file tables of their own holding only 0-2 and what they use (runtime/thread.c,
 *           rt_thread_own_files): a descriptor the rank opens afterwards is not in theirs.
 * Prints "ok CASE" on rank 0; any failed check exits non-zero.
 */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/request.h"
#include "runtime/runtime.h"
#include "runtime/transport.h"
#include "tests/common/rankcheck.h"

int rc_rank;
static unsigned long yields, polls;

/* The runtime's sched_yield resolves here (the test links the static library). */
int sched_yield(void)
{
    yields++;
    return (int)syscall(SYS_sched_yield);
}

static void count_poll(void) { polls++; }

static void ping_pong(int rounds)
{
    char b[8] = {0};
    int peer = 1 - rc_rank;
    for (int i = 0; i < rounds; i++) {
        if (rc_rank == 0) {
            RC_OK(hint_send(b, 8, HINT_BYTE, peer, 3, HINT_WORLD));
            RC_OK(hint_recv(b, 8, HINT_BYTE, peer, 3, HINT_WORLD, NULL));
        } else {
            RC_OK(hint_recv(b, 8, HINT_BYTE, peer, 3, HINT_WORLD, NULL));
            RC_OK(hint_send(b, 8, HINT_BYTE, peer, 3, HINT_WORLD));
        }
    }
}

static void check_yields(void)
{
    ping_pong(200); /* the transport up, the spin decided */
    if (rt_wait_spin_ns() != 0 || rt.boot.oversubscribed) {
        if (rc_rank == 0)
            printf("# yields skipped: spin %ld ns, oversubscribed %d\n", rt_wait_spin_ns(), rt.boot.oversubscribed);
        return;
    }
    RC_OK(rt_progress_hook_add(count_poll));
    yields = polls = 0;
    ping_pong(2000);
    rt_progress_hook_remove(count_poll);
    printf("# rank %d: %lu yields in %lu polls\n", rc_rank, yields, polls);
    if (yields * 3 > polls)
        RC_FAIL("%lu sched_yield calls in %lu polls: a yield per poll or so, not one per 4", yields, polls);
}

/* Every helper thread's table: none holds the probe, none more than 0-2 and two of its own. */
static void check_files(void)
{
    int probe = memfd_create("hint-fd-probe", MFD_CLOEXEC);
    RC_CHECK(probe >= 0);
    DIR *tasks = opendir("/proc/self/task");
    RC_CHECK(tasks != NULL);
    int helpers = 0;
    for (struct dirent *t; (t = readdir(tasks)) != NULL;) {
        if (t->d_name[0] == '.' || atoi(t->d_name) == getpid())
            continue;
        helpers++;
        char dir[300];
        snprintf(dir, sizeof dir, "/proc/self/task/%s/fd", t->d_name);
        DIR *fds = opendir(dir);
        if (fds == NULL)
            continue; /* the thread ended meanwhile */
        int n = 0;
        for (struct dirent *f; (f = readdir(fds)) != NULL;) {
            if (f->d_name[0] == '.')
                continue;
            char path[600], target[256];
            snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
            ssize_t len = readlink(path, target, sizeof target - 1);
            target[len > 0 ? len : 0] = '\0';
            if (strstr(target, "hint-fd-probe"))
                RC_FAIL("thread %s shares the rank's file table (it holds the descriptor opened after it started)",
                        t->d_name);
            n++;
        }
        closedir(fds);
        if (n > 5)
            RC_FAIL("thread %s holds %d descriptors: the rank's files it does not use are kept open", t->d_name, n);
    }
    closedir(tasks);
    close(probe);
    if (helpers == 0)
        RC_FAIL("no helper thread to look at (the shared heap's keeper, the network watcher)");
}

int main(int argc, char **argv)
{
    RC_OK(hint_init(&argc, &argv));
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    int p;
    RC_OK(hint_group_size(HINT_WORLD, &p));
    RC_CHECK(p == 2);
    const char *what = argc > 1 ? argv[1] : "yields";
    if (!strcmp(what, "yields"))
        check_yields();
    else if (!strcmp(what, "files")) {
        ping_pong(10);
        check_files();
    } else
        RC_FAIL("unknown case %s", what);
    RC_OK(hint_finalize());
    if (rc_rank == 0)
        printf("ok %s\n", what);
    return 0;
}
