// libsystemd's service-manager and journal APIs, for the daemon only.
// sd_journal_send and sd_notifyf are variadic and cannot be called from Swift:
// the daemon uses sd_journal_sendv and sd_notify instead.
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>

// One datagram of `text` with `count` descriptors (SCM_RIGHTS) to `address`, without blocking:
// what sd_pid_notify_with_fds sends, on a socket the caller keeps. The CMSG macros are C's only.
static inline ssize_t switchyard_send_with_fds(
  int sock, const struct sockaddr_un *address, socklen_t length, const char *text, size_t size,
  const int *fds, unsigned count
) {
  union { struct cmsghdr header; char bytes[CMSG_SPACE(sizeof(int) * 16)]; } control;
  if (count > 16) return -1;
  struct iovec vector = { .iov_base = (void *)text, .iov_len = size };
  struct msghdr message = {
    .msg_name = (void *)address, .msg_namelen = length, .msg_iov = &vector, .msg_iovlen = 1,
  };
  if (count > 0) {
    memset(&control, 0, sizeof(control));
    message.msg_control = &control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * count);
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * count);
    memcpy(CMSG_DATA(header), fds, sizeof(int) * count);
  }
  return sendmsg(sock, &message, MSG_DONTWAIT | MSG_NOSIGNAL);
}

// glibc declares memfd_create only under _GNU_SOURCE, which would make this module's system
// headers differ from every other module's: declared here as glibc defines it.
int memfd_create(const char *name, unsigned int flags);

// An anonymous file in memory for the state handed to the next process, closed on exec.
static inline int switchyard_memfd(const char *name) {
  return memfd_create(name, 1U /* MFD_CLOEXEC */);
}

// Executes `path`, signals back to their defaults and unblocked, as in a process systemd starts
// (ignored dispositions and the mask would survive execve), but for `ignored`, which stays
// ignored across it. Returns only when it failed.
static inline int switchyard_reexecute(const char *path, char *const arguments[], char *const environment[], int ignored) {
  for (int signal_number = 1; signal_number < NSIG; signal_number++) {
    if (signal_number != SIGKILL && signal_number != SIGSTOP) signal(signal_number, signal_number == ignored ? SIG_IGN : SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  return execve(path, arguments, environment);
}
