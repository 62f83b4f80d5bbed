/*
 * launcher/store.h — the bootstrap key-value store that hintrun serves to its ranks (wire format
 * in runtime/boot_proto.h).
 *
 * Single-threaded and non-blocking: hintrun's poll loop asks for the store's descriptors, polls
 * them with its own, and hands the results back. A GET of a missing key and a FENCE are answered
 * later, when the key is put or the last rank arrives. Malformed input gets an ERROR reply and
 * that connection is closed; nothing a client sends can stop the store.
 */
#ifndef HINT_LAUNCHER_STORE_H
#define HINT_LAUNCHER_STORE_H

#include <poll.h>
#include <stddef.h>
#include <sys/types.h>

struct store;

/* Listens on a new Unix socket at path ("@name": an abstract socket, see boot_unix_addr) for a job of nranks ranks whose secret is token
   (BOOT_TOKEN_LEN hex digits). Returns 0, or -1 with a message printed. */
int store_open(struct store **out, const char *path, int nranks, const char *token);
/* Also listens on TCP at ip (port chosen by the kernel), for a job whose ranks run on nagents
   hosts, each with its agent (hintrun --agent) connected too. Writes the address ranks and
   agents connect to, "tcp:IP:PORT", into addr. Returns 0, or -1 with a message printed. */
int store_listen_tcp(struct store *s, const char *ip, int nagents, char *addr, size_t cap);
/* Closes every connection and the listening socket (a socket file is the caller's). */
void store_close(struct store *s);

/* Most descriptors store_fill_pollfds can return. */
size_t store_max_pollfds(const struct store *s);
/* Writes the descriptors to poll into pfd; returns their count. */
size_t store_fill_pollfds(struct store *s, struct pollfd *pfd);
/* Handles poll's results for the n descriptors that store_fill_pollfds returned. */
void store_handle(struct store *s, const struct pollfd *pfd, size_t n);

/* Tells the store that rank's process is gone: requests that only it could satisfy fail. */
void store_rank_exited(struct store *s, int rank);

/* 0: rank has not connected (no hint_init yet); 1: it has (HELLO); 2: it has also said BYE
   (hint_finalize). */
int store_rank_joined(const struct store *s, int rank);
/* 1 if rank connected (hint_init) and never said BYE (hint_finalize): a rank that exits like
   that left its peers waiting for it, whatever its exit status. */
int store_rank_left_unfinished(const struct store *s, int rank);

struct store_abort {
    int rank;
    pid_t pid;
    int code;
    char msg[4097];
};
/* Returns 1 and fills *a once after a rank sent ABORT, else 0. */
int store_take_abort(struct store *s, struct store_abort *a);

/* 1 once the agent of host node has connected with the job's token. */
int store_agent_joined(const struct store *s, int node);

/* A rank on another host has exited, as its host's agent reported (EXITED). */
struct store_exit {
    int node;          /* the host whose agent reported it */
    int rank;
    pid_t pid;         /* on that host */
    int how;           /* BOOT_EXIT_* */
    int status;        /* exit status or signal */
};
/* Returns 1 and fills *e with the oldest report not yet taken, else 0. */
int store_take_exit(struct store *s, struct store_exit *e);

#endif
