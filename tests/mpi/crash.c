/*
 * tests/mpi/crash.c — a job in which one rank dies: crash MODE VICTIM
 *   kill     VICTIM raises SIGKILL in the middle of a ring exchange
 *   segv     VICTIM dereferences NULL in the middle of the exchange
 *   exit     VICTIM exits with status 3 in the middle of the exchange
 *   preinit  VICTIM raises SIGKILL before hint_init (the node segment is not yet unlinked)
 *   abort    VICTIM calls hint_abort(7)
 * Every rank prints "rankpid=<pid>" first so the test can check none survives.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "tests/common/rankcheck.h"

int rc_rank;

static void die(const char *mode)
{
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "preinit") == 0)
        raise(SIGKILL);
    if (strcmp(mode, "segv") == 0) {
        volatile int *p = NULL;
        *p = 1;
    }
    if (strcmp(mode, "exit") == 0)
        exit(3);
    if (strcmp(mode, "abort") == 0)
        hint_abort(7);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "kill";
    int victim = argc > 2 ? atoi(argv[2]) : 1;
    int me = atoi(getenv("HINT_RANK") ? getenv("HINT_RANK") : "0");
    printf("rankpid=%d\n", (int)getpid());
    if (me == 0 && getenv("HINT_JOBID"))
        printf("jobid=%s\n", getenv("HINT_JOBID"));
    fflush(stdout);
    if (me == victim && strcmp(mode, "preinit") == 0) {
        usleep(200000); /* let the others create the segment and wait for us */
        die(mode);
    }
    RC_OK(hint_init(&argc, &argv));
    int P;
    RC_OK(hint_group_rank(HINT_WORLD, &rc_rank));
    RC_OK(hint_group_size(HINT_WORLD, &P));
    char buf[100000];
    memset(buf, rc_rank, sizeof buf);
    for (int i = 0;; i++) {
        if (i == 50 && rc_rank == victim)
            die(mode);
        RC_OK(hint_sendrecv(buf, sizeof buf, HINT_BYTE, (rc_rank + 1) % P, 0, buf, sizeof buf, HINT_BYTE,
                            (rc_rank + P - 1) % P, 0, HINT_WORLD, NULL));
    }
}
