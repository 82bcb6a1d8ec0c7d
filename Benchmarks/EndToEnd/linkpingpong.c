// linkpingpong.c: what a worker link costs the kernel, without the daemon. Two processes pinned
// to CPU 0 send a 64-byte message back and forth, each waiting in epoll_wait as NIO does, over
// a Unix stream socketpair or over two pipes.
//
//   cc -O2 -o linkpingpong linkpingpong.c && ./linkpingpong socketpair 200000 && ./linkpingpong pipes 200000
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Answers `rounds` messages read from `in` with a message to `out`; the first side starts.
static void bounce(int in, int out, int rounds, int starts) {
  int poller = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN};
  epoll_ctl(poller, EPOLL_CTL_ADD, in, &event);
  char message[256];
  memset(message, 'x', sizeof message);
  if (starts && write(out, message, 64) != 64) exit(1);
  for (int i = 0; i < rounds; i++) {
    struct epoll_event ready;
    if (epoll_wait(poller, &ready, 1, -1) != 1) exit(1);
    if (read(in, message, sizeof message) <= 0) exit(1);
    if (i + 1 < rounds || !starts) {
      if (write(out, message, 64) != 64) exit(1);
    }
  }
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s socketpair|pipes ROUNDS\n", argv[0]);
    return 2;
  }
  int rounds = atoi(argv[2]);
  int pipes = strcmp(argv[1], "pipes") == 0;
  int forth[2], back[2];
  if (pipes ? pipe(forth) || pipe(back) : socketpair(AF_UNIX, SOCK_STREAM, 0, forth)) return 1;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  CPU_SET(0, &cpus);
  sched_setaffinity(0, sizeof cpus, &cpus);
  double start = now();
  if (fork() == 0) {
    if (pipes) bounce(forth[0], back[1], rounds, 0); else bounce(forth[1], forth[1], rounds, 0);
    exit(0);
  }
  if (pipes) bounce(back[0], forth[1], rounds, 1); else bounce(forth[0], forth[0], rounds, 1);
  wait(NULL);
  printf("%s: %.2f us per round trip\n", argv[1], (now() - start) / rounds * 1e6);
  return 0;
}
