import Logging
import ServiceLifecycle
import SwitchyardSynchronization
import UnixSignals

/// A re-execution of the daemon (``Reexecution``), once asked for: what it passes to the next
/// image (``PassedDescriptors``), kept as the daemon hands its connections over.
package final class ReexecutionRequest: Sendable {
  package let reexecution: Reexecution
  package let passed = PassedDescriptors()
  private let phase = Mutex(Phase.serving)

  private enum Phase {
    case serving, requested, withdrawn
  }

  package init(_ reexecution: Reexecution) {
    self.reexecution = reexecution
  }

  /// Whether the daemon is to run its executable again rather than exit once stopped.
  package var isRequested: Bool { self.phase.withLock { $0 == .requested } }

  /// Whether a handover goes to the next image's descriptors: it was asked for, even if a stop
  /// withdrew it since.
  package var wasAsked: Bool { self.phase.withLock { $0 != .serving } }

  func request() {
    self.phase.withLock { if $0 == .serving { $0 = .requested } }
  }

  /// A stop (SIGTERM, SIGINT) came after the request: the daemon exits once it has stopped, and
  /// the connections passed close with it. Returns whether there was a request to withdraw.
  @discardableResult
  package func withdraw() -> Bool {
    self.phase.withLock { phase in
      guard phase == .requested else { return false }
      phase = .withdrawn
      return true
    }
  }

  /// Runs the executable with what was passed; throws only when it could not be run.
  package func execute() throws(SystemdError) {
    let error = self.reexecution.execute(passing: self.passed.all)
    throw .cannotReexecute(self.reexecution.executable, errno: error)
  }
}

/// SIGUSR2, as nginx's binary upgrade has it: the daemon hands its connections over and runs
/// its executable again in its own process — a new version, once installed at the same path —
/// which adopts them as after a restart. A service of the daemon's group that ends it: the
/// group's graceful shutdown then hands over instead of closing, and the daemon runs
/// ``ReexecutionRequest/execute()`` once everything has stopped. An executable that cannot be
/// run is said, and the daemon goes on serving.
///
/// ```swift
/// let signals = await UnixSignalsSequence(trapping: .sigusr2)   // before READY=1
/// ServiceConfiguration(service: ReexecutionSignal(…), successTerminationBehavior: .gracefullyShutdownGroup)
/// ```
package struct ReexecutionSignal: Service {
  let signals: UnixSignalsSequence
  let request: ReexecutionRequest
  let manager: ServiceManager
  let logger: Logger

  package init(signals: UnixSignalsSequence, request: ReexecutionRequest, manager: ServiceManager, logger: Logger) {
    self.signals = signals
    self.request = request
    self.manager = manager
    self.logger = logger
  }

  package func run() async {
    await cancelWhenGracefulShutdown {
      for await _ in self.signals {
        if let problem = self.request.reexecution.problem {
          self.logger.error("SIGUSR2: the executable cannot be run again; the daemon goes on serving", metadata: ["error": "\(problem)"])
          continue
        }
        self.request.request()
        // A reload to systemd, which the next image's READY=1 ends: the main process never exits.
        self.manager.reloading()
        self.logger.notice(
          "SIGUSR2: handing the connections over to the executable, run again in this process",
          metadata: ["executable": "\(self.request.reexecution.executable)"]
        )
        return
      }
    }
  }
}
