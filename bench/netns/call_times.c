/*
 * bench/netns/call_times.c — an LD_PRELOAD library for bench/netns/loopback.sh: stamps the libc
 * calls a ping-pong over libfabric's tcp providers makes (recv/recvfrom/recvmsg, send/sendto/
 * sendmsg, epoll_wait with no timeout) with CLOCK_MONOTONIC and writes them at exit to
 * $SHIM_OUT.ev.<pid> (one "ns letter" line each: R data received, S send entered, s send returned,
 * r receive entered, E/e/h empty poll entered / returned empty / returned events) and a summary
 * to $SHIM_OUT.<pid>. The same stamps for hint and fi_pingpong, so the round trips (S to S) of
 * both are measured alike; their low percentiles stay put on a loaded machine where averages do
 * not. Not part of the build: loopback.sh compiles it.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static long now(void);
#define N 200000
static __thread long t_recv, t_poll;
static long turn[N], pollgap[N], pollcost[N];
static int nturn, ngap, ncost;
#define NE 4000000
static struct { long t; char c; } ev_[NE];
static int nev;
static void logev(char c) { if (nev < NE) { ev_[nev].t = now(); ev_[nev].c = c; nev++; } }

static long now(void);
static long now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec * 1000000000L + ts.tv_nsec; }
static void mark_send(void) { logev('S'); if (t_recv) { if (nturn < N) turn[nturn++] = now() - t_recv; t_recv = 0; } }
ssize_t recvfrom(int fd, void *b, size_t n, int fl, struct sockaddr *a, socklen_t *l) {
  static ssize_t (*f)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
  if (!f) f = dlsym(RTLD_NEXT, "recvfrom");
  logev('r'); ssize_t r = f(fd, b, n, fl, a, l); if (r > 0) { t_recv = now(); logev('R'); } return r; }
ssize_t recv(int fd, void *b, size_t n, int fl) {
  static ssize_t (*f)(int, void *, size_t, int);
  if (!f) f = dlsym(RTLD_NEXT, "recv");
  logev('r'); ssize_t r = f(fd, b, n, fl); if (r > 0) { t_recv = now(); logev('R'); } return r; }
ssize_t recvmsg(int fd, struct msghdr *m, int fl) {
  static ssize_t (*f)(int, struct msghdr *, int);
  if (!f) f = dlsym(RTLD_NEXT, "recvmsg");
  ssize_t r = f(fd, m, fl); if (r > 0) { t_recv = now(); logev('R'); } return r; }
ssize_t sendto(int fd, const void *b, size_t n, int fl, const struct sockaddr *a, socklen_t l) {
  static ssize_t (*f)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
  if (!f) f = dlsym(RTLD_NEXT, "sendto");
  mark_send(); ssize_t r = f(fd, b, n, fl, a, l); logev('s'); return r; }
ssize_t send(int fd, const void *b, size_t n, int fl) {
  static ssize_t (*f)(int, const void *, size_t, int);
  if (!f) f = dlsym(RTLD_NEXT, "send");
  mark_send(); ssize_t r = f(fd, b, n, fl); logev('s'); return r; }
ssize_t sendmsg(int fd, const struct msghdr *m, int fl) {
  static ssize_t (*f)(int, const struct msghdr *, int);
  if (!f) f = dlsym(RTLD_NEXT, "sendmsg");
  mark_send(); ssize_t r = f(fd, m, fl); logev('s'); return r; }
int epoll_wait(int ep, struct epoll_event *ev, int n, int to) {
  static int (*f)(int, struct epoll_event *, int, int);
  if (!f) f = dlsym(RTLD_NEXT, "epoll_wait");
  if (to != 0) return f(ep, ev, n, to);
  long a = now(); logev('E');
  if (t_poll && ngap < N) pollgap[ngap++] = a - t_poll;
  int r = f(ep, ev, n, to);
  long b = now(); logev(r ? 'h' : 'e');
  if (r == 0 && ncost < N) pollcost[ncost++] = b - a;
  t_poll = r == 0 ? b : 0;
  return r; }
static int cmp(const void *a, const void *b) { long x = *(const long *)a, y = *(const long *)b; return x < y ? -1 : x > y; }
static void pr(FILE *o, const char *w, long *v, int n) {
  if (n == 0) return;
  qsort(v, n, sizeof *v, cmp);
  fprintf(o, "%-9s n=%6d min %6ld p10 %6ld p25 %6ld med %6ld ns\n", w, n, v[0], v[n / 10], v[n / 4], v[n / 2]); }
__attribute__((destructor)) static void fin(void) {
  if (nturn < 100) return;
  const char *d = getenv("SHIM_OUT");
  char p[256]; snprintf(p, sizeof p, "%s.%d", d ? d : "/tmp/call_times", getpid());
  FILE *o = fopen(p, "w"); if (!o) return;
  pr(o, "turnaround", turn, nturn); pr(o, "pollgap", pollgap, ngap); pr(o, "pollcost", pollcost, ncost);
  fclose(o);
  snprintf(p, sizeof p, "%s.ev.%d", d ? d : "/tmp/call_times", getpid());
  o = fopen(p, "w"); if (!o) return;
  for (int i = 0; i < nev; i++) fprintf(o, "%ld %c\n", ev_[i].t, ev_[i].c);
  fclose(o); }
