// The end-to-end load tool, and the reference echo server it is compared with.
//
//   loadgen echo-server PATH                 serves a NUL-framed echo on the Unix socket PATH
//   loadgen relay-server PATH                the same echo, made by a worker process behind two
//                                            pipes: the process switches of a worker-hosted
//                                            feature with nothing else (one client at a time)
//   loadgen pingpong PROTO PATH N            N round trips, one at a time, the reply awaited in `read`
//   loadgen pingpong-poll PROTO PATH N       the same, the reply awaited in `poll` (as an event-driven
//                                            client, redis-benchmark or NIO, awaits it in epoll)
//   loadgen pipeline PROTO PATH N DEPTH      N requests with DEPTH of them in flight
//   loadgen concurrent PROTO PATH N CLIENTS  N requests from CLIENTS connections, one in flight
//                                            each (etcd's gateway answers a connection's
//                                            pipelined requests one after another)
//   loadgen fanout PROTO PATH SUBSCRIBERS N  N changes, each delivered to every subscriber
//                                            (Unix sockets and plain TCP only)
//   loadgen handshake PROTO PATH N           N fresh connections, each connected (and its TLS
//                                            handshake done), one request sent and its reply read
//
// PROTO is `switchyard` (io.switchyard.Store.Send of {"counter":{"incrTapped":{}}}), `echo`
// (the same bytes, reflected), `redis` (PING; PUBLISH/SUBSCRIBE for fanout), `redis-work` (FCALL
// of a Redis function `bump` that does HINCRBY and PUBLISH: the same work as the Send, loaded by
// Benchmarks/Peers/run.sh) or `etcd` (a put through etcd's JSON gateway, HTTP/1.1). PATH is a
// Unix socket's path, `tcp:HOST:PORT`, or `tls:HOST:PORT`: TLS 1.3 (OpenSSL) with the server
// checked against LOADGEN_CA and the client certificate LOADGEN_CERT with its key LOADGEN_KEY.
// Each run prints one line of key=value figures. Written in C so that the load generator costs
// the same for every server it measures.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char SEND[] =
    "{\"method\":\"io.switchyard.Store.Send\",\"parameters\":{\"action\":{\"counter\":{\"incrTapped\":{}}}}}";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

// A TCP connection to `tcp:HOST:PORT`, with Nagle's delay off as every peer's client has it.
static int connect_tcp(const char *address) {
  char host[256];
  const char *colon = strrchr(address, ':');
  if (!colon || (size_t)(colon - address) >= sizeof host) die("tcp address");
  memcpy(host, address, (size_t)(colon - address));
  host[colon - address] = 0;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *found;
  if (getaddrinfo(host, colon + 1, &hints, &found) != 0) die("getaddrinfo");
  int fd = socket(found->ai_family, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  if (connect(fd, found->ai_addr, found->ai_addrlen) != 0) die("connect");
  freeaddrinfo(found);
  int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  return fd;
}

// The TLS session of each descriptor the tool opened with `tls:`; none for the others.
#define MAX_TLS_FD 65536
static SSL *tls_of[MAX_TLS_FD];

static SSL *tls_session(int fd) { return fd >= 0 && fd < MAX_TLS_FD ? tls_of[fd] : NULL; }

// One client context for the run (made once, whichever client thread connects first): TLS 1.3,
// the server checked against LOADGEN_CA, the client certificate from LOADGEN_CERT and
// LOADGEN_KEY. Sessions are not resumed: each connection makes a full handshake, as a new client
// does.
static SSL_CTX *context;

static void make_tls_context(void) {
  context = SSL_CTX_new(TLS_client_method());
  if (!context) die("SSL_CTX_new");
  SSL_CTX_set_min_proto_version(context, TLS1_3_VERSION);
  SSL_CTX_set_session_cache_mode(context, SSL_SESS_CACHE_OFF);
  const char *ca = getenv("LOADGEN_CA"), *certificate = getenv("LOADGEN_CERT"), *key = getenv("LOADGEN_KEY");
  if (ca) {
    if (SSL_CTX_load_verify_locations(context, ca, NULL) != 1) goto failed;
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, NULL);
  }
  if (certificate && SSL_CTX_use_certificate_chain_file(context, certificate) != 1) goto failed;
  if (key && SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) != 1) goto failed;
  return;
failed:
  ERR_print_errors_fp(stderr);
  exit(2);
}

static SSL_CTX *tls_context(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, make_tls_context);
  return context;
}

static int connect_tls(const char *address) {
  int fd = connect_tcp(address);
  if (fd >= MAX_TLS_FD) die("tls descriptor");
  SSL *ssl = SSL_new(tls_context());
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1) {
    ERR_print_errors_fp(stderr);
    fprintf(stderr, "tls handshake with %s failed\n", address);
    exit(2);
  }
  tls_of[fd] = ssl;
  return fd;
}

// `read` and `close`, through the connection's TLS session when it has one.
static ssize_t read_from(int fd, void *bytes, size_t count) {
  SSL *ssl = tls_session(fd);
  if (!ssl) return read(fd, bytes, count);
  int got = SSL_read(ssl, bytes, (int)(count > 1 << 30 ? 1 << 30 : count));
  if (got > 0) return got;
  return SSL_get_error(ssl, got) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

static void close_connection(int fd) {
  SSL *ssl = tls_session(fd);
  if (ssl) {
    SSL_free(ssl);
    tls_of[fd] = NULL;
  }
  close(fd);
}

static int connect_to(const char *path) {
  if (strncmp(path, "tcp:", 4) == 0) return connect_tcp(path + 4);
  if (strncmp(path, "tls:", 4) == 0) return connect_tls(path + 4);
  int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) die("socket");
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, path, sizeof address.sun_path - 1);
  if (connect(fd, (struct sockaddr *)&address, sizeof address) != 0) die("connect");
  return fd;
}

static void write_all(int fd, const char *bytes, size_t count) {
  SSL *ssl = tls_session(fd);
  if (ssl) {
    // Without partial writes, SSL_write returns once all of it is written.
    if (count > 0 && SSL_write(ssl, bytes, (int)count) <= 0) die("SSL_write");
    return;
  }
  while (count > 0) {
    ssize_t written = write(fd, bytes, count);
    if (written < 0) {
      if (errno == EINTR) continue;
      die("write");
    }
    bytes += written;
    count -= (size_t)written;
  }
}

// etcd's put of `counter` = `1`, keys and values in base64 as its JSON gateway takes them.
static const char ETCD_PUT_BODY[] = "{\"key\":\"Y291bnRlcg==\",\"value\":\"MQ==\"}";

// The request of a protocol, with its terminator.
static size_t request(const char *proto, char *buffer, size_t size) {
  if (strcmp(proto, "redis") == 0) return (size_t)snprintf(buffer, size, "PING\r\n");
  if (strcmp(proto, "redis-work") == 0) return (size_t)snprintf(buffer, size, "FCALL bump 1 counter\r\n");
  if (strcmp(proto, "etcd") == 0)
    return (size_t)snprintf(buffer, size,
                            "POST /v3/kv/put HTTP/1.1\r\nHost: etcd\r\nContent-Type: application/json\r\n"
                            "Content-Length: %zu\r\n\r\n%s",
                            strlen(ETCD_PUT_BODY), ETCD_PUT_BODY);
  size_t length = strlen(SEND);
  memcpy(buffer, SEND, length);
  buffer[length] = 0;
  return length + 1;
}

// How many HTTP responses `bytes` begins, carrying a status line cut by a read over to the next
// read (one connection a process). A response that is not 200 stops the run: a failing peer
// must not be measured as a fast one.
static int http_responses(const char *bytes, ssize_t count) {
  static const char status[] = "HTTP/1.1 ";
  static __thread char carried[sizeof status + 3];
  static __thread size_t carried_count = 0;
  char window[sizeof carried + 65536];
  memcpy(window, carried, carried_count);
  size_t length = carried_count + (size_t)(count < 65536 ? count : 65536);
  memcpy(window + carried_count, bytes, length - carried_count);
  int found = 0;
  size_t needed = sizeof status - 1 + 3;
  size_t i = 0;
  for (; i + needed <= length; i++) {
    if (memcmp(window + i, status, sizeof status - 1) != 0) continue;
    if (memcmp(window + i + sizeof status - 1, "200", 3) != 0) {
      fprintf(stderr, "etcd answered: %.40s\n", window + i);
      exit(2);
    }
    found++;
  }
  carried_count = length - i;
  memcpy(carried, window + i, carried_count);
  return found;
}

// How many replies `bytes` ends: NUL-ended messages, lines for Redis, responses for etcd. An
// error reply from Redis stops the run.
static int terminators(const char *proto, const char *bytes, ssize_t count) {
  if (strcmp(proto, "etcd") == 0) return http_responses(bytes, count);
  int redis = strncmp(proto, "redis", 5) == 0;
  if (redis && count > 0 && (bytes[0] == '-' || memmem(bytes, (size_t)count, "\n-", 2) != NULL)) {
    fprintf(stderr, "redis answered: %.*s\n", (int)(count < 200 ? count : 200), bytes);
    exit(2);
  }
  char end = redis ? '\n' : 0;
  int found = 0;
  for (ssize_t i = 0; i < count; i++) found += bytes[i] == end;
  return found;
}

static int compare(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double percentile(double *values, long count, double p) {
  if (count == 0) return 0;
  long index = (long)(p * (count - 1));
  return values[index];
}

// ---------------------------------------------------------------------------------------------

// Serves a framed echo on the Unix socket at `path`: what arrives is whole or partial messages, and
// reflecting the bytes as they come keeps the framing, as a framed server would. With a worker
// (`to_worker`, `from_worker` not -1), the bytes go down to it and come back up before they are
// written to the client (one client at a time).
static void serve_echo(const char *path, int to_worker, int from_worker) {
  unlink(path);
  int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  strncpy(address.sun_path, path, sizeof address.sun_path - 1);
  if (bind(listener, (struct sockaddr *)&address, sizeof address) != 0) die("bind");
  if (listen(listener, 256) != 0) die("listen");
  int epoll = epoll_create1(0);
  struct epoll_event event = {.events = EPOLLIN, .data.fd = listener};
  epoll_ctl(epoll, EPOLL_CTL_ADD, listener, &event);
  if (from_worker >= 0) {
    struct epoll_event added = {.events = EPOLLIN, .data.fd = from_worker};
    epoll_ctl(epoll, EPOLL_CTL_ADD, from_worker, &added);
  }
  int client = -1;  // the one the worker's bytes go back to
  char buffer[65536];
  for (;;) {
    struct epoll_event events[64];
    int ready = epoll_wait(epoll, events, 64, -1);
    for (int i = 0; i < ready; i++) {
      int fd = events[i].data.fd;
      if (fd == listener) {
        int accepted = accept(listener, NULL, NULL);
        struct epoll_event added = {.events = EPOLLIN, .data.fd = accepted};
        epoll_ctl(epoll, EPOLL_CTL_ADD, accepted, &added);
        continue;
      }
      ssize_t count = read(fd, buffer, sizeof buffer);
      if (fd == from_worker) {
        if (count > 0 && client >= 0) write_all(client, buffer, (size_t)count);
        continue;
      }
      if (count <= 0) {
        close(fd);
        continue;
      }
      client = fd;
      write_all(to_worker >= 0 ? to_worker : fd, buffer, (size_t)count);
    }
  }
}

// The echo of a worker process: the server passes what a client sends down one pipe, the worker
// sends it back up another, and the server writes it to the client. Both wait in epoll, as the
// daemon's and the worker's event loops do, so a round trip has the same four process switches
// and the same system calls as a `Send` to a worker-hosted feature, and nothing else: the floor
// of that path on this machine.
static void relay_server(const char *path) {
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) die("pipe");
  if (fork() == 0) {
    close(down[1]);
    close(up[0]);
    char buffer[65536];
    int epoll = epoll_create1(0);
    struct epoll_event event = {.events = EPOLLIN, .data.fd = down[0]};
    epoll_ctl(epoll, EPOLL_CTL_ADD, down[0], &event);
    for (;;) {
      struct epoll_event ready;
      if (epoll_wait(epoll, &ready, 1, -1) < 1) continue;
      ssize_t count = read(down[0], buffer, sizeof buffer);
      if (count <= 0) exit(0);
      write_all(up[1], buffer, (size_t)count);
    }
  }
  close(down[0]);
  close(up[1]);
  serve_echo(path, down[1], up[0]);
}

// A client blocked in `read` on a Unix socket is woken by the server's read of its request too:
// freeing the request's buffer calls `unix_write_space`, which wakes every waiter on the socket,
// whatever it waits for. On one CPU that wake-up costs a server that does not answer at once (the
// worker path) two switches and the tool's run to find nothing. A waiter in `poll` for POLLIN is
// woken only by data. `in_poll` picks which client the round trips measure.
// Reads until a reply has come, waiting in `poll` first when `in_poll`.
static void await_reply(const char *proto, int fd, int in_poll) {
  char buffer[65536];
  int replies = 0;
  while (replies == 0) {
    // (Bytes TLS already decrypted are not in the socket: poll would wait for more.)
    if (in_poll && !(tls_session(fd) && SSL_pending(tls_session(fd)) > 0)) {
      struct pollfd readable = {.fd = fd, .events = POLLIN};
      if (poll(&readable, 1, -1) < 0 && errno != EINTR) die("poll");
    }
    ssize_t count = read_from(fd, buffer, sizeof buffer);
    if (count <= 0) die("read");
    replies += terminators(proto, buffer, count);
  }
}

// The line of figures: the rate of `n` calls in `elapsed` µs, and their latencies' p50 and p99.
static void report(double *latencies, long n, double elapsed) {
  qsort(latencies, (size_t)n, sizeof(double), compare);
  printf("rate=%.0f p50_us=%.1f p99_us=%.1f\n", n / (elapsed / 1e6), percentile(latencies, n, 0.5),
         percentile(latencies, n, 0.99));
}

// With `fresh`, each round trip is a new client's: connect (and the TLS handshake), one
// request, its reply, close; the time counts from before the connect.
static void pingpong(const char *proto, const char *path, long n, int in_poll, int fresh) {
  int fd = fresh ? -1 : connect_to(path);
  char message[256];
  size_t length = request(proto, message, sizeof message);
  double *latencies = malloc(sizeof(double) * (size_t)n);
  double start = now_us();
  for (long i = 0; i < n; i++) {
    double sent = now_us();
    if (fresh) fd = connect_to(path);
    write_all(fd, message, length);
    await_reply(proto, fd, in_poll);
    latencies[i] = now_us() - sent;
    if (fresh) close_connection(fd);
  }
  report(latencies, n, now_us() - start);
  if (!fresh) close_connection(fd);
}

static void pipeline(const char *proto, const char *path, long n, int depth) {
  int fd = connect_to(path);
  char message[256], buffer[65536];
  size_t length = request(proto, message, sizeof message);
  char *batch = malloc(length * (size_t)depth);
  for (int i = 0; i < depth; i++) memcpy(batch + length * (size_t)i, message, length);
  // Replies come in call order, so the i-th reply answers the i-th request: its latency is
  // the time since that request was written.
  double *sent_at = malloc(sizeof(double) * (size_t)n);
  double *latencies = malloc(sizeof(double) * (size_t)n);
  long sent = 0, received = 0;
  double start = now_us();
  long first = n < depth ? n : depth;
  for (long i = 0; i < first; i++) sent_at[i] = start;
  write_all(fd, batch, length * (size_t)first);
  sent = first;
  while (received < n) {
    ssize_t count = read_from(fd, buffer, sizeof buffer);
    if (count <= 0) die("read");
    int replies = terminators(proto, buffer, count);
    double arrived = now_us();
    for (int i = 0; i < replies && received + i < n; i++) latencies[received + i] = arrived - sent_at[received + i];
    received += replies;
    long more = replies;
    if (sent + more > n) more = n - sent;
    if (more > 0) {
      double now = now_us();
      for (long i = 0; i < more; i++) sent_at[sent + i] = now;
      write_all(fd, batch, length * (size_t)more);
      sent += more;
    }
  }
  double elapsed = now_us() - start;
  qsort(latencies, (size_t)n, sizeof(double), compare);
  printf("rate=%.0f p50_us=%.1f p99_us=%.1f\n", n / (elapsed / 1e6), percentile(latencies, n, 0.5),
         percentile(latencies, n, 0.99));
  close_connection(fd);
}

typedef struct {
  const char *proto;
  const char *path;
  long n;
  double *latencies;
} Client;

static void *run_client(void *context) {
  Client *c = context;
  int fd = connect_to(c->path);
  char message[256], buffer[65536];
  size_t length = request(c->proto, message, sizeof message);
  for (long i = 0; i < c->n; i++) {
    double sent = now_us();
    write_all(fd, message, length);
    int replies = 0;
    while (replies == 0) {
      ssize_t count = read_from(fd, buffer, sizeof buffer);
      if (count <= 0) die("read");
      replies += terminators(c->proto, buffer, count);
    }
    c->latencies[i] = now_us() - sent;
  }
  close_connection(fd);
  return NULL;
}

static void concurrent(const char *proto, const char *path, long n, int clients) {
  long each = n / clients;
  Client *all = calloc((size_t)clients, sizeof(Client));
  pthread_t *threads = calloc((size_t)clients, sizeof(pthread_t));
  double *latencies = malloc(sizeof(double) * (size_t)(each * clients));
  double start = now_us();
  for (int i = 0; i < clients; i++) {
    all[i] = (Client){.proto = proto, .path = path, .n = each, .latencies = latencies + each * i};
    pthread_create(&threads[i], NULL, run_client, &all[i]);
  }
  for (int i = 0; i < clients; i++) pthread_join(threads[i], NULL);
  double elapsed = now_us() - start;
  long total = each * clients;
  qsort(latencies, (size_t)total, sizeof(double), compare);
  printf("rate=%.0f p50_us=%.1f p99_us=%.1f\n", total / (elapsed / 1e6), percentile(latencies, total, 0.5),
         percentile(latencies, total, 0.99));
}

// ---------------------------------------------------------------------------------------------
// Fan-out: one publisher, SUBSCRIBERS subscribers; every change is numbered, and each
// subscriber's receipt of number k is timed against when change k was sent.

typedef struct {
  const char *proto;
  int *fds;
  int subscribers;
  long n;
  long base;
  double *sent_at;  // by change number, written by the publisher
  double *latencies;
  long deliveries;
  double finished;
} FanOut;

// The change number in one subscriber message, or -1.
static long number_in(const char *proto, const char *message, long base) {
  if (strcmp(proto, "redis") == 0) {
    // *3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$<len>\r\n<k>\r\n
    const char *last = strrchr(message, '$');
    if (!last || strstr(message, "message") == NULL) return -1;
    const char *digits = strstr(last, "\r\n");
    return digits ? atol(digits + 2) : -1;
  }
  const char *value = strstr(message, "\"value\":");
  if (value) return atol(value + 8) - base;
  value = strstr(message, "\"state\":");
  if (value) return atol(value + 8) - base;
  return -1;
}

static void *receive(void *context) {
  FanOut *f = context;
  int epoll = epoll_create1(0);
  typedef struct {
    char bytes[8192];
    size_t used;
    long last;
  } Pending;
  Pending *pending = calloc((size_t)f->subscribers, sizeof(Pending));
  for (int i = 0; i < f->subscribers; i++) {
    struct epoll_event event = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(epoll, EPOLL_CTL_ADD, f->fds[i], &event);
    pending[i].last = 0;
  }
  int done = 0;
  long capacity = f->n * f->subscribers;
  int redis = strcmp(f->proto, "redis") == 0;
  while (done < f->subscribers) {
    struct epoll_event events[128];
    int ready = epoll_wait(epoll, events, 128, 10000);
    if (ready == 0) {
      fprintf(stderr, "fanout: no delivery for 10 s (%d of %d subscribers done)\n", done, f->subscribers);
      exit(3);
    }
    double now = now_us();
    for (int e = 0; e < ready; e++) {
      int i = (int)events[e].data.u32;
      Pending *p = &pending[i];
      ssize_t count = read_from(f->fds[i], p->bytes + p->used, sizeof p->bytes - p->used - 1);
      if (count <= 0) die("subscriber read");
      p->used += (size_t)count;
      p->bytes[p->used] = 0;
      // Split off whole messages: NUL-ended, or for Redis a pub/sub message of 7 lines.
      for (;;) {
        size_t length = 0;
        if (redis) {
          int lines = 0;
          for (size_t k = 0; k < p->used; k++)
            if (p->bytes[k] == '\n' && ++lines == 7) { length = k + 1; break; }
        } else {
          char *end = memchr(p->bytes, 0, p->used);
          if (end) length = (size_t)(end - p->bytes) + 1;
        }
        if (length == 0) break;
        char saved = p->bytes[length - 1];
        p->bytes[length - 1] = 0;
        long k = number_in(f->proto, p->bytes, f->base);
        p->bytes[length - 1] = saved;
        memmove(p->bytes, p->bytes + length, p->used - length);
        p->used -= length;
        p->bytes[p->used] = 0;
        if (k >= 1 && k <= f->n) {
          if (f->deliveries < capacity) f->latencies[f->deliveries++] = now - f->sent_at[k];
          if (k > p->last) p->last = k;
          if (k == f->n) done++;
        }
      }
    }
  }
  f->finished = now_us();
  return NULL;
}

static long read_number_after(int fd, const char *key) {
  char buffer[8192];
  size_t used = 0;
  for (;;) {
    ssize_t count = read_from(fd, buffer + used, sizeof buffer - used - 1);
    if (count <= 0) die("read");
    used += (size_t)count;
    buffer[used] = 0;
    if (memchr(buffer, 0, used)) {
      const char *value = strstr(buffer, key);
      return value ? atol(value + strlen(key)) : 0;
    }
  }
}

static void fanout(const char *proto, const char *path, int subscribers, long n) {
  FanOut f = {.proto = proto, .subscribers = subscribers, .n = n};
  f.fds = malloc(sizeof(int) * (size_t)subscribers);
  f.sent_at = calloc((size_t)n + 1, sizeof(double));
  f.latencies = malloc(sizeof(double) * (size_t)(n * subscribers));
  int redis = strcmp(proto, "redis") == 0;
  for (int i = 0; i < subscribers; i++) {
    f.fds[i] = connect_to(path);
    if (redis) {
      write_all(f.fds[i], "SUBSCRIBE ch\r\n", 14);
      char buffer[256];
      int lines = 0;
      while (lines < 6) {
        ssize_t count = read_from(f.fds[i], buffer, sizeof buffer);
        if (count <= 0) die("subscribe");
        lines += terminators("redis", buffer, count);
      }
    } else {
      const char *call = "{\"method\":\"io.switchyard.Store.Subscribe\",\"parameters\":{\"path\":\"/primes/count\"},\"more\":true}";
      write_all(f.fds[i], call, strlen(call) + 1);
      f.base = read_number_after(f.fds[i], "\"state\":");
    }
  }
  int publisher = connect_to(path);
  pthread_t receiver;
  pthread_create(&receiver, NULL, receive, &f);
  char message[256], buffer[65536];
  int depth = 16;
  long sent = 0, acknowledged = 0;
  double start = now_us();
  while (acknowledged < n) {
    while (sent < n && sent - acknowledged < depth) {
      sent++;
      size_t length = redis ? (size_t)snprintf(message, sizeof message, "PUBLISH ch %ld\r\n", sent)
                            : request("switchyard", message, sizeof message);
      f.sent_at[sent] = now_us();
      write_all(publisher, message, length);
    }
    ssize_t count = read_from(publisher, buffer, sizeof buffer);
    if (count <= 0) die("publisher read");
    acknowledged += terminators(redis ? "redis" : "switchyard", buffer, count);
  }
  pthread_join(receiver, NULL);
  double elapsed = f.finished - start;
  qsort(f.latencies, (size_t)f.deliveries, sizeof(double), compare);
  printf("deliveries=%ld rate=%.0f p50_us=%.1f p99_us=%.1f\n", f.deliveries, f.deliveries / (elapsed / 1e6),
         percentile(f.latencies, f.deliveries, 0.5), percentile(f.latencies, f.deliveries, 0.99));
}

int main(int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "echo-server") == 0) serve_echo(argv[2], -1, -1);
  if (argc >= 3 && strcmp(argv[1], "relay-server") == 0) relay_server(argv[2]);
  if (argc == 5 && strcmp(argv[1], "pingpong") == 0) pingpong(argv[2], argv[3], atol(argv[4]), 0, 0);
  else if (argc == 5 && strcmp(argv[1], "pingpong-poll") == 0) pingpong(argv[2], argv[3], atol(argv[4]), 1, 0);
  else if (argc == 6 && strcmp(argv[1], "pipeline") == 0) pipeline(argv[2], argv[3], atol(argv[4]), atoi(argv[5]));
  else if (argc == 6 && strcmp(argv[1], "concurrent") == 0) concurrent(argv[2], argv[3], atol(argv[4]), atoi(argv[5]));
  else if (argc == 5 && strcmp(argv[1], "handshake") == 0) pingpong(argv[2], argv[3], atol(argv[4]), 0, 1);
  else if (argc == 6 && strcmp(argv[1], "fanout") == 0) fanout(argv[2], argv[3], atoi(argv[4]), atol(argv[5]));
  else {
    fprintf(stderr, "usage: see the comment at the top of loadgen.c\n");
    return 2;
  }
  return 0;
}
