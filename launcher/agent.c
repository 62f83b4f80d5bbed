/*
 * launcher/agent.c — `hintrun --agent`: one host's part of a job across hosts (remote.c starts
 * it through the launch agent).
 *
 * It reads its job from stdin (never from its command line: the token is a secret): a header
 * line "hint-agent 1 TOKEN JOBID STORE FIRST N WORLD NODE NNODES ARGC HOST", then ARGC
 * NUL-terminated arguments, the ranks' command line as hintrun parses it, then the front's
 * working directory (it changes to it when it can, so relative paths mean what they mean there). It connects to the
 * front's store (AGENT frame) first of all, so the front can tell a running agent from a launch
 * agent that failed, then runs world ranks FIRST .. FIRST+N-1 exactly as hintrun runs local
 * ranks (spawn.c, bind.c, output.c, watch.c, cleanup.c) with HINT_STORE the front's TCP store
 * and HINT_NODE_ID its host, but without a store of its own. Each rank's exit goes to the front
 * (EXITED), which judges it (it knows which ranks finalized) and prints the failure with this
 * host's name; a failing rank also ends this host's ranks at once. EOF on stdin or on the store
 * connection (the front ended the job, or died) ends the ranks (SIGTERM, SIGKILL 0.3 s later),
 * and the agent cleans its host and exits. An "s" on stdin (the front's --timeout expired) asks
 * each rank what it waits in (report.c). Before exiting it waits (briefly) for the front to
 * acknowledge its reports, so the front has judged every rank exit before it sees the agent's.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "launcher/launch.h"
#include "runtime/boot_proto.h"

#define AGENT_READ_TIMEOUT_MS 60000  /* for the job description on stdin */
#define AGENT_CONNECT_TIMEOUT_MS 10000
#define AGENT_ACK_TIMEOUT_MS 2000
#define AGENT_MSG_MAX (8u << 20)

static int agent_refuse(const char *why)
{
    fprintf(stderr, "hintrun: --agent is internal: a front hintrun with --host starts it through "
            "the launch agent and writes its job on its stdin (%s)\n", why);
    return 2;
}

struct agent_header {
    char token[64], jobid[32], store[128], host[256];
    int first, n, world, node, nnodes, argc;
};

static int agent_parse_header(const char *line, struct agent_header *h)
{
    int version = 0;
    if (sscanf(line, "hint-agent %d %63s %31s %127s %d %d %d %d %d %d %255s", &version, h->token,
               h->jobid, h->store, &h->first, &h->n, &h->world, &h->node, &h->nnodes, &h->argc,
               h->host) != 11 || version != 1)
        return -1;
    if (!boot_is_hex(h->token, BOOT_TOKEN_LEN) || !boot_is_hex(h->jobid, BOOT_JOBID_LEN) ||
        strncmp(h->store, "tcp:", 4) != 0 || h->world < 1 || h->world > LAUNCH_MAX_RANKS ||
        h->first < 0 || h->n < 1 || h->first + h->n > h->world || h->nnodes < 1 || h->node < 0 ||
        h->node >= h->nnodes || h->argc < 2 || h->argc > (1 << 20))
        return -1;
    return 0;
}

/* Reads until the header line, its ARGC NUL-terminated arguments and the front's working
   directory (NUL-terminated too) are in. 0, or -1 with why set. */
static int agent_read_job(struct agent_header *h, char **buf_out, const char **why)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    int have_header = 0, nuls = 0;
    while (buf && !(have_header && nuls > h->argc)) {
        struct pollfd p = {.fd = 0, .events = POLLIN};
        int rc = poll(&p, 1, AGENT_READ_TIMEOUT_MS);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            *why = rc == 0 ? "nothing came on stdin for 60 s" : "poll on stdin failed";
            break;
        }
        if (len + 1 >= cap) {
            char *nb = cap < AGENT_MSG_MAX ? realloc(buf, cap *= 2) : NULL;
            if (!nb) {
                *why = "the job description is too large";
                break;
            }
            buf = nb;
        }
        ssize_t r = read(0, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *why = r == 0 ? "stdin ended before the job's description" : strerror(errno);
            break;
        }
        for (size_t i = len; i < len + (size_t)r; i++) {
            if (!have_header && buf[i] == '\n') {
                buf[i] = '\0';
                if (agent_parse_header(buf, h) != 0) {
                    *why = "malformed header";
                    free(buf);
                    return -1;
                }
                have_header = 1;
            } else if (have_header && buf[i] == '\0') {
                nuls++;
            }
        }
        len += (size_t)r;
    }
    if (buf && have_header && nuls > h->argc) {
        *buf_out = buf;
        return 0;
    }
    if (!buf)
        *why = "out of memory";
    free(buf);
    return -1;
}

/* ---------------------------------------------------------------- the store connection */

static int agent_send(int fd, const struct boot_buf *b)
{
    size_t off = 0;
    while (!b->failed && off < b->len) {
        ssize_t w = send(fd, b->data + off, b->len - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return b->failed ? -1 : 0;
}

/* Connects to the front's store and says which host this is; waits for its OK. */
static int agent_connect(struct launch_job *job, const struct agent_header *h)
{
    char host[256], port[16];
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *list = NULL;
    int err = 0, fd = -1;
    if (boot_tcp_split(h->store + 4, host, sizeof host, port, sizeof port) != 0)
        return -1;
    int rc = getaddrinfo(host, port, &hints, &list);
    if (rc != 0) {
        fprintf(stderr, "hintrun: agent on host %s: cannot resolve the store's address %s: %s\n",
                h->host, h->store, gai_strerror(rc));
        return -1;
    }
    for (struct addrinfo *ai = list; ai && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 &&
            (err = boot_connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, AGENT_CONNECT_TIMEOUT_MS)) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0) {
        fprintf(stderr, "hintrun: agent on host %s: cannot reach hintrun's store at %s: %s (does "
                "this host reach that address? the front's --store-addr ADDR picks another)\n",
                h->host, h->store, strerror(err));
        return -1;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
    struct boot_buf b = {0};
    boot_frame_begin(&b, BOOT_OP_AGENT);
    boot_buf_u32(&b, (uint32_t)h->node);
    boot_buf_u32(&b, (uint32_t)getpid());
    boot_buf_add(&b, h->token, BOOT_TOKEN_LEN);
    boot_frame_end(&b, 0);
    unsigned char raw[BOOT_HDR_LEN];
    struct boot_hdr rh = {0};
    size_t got = 0;
    rc = agent_send(fd, &b);
    boot_buf_free(&b);
    while (rc == 0 && got < sizeof raw) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, AGENT_CONNECT_TIMEOUT_MS) <= 0)
            break;
        ssize_t r = recv(fd, raw + got, sizeof raw - got, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    if (got == sizeof raw)
        boot_hdr_decode(raw, &rh);
    if (rc != 0 || got < sizeof raw || boot_hdr_check(&rh, 0) || rh.op != BOOT_OP_OK) {
        fprintf(stderr, "hintrun: agent on host %s: the store at %s did not accept this agent%s\n",
                h->host, h->store, rh.op == BOOT_OP_ERROR ? " (wrong token or host?)" : "");
        close(fd);
        return -1;
    }
    job->ctl_fd = fd;
    return 0;
}

/* The front is gone or refuses us: end this host's ranks. */
static void agent_lost_front(struct launch_job *job)
{
    if (job->ctl_fd >= 0)
        close(job->ctl_fd);
    job->ctl_fd = -1;
    if (!job->ending)
        launch_end_job(job, 128 + SIGTERM, SIGTERM, LAUNCH_KILL_GRACE);
}

void launch_agent_report_exit(struct launch_job *job, int rank, int how, int status)
{
    if (job->ctl_fd < 0)
        return;
    struct boot_buf b = {0};
    boot_frame_begin(&b, BOOT_OP_EXITED);
    boot_buf_u32(&b, (uint32_t)(job->rank_base + rank));
    boot_buf_u32(&b, (uint32_t)job->ranks[rank].pid);
    boot_buf_u32(&b, (uint32_t)how);
    boot_buf_u32(&b, (uint32_t)status);
    boot_frame_end(&b, 0);
    if (agent_send(job->ctl_fd, &b) == 0)
        job->ctl_unacked++;
    else
        agent_lost_front(job);
    boot_buf_free(&b);
}

/* Reads the front's replies: OKs (each acknowledges an EXITED); anything else, or EOF, means
   the front is gone or refuses this agent. */
static void agent_read_replies(struct launch_job *job, int wait_ms)
{
    unsigned char raw[BOOT_HDR_LEN * 16];
    ssize_t r;
    do {
        if (wait_ms > 0) {
            struct pollfd p = {.fd = job->ctl_fd, .events = POLLIN};
            if (poll(&p, 1, wait_ms) <= 0)
                return;
        }
        /* OK replies have no body: whole headers only, so reading a multiple of their size
           never splits one */
        r = recv(job->ctl_fd, raw, sizeof raw, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        if (r <= 0 || r % BOOT_HDR_LEN != 0) {
            agent_lost_front(job);
            return;
        }
        for (ssize_t i = 0; i < r; i += BOOT_HDR_LEN) {
            struct boot_hdr h;
            boot_hdr_decode(raw + i, &h);
            if (boot_hdr_check(&h, 0) || h.op != BOOT_OP_OK) {
                agent_lost_front(job);
                return;
            }
            job->ctl_unacked--;
        }
    } while (wait_ms > 0 && job->ctl_unacked > 0);
}

size_t launch_agent_fill_poll(struct launch_job *job, struct pollfd *pfd)
{
    size_t n = 0;
    if (!job->agent)
        return 0;
    /* unused slots stay -1 so the handler knows which is which */
    pfd[n++] = (struct pollfd){.fd = job->ctl_in, .events = POLLIN};
    pfd[n++] = (struct pollfd){.fd = job->ctl_fd, .events = POLLIN};
    return n;
}

void launch_agent_handle(struct launch_job *job, const struct pollfd *pfd, size_t n)
{
    if (n < 2)
        return;
    if (pfd[0].fd >= 0 && pfd[0].revents) {
        char sink[256];
        ssize_t r = read(job->ctl_in, sink, sizeof sink);
        if (r > 0 && memchr(sink, 's', (size_t)r) && !job->ending)
            launch_ask_states(job); /* the front's --timeout expired */
        if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
            /* the front ended the job or is gone; /dev/null keeps descriptor 0 taken, so no
               later pipe or socket becomes "stdin" */
            int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (null >= 0 && dup2(null, job->ctl_in) >= 0)
                close(null);
            else
                close(job->ctl_in);
            job->ctl_in = -1;
            if (!job->ending)
                launch_end_job(job, 128 + SIGTERM, SIGTERM, LAUNCH_KILL_GRACE);
        }
    }
    if (pfd[1].fd >= 0 && pfd[1].revents && job->ctl_fd >= 0)
        agent_read_replies(job, 0);
}

/* ---------------------------------------------------------------- main */

int launch_agent_main(int argc, char **argv)
{
    (void)argv;
    if (argc != 2)
        return agent_refuse("it takes no other argument");
    if (isatty(0))
        return agent_refuse("stdin is a terminal");
    char *buf = NULL;
    const char *why = "";
    struct agent_header h;
    if (agent_read_job(&h, &buf, &why) != 0)
        return agent_refuse(why);
    char **args = calloc((size_t)h.argc + 1, sizeof *args);
    char *p = buf + strlen(buf) + 1;
    for (int i = 0; args && i < h.argc; i++) {
        args[i] = p;
        p += strlen(p) + 1;
    }
    /* where the front runs: relative paths mean the same on a host that shares the directory */
    if (args && *p && chdir(p) != 0) {
        char here[PATH_MAX];
        fprintf(stderr, "hintrun: agent on host %s: cannot change to %s (the front's directory): "
                "%s; relative paths are taken from %s\n", h.host, p, strerror(errno),
                getcwd(here, sizeof here) ? here : "(unknown)");
    }
    struct launch_opts opts = {0};
    struct launch_job job = {.sigfd = -1, .exit_code = -1, .watch_fd = -1, .ctl_in = 0,
                             .ctl_fd = -1, .agent = 1};
    int rc = 1;
    if (!args) {
        fprintf(stderr, "hintrun: agent: out of memory\n");
        goto out;
    }
    /* the agent's ranks get the front's ids and store */
    /* lengths checked by agent_parse_header */
    memcpy(job.jobid, h.jobid, BOOT_JOBID_LEN + 1);
    memcpy(job.token, h.token, BOOT_TOKEN_LEN + 1);
    snprintf(job.store_addr, sizeof job.store_addr, "%s", h.store);
    snprintf(job.host, sizeof job.host, "%s", h.host);
    job.np = h.n;
    job.world_np = h.world;
    job.rank_base = h.first;
    job.node_id = h.node;
    job.nnodes = h.nnodes;
    if (agent_connect(&job, &h) != 0)
        goto out;
    rc = launch_parse_options(h.argc, args, &opts);
    opts.stdin_rank = LAUNCH_STDIN_NONE; /* stdin is the front's pipe, not the ranks' */
    if (rc < 0 && opts.np != h.world) {
        fprintf(stderr, "hintrun: agent on host %s: the command line has %d ranks, the job %d\n",
                h.host, opts.np, h.world);
        rc = 2;
    }
    if (rc < 0) {
        fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
        rc = launch_run(&job, &opts);
        if (job.opts)
            launch_cleanup(&job);
    }
    if (job.ctl_fd >= 0 && job.ctl_unacked > 0)
        agent_read_replies(&job, AGENT_ACK_TIMEOUT_MS);
    if (job.ctl_fd >= 0)
        close(job.ctl_fd);
    launch_free_hosts(&opts);
    free(opts.pass);
    free(opts.xvars);
    free(opts.apps);
out:
    free(args);
    free(buf);
    return rc;
}
