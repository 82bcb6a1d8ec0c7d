/// A worker as its ``Supervisor`` sees it: a feature's worker process, which it starts, ends and
/// restarts by its ``RestartPolicy``. The daemon's host of a worker-hosted feature is one.
package protocol SupervisedWorker: AnyObject, Sendable {
  var name: String { get }
  var restart: RestartPolicy { get }
  /// Hands the supervisor each end of the worker (once its process ended and its link was read
  /// to the end), except the ends the supervisor itself asked for.
  func supervise(onExit: @escaping @Sendable (WorkerExit) -> Void)
  /// Starts a worker and returns once it is ready or has ended.
  func start(restarted: Bool) async throws
  /// Ends the worker kept ready to take over, if there is one.
  func dropStandby()
  /// Ends the running worker: gently by closing its link, otherwise with `SIGKILL`; returns once
  /// it has ended.
  func terminate(gently: Bool) async -> WorkerExit?
  func logEnd(_ exit: WorkerExit, duringStop: Bool)
  /// A new worker is on its way: counted as a restart.
  func willRestart()
  /// The worker will not run again: what waits for it fails with `reason`.
  func markStopped(reason: String)
}

extension SupervisedWorker {
  func logEnd(_ exit: WorkerExit) {
    self.logEnd(exit, duringStop: false)
  }

  func markStopped() {
    self.markStopped(reason: "the feature's worker is not restarted")
  }
}
