import DequeModule
import Logging
import ServiceLifecycle
import SwitchyardSynchronization

/// Supervises the worker processes of the hosted features: restarts them by the strategy, and
/// escalates — ends the daemon with an error, for systemd's `Restart=` to take over — when they
/// restart more often than the intensity allows, as a top-level OTP supervisor does.
///
/// Children are the workers in declaration order. A child that ends is restarted by its policy:
/// `permanent` always, `transient` after an abnormal end, `temporary` never. With `one_for_all`
/// (or `rest_for_one`) a restart ends all other children (or those after it), last first, then
/// starts them again in order; a `temporary` child ended that way is not restarted.
///
/// Once the daemon stops, a child that ends is not restarted and its end is no failure: under
/// systemd's default `KillMode=control-group` a stop sends SIGTERM to the workers with the
/// daemon.
package actor Supervisor<Child: SupervisedWorker> {
  package let configuration: SupervisionConfiguration
  package let children: [Child]
  private let logger: Logger
  private var restarts = Deque<ContinuousClock.Instant>()
  private var escalation: String?
  private let escalated: AsyncStream<String>.Continuation
  /// Ends with the reason when the supervisor gives up.
  package let escalations: AsyncStream<String>
  /// Set as soon as the daemon begins to stop, from any thread.
  private let stopping = StopFlag()
  /// How long a child ended by a stop's signal waits for the daemon to say it stops: the signal
  /// reaches the worker and the daemon at once, and the worker may be reaped first. A worker
  /// someone else sent SIGTERM is restarted this much later.
  private let stopGrace: Duration = .seconds(1)

  package init(configuration: SupervisionConfiguration, children: [Child], logger: Logger) {
    self.configuration = configuration
    self.children = children
    self.logger = logger
    (self.escalations, self.escalated) = AsyncStream.makeStream(of: String.self)
  }

  /// Starts every child in order, and watches them.
  package func start() async throws {
    for child in self.children {
      child.supervise { exit in Task { await self.childEnded(child, exit) } }
      try await child.start(restarted: false)
    }
  }

  /// The daemon begins to stop: from now on no child is restarted. Called from the service
  /// group's graceful shutdown, before the children are ended.
  package nonisolated func daemonStopping() {
    self.stopping.set()
  }

  /// Ends every child, last first, each by closing its link; with `gently` false, by SIGKILL.
  package func stop(gently: Bool = true) async {
    self.stopping.set()
    self.escalation = self.escalation ?? "stopping"
    for child in self.children.reversed() {
      child.dropStandby()
      _ = await child.terminate(gently: gently)
    }
  }

  /// Why the supervisor gave up, if it did.
  package var escalationReason: String? {
    self.escalation
  }

  private func childEnded(_ child: Child, _ exit: WorkerExit) async {
    if exit.mayBeTheDaemonsStop, self.escalation == nil {
      let deadline = ContinuousClock.now + self.stopGrace
      while !self.stopping.isSet, ContinuousClock.now < deadline {
        try? await Task.sleep(for: .milliseconds(10))
      }
    }
    if self.stopping.isSet {
      child.logEnd(exit, duringStop: true)
      // The actions waiting for it fail now, rather than hold the drain up until its deadline.
      child.markStopped(reason: "the daemon is stopping")
      return
    }
    child.logEnd(exit)
    guard self.escalation == nil else { return }
    let restartsChild =
      switch child.restart {
      case .permanent: true
      case .transient: exit.isAbnormal
      case .temporary: false
      }
    guard restartsChild else {
      self.logger.notice(
        "worker not restarted",
        metadata: ["feature": "\(child.name)", "restart": "\(child.restart.rawValue)", "reason": "\(exit)"]
      )
      child.markStopped()
      return
    }
    let now = ContinuousClock.now
    self.restarts.append(now)
    while let first = self.restarts.first, now - first > self.configuration.period { self.restarts.removeFirst() }
    if self.restarts.count > self.configuration.intensity {
      await self.escalate(
        """
        \(self.restarts.count) restarts within \(self.configuration.period) (intensity \
        \(self.configuration.intensity)); the last: \(child.name) \(exit)
        """
      )
      return
    }
    let position = self.children.firstIndex { $0 === child }!
    let affected: ArraySlice<Child> =
      switch self.configuration.strategy {
      case .oneForOne: self.children[position...position]
      case .oneForAll: self.children[...]
      case .restForOne: self.children[position...]
      }
    var restarting: [Child] = []
    for sibling in affected.reversed() where sibling !== child {
      _ = await sibling.terminate(gently: false)
      if sibling.restart == .temporary {
        sibling.markStopped()
      } else {
        restarting.insert(sibling, at: 0)
      }
    }
    restarting.insert(child, at: 0)
    restarting.sort { a, b in
      self.children.firstIndex { $0 === a }! < self.children.firstIndex { $0 === b }!
    }
    for worker in restarting {
      worker.willRestart()
      do {
        try await worker.start(restarted: true)
      } catch {
        await self.escalate("\(worker.name) could not be restarted: \(error)")
        return
      }
    }
  }

  private func escalate(_ reason: String) async {
    guard self.escalation == nil else { return }
    self.escalation = reason
    self.logger.critical("the supervisor gives up: \(reason)")
    for child in self.children.reversed() {
      _ = await child.terminate(gently: false)
      child.markStopped()
    }
    self.escalated.yield(reason)
    self.escalated.finish()
  }
}

/// The supervisor as a service of the daemon's group: it ends the group with an error when the
/// supervisor escalates, and tells the supervisor when the daemon begins to stop — last in the
/// group, so that it is the first service a graceful shutdown reaches.
package struct SupervisorService<Child: SupervisedWorker>: Service {
  package let supervisor: Supervisor<Child>
  /// Tells the service manager the daemon's status (systemd's `STATUS=`).
  package let reportStatus: @Sendable (String) -> Void

  package init(supervisor: Supervisor<Child>, reportStatus: @escaping @Sendable (String) -> Void) {
    self.supervisor = supervisor
    self.reportStatus = reportStatus
  }

  package func run() async throws {
    let escalation: String? = await withGracefulShutdownHandler {
      await cancelWhenGracefulShutdown {
        for await reason in self.supervisor.escalations { return reason }
        return nil
      }
    } onGracefulShutdown: { [supervisor] in
      supervisor.daemonStopping()
    }
    if let reason = escalation {
      self.reportStatus("escalated: \(reason)")
      throw SupervisorEscalation(reason: reason)
    }
  }
}

/// The supervisor gave up: the daemon exits with an error.
public struct SupervisorEscalation: Error, CustomStringConvertible {
  public let reason: String
  public var description: String { "the worker supervisor gave up: \(self.reason)" }
}

/// A flag any thread sets once and any thread reads.
private final class StopFlag: Sendable {
  private let value = Mutex(false)

  func set() { self.value.withLock { $0 = true } }
  var isSet: Bool { self.value.withLock { $0 } }
}
