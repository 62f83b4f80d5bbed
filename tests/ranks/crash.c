/*
 * tests/ranks/crash.c — a job in which one rank dies: crash MODE VICTIM
 *   kill     VICTIM raises SIGKILL in the middle of a ring exchange
 *   segv     VICTIM dereferences NULL in the middle of the exchange
 *   exit     VICTIM exits with status 3 in the middle of the exchange
 *   preinit  VICTIM raises SIGKILL before hint_init (the node segment is not yet unlinked)
 *   abort    VICTIM calls hint_abort(7)
 * and the hangs that must not be silent (the others wait in a collective meanwhile):
 *   exit0        VICTIM exits 0 without hint_finalize while the others wait in a barrier
 *   killcoll     VICTIM raises SIGKILL while the others wait in a barrier
 *   stop         VICTIM raises SIGSTOP while the others wait in a barrier
 *   scatter_null the root (VICTIM) passes a NULL send buffer to scatter, gets its error and
 *                calls hint_finalize, while the others wait in scatter for it
 *   order        VICTIM calls bcast (root: the next rank) then barrier, the others barrier then
 *                bcast: every rank waits in a different collective than its peers
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
    /* the moment of death, on the clock the test reads hintrun's end with (CLOCK_MONOTONIC:
       one clock for every process of this machine, virtual nodes and namespaces alike) */
    printf("victim dies at %.6f\n", hint_wtime());
    fflush(stdout);
    if (strcmp(mode, "kill") == 0 || strcmp(mode, "preinit") == 0)
        raise(SIGKILL);
    if (strcmp(mode, "segv") == 0)
        raise(SIGSEGV); /* as a stray store would, without the undefined behaviour UBSan stops on */
    if (strcmp(mode, "exit") == 0)
        exit(3);
    if (strcmp(mode, "abort") == 0)
        hint_abort(7);
}

/* The hang modes; returns only for the others' part, which must never complete. */
static void hang(const char *mode, int victim, int P)
{
    char buf[64] = {0}, big[64 * 8] = {0};
    RC_OK(hint_barrier(HINT_WORLD)); /* everyone is in before the victim does anything */
    if (strcmp(mode, "scatter_null") == 0) {
        int st = hint_scatter(rc_rank == victim ? NULL : big, 8, HINT_BYTE, buf, 8, HINT_BYTE, victim,
                              HINT_WORLD);
        if (rc_rank == victim) {
            printf("root: scatter returned %d\n", st);
            fflush(stdout);
            RC_OK(hint_finalize()); /* waits for the others, who wait in scatter */
            exit(0);
        }
    } else if (strcmp(mode, "order") == 0) {
        int root = (victim + 1) % P;
        if (rc_rank == victim) {
            RC_OK(hint_bcast(buf, 8, HINT_BYTE, root, HINT_WORLD));
            RC_OK(hint_barrier(HINT_WORLD));
        } else {
            RC_OK(hint_barrier(HINT_WORLD));
            RC_OK(hint_bcast(buf, 8, HINT_BYTE, root, HINT_WORLD));
        }
    } else {
        if (rc_rank == victim) {
            usleep(100000); /* the others are in the barrier by now */
            printf("victim dies at %.6f\n", hint_wtime()); /* or stops, or exits */
            fflush(stdout);
            if (strcmp(mode, "exit0") == 0)
                exit(0);
            raise(strcmp(mode, "stop") == 0 ? SIGSTOP : SIGKILL);
        }
        RC_OK(hint_barrier(HINT_WORLD));
    }
    RC_FAIL("mode %s: a collective completed that could not", mode);
}

static int is_hang_mode(const char *mode)
{
    static const char *const modes[] = {"exit0", "killcoll", "stop", "scatter_null", "order"};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(mode, modes[i]) == 0)
            return 1;
    return 0;
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
    if (is_hang_mode(mode))
        hang(mode, victim, P);
    char buf[100000];
    memset(buf, rc_rank, sizeof buf);
    for (int i = 0;; i++) {
        if (i == 50 && rc_rank == victim)
            die(mode);
        RC_OK(hint_sendrecv(buf, sizeof buf, HINT_BYTE, (rc_rank + 1) % P, 0, buf, sizeof buf, HINT_BYTE,
                            (rc_rank + P - 1) % P, 0, HINT_WORLD, NULL));
    }
}
