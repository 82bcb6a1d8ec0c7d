#ifndef SWITCHYARD_WORKER_SPAWN_H
#define SWITCHYARD_WORKER_SPAWN_H

#include <sys/types.h>

/// Starts `path` with `argv` and `envp` with exactly the descriptors `fds`: `fds[i]` becomes
/// its fd `i` (/dev/null where it is -1), every fd from `fd_count` up is closed, and every
/// signal has its default disposition and is unblocked (whatever the calling thread blocks).
/// Returns 0 and the child's pid, or an errno value.
int switchyard_spawn(const char *path, char *const argv[], char *const envp[],
                     const int fds[], int fd_count, pid_t *pid);

/// Starts `path` with `argv` and `envp` as a worker process: `link_input_fd` (what the daemon
/// writes to it) becomes its fd 3, `shared_fd` its fd 4, `link_output_fd` (what it writes to the
/// daemon) its fd 5, `stderr_fd` its stderr, /dev/null its stdin and stdout; every other fd is
/// closed and every signal has its default disposition and is unblocked.
/// Returns 0 and the child's pid, or an errno value.
int switchyard_spawn_worker(const char *path, char *const argv[], char *const envp[],
                            int link_input_fd, int link_output_fd, int shared_fd, int stderr_fd, pid_t *pid);

/// Asks the kernel to send `signal` to this process when its parent thread ends
/// (prctl PR_SET_PDEATHSIG). Returns 0 or an errno value.
int switchyard_set_parent_death_signal(int signal);

/// An anonymous memory file (memfd_create, close-on-exec), or -1 with errno set.
int switchyard_memfd(const char *name);

/// A pipe whose ends are close-on-exec from the start (pipe2), or -1 with errno set.
int switchyard_pipe(int fds[2]);

#endif
