import CWorkerSpawn
import Glibc

/// Ties the calling worker process's life to the daemon whose pid is `parent`: a worker never
/// outlives its daemon. The kernel kills it when the daemon's spawning thread ends, and a daemon
/// that ended before the death signal was set is noticed right after it.
package func bindToDaemon(_ parent: pid_t) throws(WorkerError) {
  _ = switchyard_set_parent_death_signal(SIGKILL)
  guard getppid() == parent else { throw .start("the daemon (pid \(parent)) is gone") }
}
