// Process plumbing that Swift's Glibc module does not expose (it is built without _GNU_SOURCE):
// posix_spawn_file_actions_addclosefrom_np, prctl, memfd_create and pipe2.
#define _GNU_SOURCE
#include "worker_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

int switchyard_spawn(const char *path, char *const argv[], char *const envp[],
                     const int fds[], int fd_count, pid_t *pid) {
  // Every source is first copied above the child's fd range, so that placing one cannot
  // overwrite another that is still to be placed (a source 3 meant for 4 while 3 receives
  // another); the copies are close-on-exec and closed again here.
  int sources[fd_count];
  int result = 0;
  for (int fd = 0; fd < fd_count; fd++) sources[fd] = -1;
  for (int fd = 0; fd < fd_count && result == 0; fd++) {
    if (fds[fd] < 0) continue;
    sources[fd] = fcntl(fds[fd], F_DUPFD_CLOEXEC, fd_count);
    if (sources[fd] < 0) result = errno;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int actions_ready = 0, attributes_ready = 0;
  if (result == 0 && (result = posix_spawn_file_actions_init(&actions)) == 0) actions_ready = 1;
  if (result == 0 && (result = posix_spawnattr_init(&attributes)) == 0) attributes_ready = 1;
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  // dup2 clears close-on-exec on its target, so the copies may keep theirs.
  for (int fd = 0; fd < fd_count && result == 0; fd++) {
    result = sources[fd] < 0 ? posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0)
                             : posix_spawn_file_actions_adddup2(&actions, sources[fd], fd);
  }
  if (result == 0 &&
      (result = posix_spawn_file_actions_addclosefrom_np(&actions, fd_count)) == 0 &&
      (result = posix_spawnattr_setsigdefault(&attributes, &all)) == 0 &&
      (result = posix_spawnattr_setsigmask(&attributes, &none)) == 0 &&
      (result = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)) == 0) {
    result = posix_spawn(pid, path, &actions, &attributes, argv, envp);
  }
  if (attributes_ready) posix_spawnattr_destroy(&attributes);
  if (actions_ready) posix_spawn_file_actions_destroy(&actions);
  for (int fd = 0; fd < fd_count; fd++) {
    if (sources[fd] >= 0) close(sources[fd]);
  }
  return result;
}

int switchyard_spawn_worker(const char *path, char *const argv[], char *const envp[],
                            int link_input_fd, int link_output_fd, int shared_fd, int stderr_fd, pid_t *pid) {
  const int fds[] = {-1, -1, stderr_fd, link_input_fd, shared_fd, link_output_fd};
  return switchyard_spawn(path, argv, envp, fds, 6, pid);
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
