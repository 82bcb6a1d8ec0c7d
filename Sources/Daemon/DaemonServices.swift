import ServiceLifecycle
import SwitchyardChangeFeed
import SwitchyardHandOver
import SwitchyardServer
import SwitchyardSystemd

/// The Varlink server as a service of the service group: on graceful shutdown it tells the
/// service manager, ends the subscriptions with `ShuttingDown`, stops accepting, and returns once
/// every connection has answered the calls it read.
struct ServerService<Responder: VarlinkResponder>: Service {
  let server: VarlinkServer<Responder>
  let changeLog: ChangeLog
  let manager: ServiceManager
  /// With systemd's file descriptor store on, SIGTERM hands the connections to the next process;
  /// SIGUSR2 to the executable run again.
  var handOver: ConnectionHandOver? = nil
  /// Called once the sockets are bound (each listener's, in order), before the connections
  /// handed over are adopted.
  var onBound: @Sendable (_ sockets: [CInt?]) -> Void = { _ in }
  let onListening: @Sendable () -> Void

  func run() async throws {
    try await withTaskCancellationHandler {
      try await withGracefulShutdownHandler {
        try await self.server.run(onBound: self.onBound, onListening: self.onListening)
        if let handOver = self.handOver, handOver.isHandingOver, Task.isShuttingDownGracefully {
          await handOver.finish(server: self.server)
        }
      } onGracefulShutdown: {
        if let handOver = self.handOver, handOver.isHandingOver {
          return handOver.begin(server: self.server, changeLog: self.changeLog, manager: self.manager)
        }
        // Said at the default level: a log that ends at "listening" then means no shutdown began.
        self.server.logger.info("shutting down: answering the calls in flight, accepting no more")
        self.manager.stopping()
        self.changeLog.shutDown()
        self.server.drain()
      }
    } onCancel: {
      // The group is failing (the supervisor gave up): end subscriptions too, or they would
      // hold their connections open and the daemon with them.
      self.changeLog.shutDown()
    }
  }
}

/// The hosted features and their workers, as the group's service after the journal's: a
/// graceful shutdown reaches it once the server has answered every call. It then ends the
/// workers and the actors' effects; the journal, which waits for ``stopped()``, closes after it.
///
/// ```swift
/// let hosting = HostingService(started: { try await workersStarted.value }) { await supervisor.stop() }
/// JournalWriterService(writer: writer, after: { await hosting.stopped() }, finalState: { changeLog.composed })
/// ```
struct HostingService: Service {
  /// Returns once the workers have started (they may still be starting as the group runs), or
  /// throws why they could not: the group then fails.
  let started: @Sendable () async throws -> Void
  let stop: @Sendable () async -> Void
  /// Finished once the stop has returned: nothing makes changes any more.
  private let end = AsyncStream<Never>.makeStream()

  init(started: @escaping @Sendable () async throws -> Void = {}, stop: @escaping @Sendable () async -> Void) {
    self.started = started
    self.stop = stop
  }

  func run() async throws {
    // Never stopped while the workers are still starting; a start that failed fails the group.
    let failure: (any Error)?
    do {
      try await self.started()
      failure = nil
    } catch {
      failure = error
    }
    // Cancelled rather than shut down when the group fails: the stop is the same.
    if failure == nil { try? await gracefulShutdown() }
    // In a task of its own, so that the group's cancellation cannot cut the stop short: the
    // workers are ended whatever the group's state.
    await Task { await self.stop() }.value
    self.end.continuation.finish()
    if let failure { throw failure }
  }

  /// Returns once the features and workers have stopped, whether the group shut down or failed.
  func stopped() async {
    for await _ in self.end.stream {}
  }
}
