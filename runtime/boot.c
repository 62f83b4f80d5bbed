/*
 * runtime/boot.c — the bootstrap front (API in runtime/boot.h): chooses the back end that
 * matches the process manager that started this process (runtime/boot_backend.h) and sends every
 * call to it.
 *
 * The one rule above all: never split a job silently. A process that finds no hintrun, PMIx or
 * PMI-1 variables but variables saying that a launcher started several ranks (SLURM_NTASKS=4,
 * OMPI_COMM_WORLD_SIZE=4, PMI_SIZE=4 ...) would otherwise run as N separate worlds of one that
 * all "succeed"; hint_init fails instead, naming the launcher and what to run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "hint.h"
#include "runtime/boot.h"
#include "runtime/boot_backend.h"
#include "runtime/boot_proto.h"
#include "runtime/runtime.h"

static struct {
    const struct boot_backend *be; /* NULL outside boot_init .. boot_fini */
    struct boot_info info;
} front;

void boot_say(const char *who, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "hint: bootstrap (%s): %s\n", who, msg);
}

/* ---------------------------------------------------------------- never split a job */

/* The value of an integer variable, 0 when unset or not a number. */
static long env_count(const char *name)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return 0;
    char *end;
    long v = strtol(s, &end, 10);
    return *end == '\0' && v > 0 ? v : 0;
}

/* A launcher that meant several ranks but left nothing hint can join: say which and what to run.
   Returns 1 when it printed such a message. */
static int launcher_meant_many(void)
{
    long n;
    const char *how = "set HINT_SINGLETON=1 to run this process as a world of one anyway";
    /* srun's tasks have a step; an sbatch script (SLURM_NTASKS of the allocation, no step) is
       one process, and a program it runs without srun is rightly a world of one */
    if ((n = env_count("SLURM_STEP_NUM_TASKS")) > 1 ||
        (getenv("SLURM_STEP_ID") && (n = env_count("SLURM_NTASKS")) > 1)) {
        boot_say("Slurm", "this process is one of %ld tasks that srun started (SLURM_STEP_NUM_TASKS), but "
                 "Slurm gave it no PMIx server to join, so it would run as a separate world of "
                 "one; start the job with `srun --mpi=pmix` (or MpiDefault=pmix in slurm.conf), "
                 "or %s", n, how);
        return 1;
    }
    if ((n = env_count("OMPI_COMM_WORLD_SIZE")) > 1) {
        boot_say("Open MPI", "this process is one of %ld ranks that Open MPI's mpirun started "
                 "(OMPI_COMM_WORLD_SIZE), but no PMIx server can be joined (PMIX_NAMESPACE / "
                 "PMIX_RANK are not set), so it would run as a separate world of one; use an "
                 "mpirun whose PMIx server sets them (Open MPI 4 or later), or %s", n, how);
        return 1;
    }
    if ((n = env_count("PMI_SIZE")) > 1) {
        boot_say("PMI", "PMI_SIZE=%ld says a PMI launcher (MPICH's mpiexec.hydra, Slurm's "
                 "--mpi=pmi2) started several ranks, but PMI_FD is not set, so this process "
                 "cannot reach it and would run as a separate world of one; start it with "
                 "`mpiexec.hydra -n N` (hint speaks PMI-1 over PMI_FD), or %s", n, how);
        return 1;
    }
    if ((n = env_count("FLUX_JOB_SIZE")) > 1) {
        boot_say("Flux", "this process is one of %ld tasks of a Flux job, but no PMI_FD was "
                 "given to it; run it with `flux run -o pmi=simple`, or %s", n, how);
        return 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- choosing a back end */

static int pmix_started(void)
{
    return getenv("PMIX_NAMESPACE") && getenv("PMIX_RANK");
}

static int init_pmix(struct boot_info *info, const struct boot_backend **be)
{
#ifdef HINT_HAVE_PMIX
    return boot_pmix_init(info, be);
#else
    (void)info;
    (void)be;
    boot_say("PMIx", "this process was started by a PMIx server (PMIX_NAMESPACE=%s, "
             "PMIX_RANK=%s: Open MPI's mpirun or srun --mpi=pmix), but this libhint was built "
             "without PMIx, so it cannot join the job; install libpmix-dev and rebuild hint (meson "
             "finds it), start the job with hintrun or mpiexec.hydra instead, or set "
             "HINT_SINGLETON=1 to run as a world of one", getenv("PMIX_NAMESPACE"),
             getenv("PMIX_RANK"));
    return HINT_ERR_BOOTSTRAP;
#endif
}

static int choose_backend(struct boot_info *info, const struct boot_backend **be)
{
    if (getenv("HINT_RANK"))
        return boot_store_init(info, be); /* hintrun */
    if (rt_cfg_long("HINT_SINGLETON") == 1)
        return boot_store_init(info, be);
    if (pmix_started())
        return init_pmix(info, be);
    if (getenv("PMI_FD"))
        return boot_pmi1_init(info, be);
    if (launcher_meant_many())
        return HINT_ERR_BOOTSTRAP;
    return boot_store_init(info, be); /* no launcher: a singleton */
}

/* ---------------------------------------------------------------- dying on purpose */

/* Bytes written to fd and not yet read by whoever reads it: only a pipe can tell (FIONREAD works
   on its write end too); 0 for anything else. */
static int unread_bytes(int fd)
{
    struct stat sb;
    int n = 0;
    if (fstat(fd, &sb) != 0 || !S_ISFIFO(sb.st_mode) || ioctl(fd, FIONREAD, &n) != 0)
        return 0;
    return n;
}

/* Before a process ends the job (an abort, a death on purpose): wait, at most max_ms, until the
   launcher has read what this process wrote to stdout and stderr. A launcher that tears the job
   down as soon as one process ends or aborts may not drain the pipes of that process first
   (MPICH's Hydra, seen under load: the last lines were lost), and those lines are what says
   why the job ended. */
static void let_launcher_read_output(int max_ms)
{
    fflush(stdout);
    fflush(stderr);
    for (int waited = 0; waited < max_ms; waited++) {
        if (unread_bytes(STDOUT_FILENO) == 0 && unread_bytes(STDERR_FILENO) == 0)
            return;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

/* HINT_TEST_DIE_IN_INIT=STAGE:RANK: world rank RANK dies of SIGKILL at STAGE of hint_init, after
   printing its job id ("jobid=..." on stdout), so that a test can look for what the job left. */
void boot_test_die(const char *stage)
{
    const char *want = rt_cfg_str("HINT_TEST_DIE_IN_INIT");
    const char *colon = want ? strrchr(want, ':') : NULL;
    if (!colon || !front.be || strncmp(want, stage, (size_t)(colon - want)) != 0 ||
        stage[colon - want] != '\0' || atoi(colon + 1) != front.info.rank)
        return;
    char line[96];
    int n = snprintf(line, sizeof line, "jobid=%s\n", front.info.jobid);
    fflush(stdout);
    (void)!write(STDOUT_FILENO, line, (size_t)n);
    fprintf(stderr, "hint: rank %d dies of SIGKILL in hint_init at %s (HINT_TEST_DIE_IN_INIT)\n",
            front.info.rank, stage);
    let_launcher_read_output(2000);
    raise(SIGKILL);
}

/* ---------------------------------------------------------------- API */

int boot_init(struct boot_info *info)
{
    if (!info)
        return HINT_ERR_ARG;
    if (front.be) {
        *info = front.info;
        return HINT_SUCCESS;
    }
    struct boot_info in = {0};
    const struct boot_backend *be = NULL;
    int st = choose_backend(&in, &be);
    if (st)
        return st;
    front.be = be;
    front.info = in;
    /* hintrun tells its ranks the job id; under another process manager (or none) hint made it, and a
       program (or a test looking for leftover shared memory) finds it in the same place */
    if (strcmp(be->name, "hintrun") != 0)
        setenv("HINT_JOBID", in.jobid, 1);
    *info = in;
    return HINT_SUCCESS;
}

static int check_key(const char *key)
{
    if (!key || !boot_key_valid((const unsigned char *)key, strlen(key))) {
        boot_say(front.be->name, "invalid key: keys are 1 to %u bytes", BOOT_KEY_MAX);
        return HINT_ERR_ARG;
    }
    return HINT_SUCCESS;
}

int boot_put(const char *key, const void *val, size_t len)
{
    if (!front.be)
        return HINT_ERR_NOT_INITIALIZED;
    int st = check_key(key);
    if (st)
        return st;
    if ((!val && len) || len > BOOT_VAL_MAX) {
        boot_say(front.be->name, "put '%s': value of %zu bytes is NULL or larger than %u bytes",
                 key, len, BOOT_VAL_MAX);
        return HINT_ERR_ARG;
    }
    return front.be->put(key, val, len);
}

int boot_get(const char *key, void *val, size_t cap, size_t *len)
{
    if (!front.be)
        return HINT_ERR_NOT_INITIALIZED;
    int st = check_key(key);
    if (st)
        return st;
    if (!len || (!val && cap)) {
        boot_say(front.be->name, "get '%s': NULL length pointer, or NULL buffer with capacity %zu",
                 key, cap);
        return HINT_ERR_ARG;
    }
    return front.be->get(key, val, cap, len);
}

int boot_fence(void)
{
    if (!front.be)
        return HINT_ERR_NOT_INITIALIZED;
    return front.be->fence();
}

void boot_abort(int code, const char *msg)
{
    int status = boot_abort_status(code);
    fflush(stdout);
    fflush(stderr);
    if (front.be && !front.info.singleton && strcmp(front.be->name, "hintrun") != 0) {
        fprintf(stderr, "hint: rank %d aborted the job with code %d%s%s\n", front.info.rank,
                code, msg ? ": " : "", msg ? msg : "");
    }
    let_launcher_read_output(1000);
    if (front.be)
        front.be->abort(code, msg); /* hintrun's and the singleton's end the process themselves */
    else
        fprintf(stderr, "hint: abort with code %d%s%s\n", code, msg ? ": " : "", msg ? msg : "");
    _exit(status);
}

void boot_fini(void)
{
    if (!front.be)
        return;
    /* nothing to remove from /dev/shm on any path: hint's objects there have no name
       (runtime/shmfile.h) */
    front.be->fini();
    front.be = NULL;
}

/* ---------------------------------------------------------------- helpers of the back ends */

void boot_jobid_from_name(const char *name, char jobid[17])
{
    /* FNV-1a, 64 bits: a job's namespace names differ (host, pid, job and step ids inside) */
    uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    snprintf(jobid, 17, "%016llx", (unsigned long long)h);
}

void boot_hex_encode(const void *val, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *p = val;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int boot_hex_decode(const char *hex, size_t n, void *out)
{
    unsigned char *o = out;
    if (n % 2)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        o[i / 2] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

/* Node index of each host name, in order of the first rank on it. */
static int host_index(char (*names)[256], int *nnames, const char *host)
{
    for (int i = 0; i < *nnames; i++)
        if (strcmp(names[i], host) == 0)
            return i;
    snprintf(names[*nnames], 256, "%s", host);
    return (*nnames)++;
}

int boot_geometry_from_hosts(struct boot_info *in, const struct boot_backend *be)
{
    char me[256] = "", key[32];
    int st;
    if (gethostname(me, sizeof me - 1) != 0)
        snprintf(me, sizeof me, "localhost");
    snprintf(key, sizeof key, "hint.host.%d", in->rank);
    if ((st = be->put(key, me, strlen(me))) || (st = be->fence()))
        return st;
    char(*names)[256] = calloc((size_t)in->size, sizeof *names);
    if (!names)
        return HINT_ERR_NOMEM;
    int nnames = 0;
    in->local_rank = in->local_size = 0;
    for (int r = 0; r < in->size && st == HINT_SUCCESS; r++) {
        char host[256];
        size_t len = 0;
        snprintf(key, sizeof key, "hint.host.%d", r);
        if ((st = be->get(key, host, sizeof host - 1, &len)))
            break;
        host[len] = '\0';
        int node = host_index(names, &nnames, host);
        if (strcmp(host, me) == 0) {
            in->node_id = node;
            in->local_rank += r < in->rank;
            in->local_size++;
        }
    }
    in->nnodes = nnames;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    in->oversubscribed = cores > 0 && in->local_size > cores;
    free(names);
    return st;
}
