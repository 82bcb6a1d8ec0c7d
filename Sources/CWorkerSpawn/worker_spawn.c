// Process plumbing that Swift's Glibc module does not expose (it is built without _GNU_SOURCE):
// posix_spawn_file_actions_addclosefrom_np, prctl, memfd_create and pipe2; and socketpair, whose
// SOCK_* constants Swift finds or not depending on which module imported <sys/socket.h> first.
#define _GNU_SOURCE
#include "worker_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

int switchyard_spawn_worker(const char *path, char *const argv[], char *const envp[],
                            int link_fd, int shared_fd, int stderr_fd, pid_t *pid) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int result = posix_spawn_file_actions_init(&actions);
  if (result != 0) return result;
  result = posix_spawnattr_init(&attributes);
  if (result != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return result;
  }
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  // dup2 clears close-on-exec on the target, so the daemon's ends may keep theirs.
  if ((result = posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) == 0 &&
      (result = posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)) == 0 &&
      (result = posix_spawn_file_actions_adddup2(&actions, stderr_fd, 2)) == 0 &&
      (result = posix_spawn_file_actions_adddup2(&actions, link_fd, 3)) == 0 &&
      (result = posix_spawn_file_actions_adddup2(&actions, shared_fd, 4)) == 0 &&
      (result = posix_spawn_file_actions_addclosefrom_np(&actions, 5)) == 0 &&
      (result = posix_spawnattr_setsigdefault(&attributes, &all)) == 0 &&
      (result = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
      (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) == 0) {
    result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
  }
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return result;
}

int switchyard_set_parent_death_signal(int signal) {
  return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0, 0, 0) == 0 ? 0 : errno;
}

int switchyard_memfd(const char *name) {
  return memfd_create(name, MFD_CLOEXEC);
}

int switchyard_pipe(int fds[2]) {
  return pipe2(fds, O_CLOEXEC);
}

int switchyard_socketpair(int fds[2]) {
  return socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds);
}
