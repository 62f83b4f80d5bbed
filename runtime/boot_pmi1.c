/*
 * runtime/boot_pmi1.c — the PMI-1 back end (runtime/boot_backend.h): the simple wire protocol
 * that MPICH's Hydra (mpiexec.hydra), Flux and Slurm's --mpi=pmi2 plugin serve to each rank on an
 * inherited descriptor, PMI_FD, with PMI_RANK and PMI_SIZE beside it.
 *
 * Requests and replies are text lines of key=value words:
 *   cmd=init pmi_version=1 pmi_subversion=1   ->  cmd=response_to_init ... rc=0
 *   cmd=get_maxes                             ->  cmd=maxes kvsname_max=K keylen_max=K vallen_max=V
 *   cmd=get_my_kvsname                        ->  cmd=my_kvsname kvsname=NAME
 *   cmd=put kvsname=NAME key=K value=V        ->  cmd=put_result rc=0
 *   cmd=barrier_in                            ->  cmd=barrier_out
 *   cmd=get kvsname=NAME key=K                ->  cmd=get_result rc=0 value=V
 *   cmd=abort exitcode=N                      (no reply: the process manager ends the job)
 *   cmd=finalize                              ->  cmd=finalize_ack
 * The key-value space is the job's: a key put by any rank is seen by all after the next barrier.
 * Values are text without spaces, so hint's binary values travel as hex; a value longer than the
 * server's vallen_max is put in parts (KEY, KEY#1, KEY#2 ...), the first starting "HEXLEN:".
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hint.h"
#include "runtime/boot_backend.h"
#include "runtime/boot_proto.h"

static struct {
    int fd;
    char kvsname[256];
    size_t vallen_max, keylen_max;
    char *line;       /* the last reply, NUL-terminated */
    size_t line_cap;
    char rbuf[4096];  /* bytes read past the last reply */
    size_t rlen;
    int rank;
} pmi = {.fd = -1};

#define PMI_WHO "PMI-1"

static int pmi_lost(const char *what, const char *why)
{
    boot_say(PMI_WHO, "rank %d: lost the connection to the process manager (PMI_FD) during %s: "
             "%s (has mpiexec ended the job?)", pmi.rank, what, why);
    if (pmi.fd >= 0)
        close(pmi.fd);
    pmi.fd = -1;
    return HINT_ERR_BOOTSTRAP;
}

static int pmi_send(const char *what, const char *text)
{
    size_t n = strlen(text);
    if (pmi.fd < 0)
        return HINT_ERR_BOOTSTRAP;
    while (n > 0) {
        ssize_t w = write(pmi.fd, text, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return pmi_lost(what, strerror(errno));
        text += w;
        n -= (size_t)w;
    }
    return HINT_SUCCESS;
}

/* Reads one reply line into pmi.line (without its newline). */
static int pmi_recv(const char *what)
{
    size_t len = 0;
    for (;;) {
        char *nl = memchr(pmi.rbuf, '\n', pmi.rlen);
        size_t take = nl ? (size_t)(nl - pmi.rbuf) : pmi.rlen;
        if (len + take + 1 > pmi.line_cap) {
            size_t cap = (len + take + 1) * 2;
            char *l = realloc(pmi.line, cap);
            if (!l)
                return HINT_ERR_NOMEM;
            pmi.line = l;
            pmi.line_cap = cap;
        }
        memcpy(pmi.line + len, pmi.rbuf, take);
        len += take;
        size_t used = nl ? take + 1 : take;
        memmove(pmi.rbuf, pmi.rbuf + used, pmi.rlen - used);
        pmi.rlen -= used;
        if (nl) {
            pmi.line[len] = '\0';
            return HINT_SUCCESS;
        }
        ssize_t r;
        do
            r = read(pmi.fd, pmi.rbuf, sizeof pmi.rbuf);
        while (r < 0 && errno == EINTR);
        if (r <= 0)
            return pmi_lost(what, r == 0 ? "it closed the connection" : strerror(errno));
        pmi.rlen = (size_t)r;
    }
}

/* The value of word name= in the last reply (up to the next space), copied into out. */
static int pmi_field(const char *name, char *out, size_t cap)
{
    size_t n = strlen(name);
    for (const char *p = pmi.line; p && *p;) {
        while (*p == ' ')
            p++;
        if (strncmp(p, name, n) == 0 && p[n] == '=') {
            const char *v = p + n + 1, *end = strchr(v, ' ');
            size_t len = end ? (size_t)(end - v) : strlen(v);
            if (len >= cap)
                return -1;
            memcpy(out, v, len);
            out[len] = '\0';
            return 0;
        }
        p = strchr(p, ' ');
    }
    return -1;
}

/* Sends a request and reads its reply, which must be cmd=expect (and rc=0 when it has an rc). */
static int pmi_call(const char *request, const char *expect)
{
    char cmd[64], rc[16];
    int st = pmi_send(expect, request);
    if (st || (st = pmi_recv(expect)))
        return st;
    if (pmi_field("cmd", cmd, sizeof cmd) != 0 || strcmp(cmd, expect) != 0) {
        boot_say(PMI_WHO, "rank %d: the process manager answered '%.200s' where cmd=%s was "
                 "expected", pmi.rank, pmi.line, expect);
        return HINT_ERR_BOOTSTRAP;
    }
    if (pmi_field("rc", rc, sizeof rc) == 0 && strcmp(rc, "0") != 0)
        return HINT_ERR_BOOTSTRAP; /* the caller says what failed */
    return HINT_SUCCESS;
}

static int env_int(const char *name, long min, long max, int *out)
{
    const char *s = getenv(name);
    char *end;
    long v = s ? strtol(s, &end, 10) : -1;
    if (!s || !*s || *end || v < min || v > max) {
        boot_say(PMI_WHO, "%s='%s' is not an integer in [%ld, %ld]; a PMI-1 process manager "
                 "sets PMI_FD, PMI_RANK and PMI_SIZE together", name, s ? s : "(unset)", min, max);
        return HINT_ERR_BOOTSTRAP;
    }
    *out = (int)v;
    return HINT_SUCCESS;
}

/* ---------------------------------------------------------------- the key-value space */

/* Largest hex text per part, leaving room for the "HEXLEN:" prefix of the first. */
static size_t part_max(void)
{
    return pmi.vallen_max > 64 ? pmi.vallen_max - 32 : 32;
}

static int put_text(const char *key, const char *text, size_t n)
{
    size_t cap = strlen(pmi.kvsname) + strlen(key) + n + 64;
    char *req = malloc(cap);
    if (!req)
        return HINT_ERR_NOMEM;
    snprintf(req, cap, "cmd=put kvsname=%s key=%s value=%.*s\n", pmi.kvsname, key, (int)n, text);
    int st = pmi_call(req, "put_result");
    free(req);
    if (st == HINT_ERR_BOOTSTRAP)
        boot_say(PMI_WHO, "rank %d: put '%s' was refused: %.200s", pmi.rank, key, pmi.line);
    return st;
}

static int pmi1_put(const char *key, const void *val, size_t len)
{
    size_t hexlen = 2 * len, pm = part_max();
    if (strlen(key) + 8 > pmi.keylen_max) {
        boot_say(PMI_WHO, "key '%s' is longer than the process manager's %zu bytes", key,
                 pmi.keylen_max);
        return HINT_ERR_ARG;
    }
    char *text = malloc(hexlen + 32);
    if (!text)
        return HINT_ERR_NOMEM;
    int pre = snprintf(text, 32, "%zu:", hexlen);
    boot_hex_encode(val, len, text + pre);
    size_t total = (size_t)pre + hexlen, off = 0;
    int st = HINT_SUCCESS;
    for (int part = 0; st == HINT_SUCCESS && (off < total || part == 0); part++) {
        char k[BOOT_KEY_MAX + 16];
        if (part == 0)
            snprintf(k, sizeof k, "%s", key);
        else
            snprintf(k, sizeof k, "%s#%d", key, part);
        size_t n = total - off < pm ? total - off : pm;
        st = put_text(k, text + off, n);
        off += n;
    }
    free(text);
    return st;
}

/* Gets the text of key into pmi.line's value field; *v points at it. */
static int get_text(const char *key, char **v)
{
    char req[BOOT_KEY_MAX + 300];
    snprintf(req, sizeof req, "cmd=get kvsname=%s key=%s\n", pmi.kvsname, key);
    int st = pmi_call(req, "get_result");
    if (st == HINT_ERR_BOOTSTRAP) {
        boot_say(PMI_WHO, "rank %d: get '%s': no rank put it before the last fence (%.200s)",
                 pmi.rank, key, pmi.line);
        return st;
    }
    if (st)
        return st;
    char *p = strstr(pmi.line, " value=");
    if (!p) {
        boot_say(PMI_WHO, "rank %d: get '%s': reply without a value: %.200s", pmi.rank, key,
                 pmi.line);
        return HINT_ERR_BOOTSTRAP;
    }
    p += 7;
    p[strcspn(p, " ")] = '\0';
    *v = p;
    return HINT_SUCCESS;
}

static int pmi1_get(const char *key, void *val, size_t cap, size_t *len)
{
    char *v, *colon;
    int st = get_text(key, &v);
    if (st)
        return st;
    size_t hexlen = strtoul(v, &colon, 10);
    if (*colon != ':' || hexlen % 2) {
        boot_say(PMI_WHO, "rank %d: get '%s': the value is not one hint put", pmi.rank, key);
        return HINT_ERR_BOOTSTRAP;
    }
    char *hex = malloc(hexlen + 1);
    if (!hex)
        return HINT_ERR_NOMEM;
    size_t have = strlen(colon + 1);
    memcpy(hex, colon + 1, have < hexlen ? have : hexlen);
    for (int part = 1; st == HINT_SUCCESS && have < hexlen; part++) {
        char k[BOOT_KEY_MAX + 16];
        snprintf(k, sizeof k, "%s#%d", key, part);
        if ((st = get_text(k, &v)) == HINT_SUCCESS) {
            size_t n = strlen(v);
            n = n < hexlen - have ? n : hexlen - have;
            memcpy(hex + have, v, n);
            have += n;
        }
    }
    *len = hexlen / 2;
    if (st == HINT_SUCCESS) {
        unsigned char *bin = malloc(hexlen / 2 + 1);
        if (!bin)
            st = HINT_ERR_NOMEM;
        else if (boot_hex_decode(hex, hexlen, bin) != 0)
            st = HINT_ERR_BOOTSTRAP;
        else
            memcpy(val, bin, *len < cap ? *len : cap);
        free(bin);
        if (st == HINT_SUCCESS && *len > cap)
            st = HINT_ERR_TRUNCATE;
    }
    free(hex);
    return st;
}

static int pmi1_fence(void)
{
    return pmi_call("cmd=barrier_in\n", "barrier_out");
}

static void pmi1_abort(int code, const char *msg)
{
    (void)msg; /* the front printed it; PMI-1's abort carries no text */
    char req[64];
    snprintf(req, sizeof req, "cmd=abort exitcode=%d\n", boot_abort_status(code));
    if (pmi.fd >= 0 && pmi_send("abort", req) == HINT_SUCCESS) {
        /* the process manager kills the job; give it a moment before exiting ourselves (a
           rank that exits non-zero ends the job under Hydra too) */
        struct pollfd p = {.fd = pmi.fd, .events = POLLIN};
        (void)poll(&p, 1, 2000);
    }
}

static void pmi1_fini(void)
{
    if (pmi.fd >= 0)
        (void)pmi_call("cmd=finalize\n", "finalize_ack");
    if (pmi.fd >= 0)
        close(pmi.fd);
    pmi.fd = -1;
    free(pmi.line);
    pmi.line = NULL;
    pmi.line_cap = pmi.rlen = 0;
}

static const struct boot_backend pmi1_backend = {
    .name = PMI_WHO,
    .put = pmi1_put,
    .get = pmi1_get,
    .fence = pmi1_fence,
    .abort = pmi1_abort,
    .fini = pmi1_fini,
};

/* ---------------------------------------------------------------- joining */

static int pmi_handshake(void)
{
    char v[64];
    if (pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init")) {
        boot_say(PMI_WHO, "rank %d: the process manager on PMI_FD refused PMI version 1.1: %.200s",
                 pmi.rank, pmi.line ? pmi.line : "");
        return HINT_ERR_BOOTSTRAP;
    }
    if (pmi_call("cmd=get_maxes\n", "maxes") || pmi_field("vallen_max", v, sizeof v) ||
        (pmi.vallen_max = strtoul(v, NULL, 10)) < 64 || pmi_field("keylen_max", v, sizeof v) ||
        (pmi.keylen_max = strtoul(v, NULL, 10)) < 16) {
        boot_say(PMI_WHO, "rank %d: get_maxes gave no usable limits: %.200s", pmi.rank,
                 pmi.line ? pmi.line : "");
        return HINT_ERR_BOOTSTRAP;
    }
    if (pmi_call("cmd=get_my_kvsname\n", "my_kvsname") ||
        pmi_field("kvsname", pmi.kvsname, sizeof pmi.kvsname)) {
        boot_say(PMI_WHO, "rank %d: get_my_kvsname gave no name: %.200s", pmi.rank,
                 pmi.line ? pmi.line : "");
        return HINT_ERR_BOOTSTRAP;
    }
    return HINT_SUCCESS;
}

int boot_pmi1_init(struct boot_info *info, const struct boot_backend **be)
{
    int st, fd;
    *info = (struct boot_info){0};
    if ((st = env_int("PMI_FD", 0, INT_MAX, &fd)) || (st = env_int("PMI_SIZE", 1, INT_MAX, &info->size)) ||
        (st = env_int("PMI_RANK", 0, info->size - 1, &info->rank)))
        return st;
    pmi.fd = fd;
    pmi.rank = info->rank;
    if ((st = pmi_handshake()) || (st = boot_geometry_from_hosts(info, &pmi1_backend))) {
        pmi1_fini();
        return st;
    }
    /* the kvsname is the job's, and different for every job on the machine */
    char name[300];
    snprintf(name, sizeof name, "pmi1:%s", pmi.kvsname);
    boot_jobid_from_name(name, info->jobid);
    *be = &pmi1_backend;
    return HINT_SUCCESS;
}
