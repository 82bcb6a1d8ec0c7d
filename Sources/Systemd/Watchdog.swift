import Logging
import ServiceLifecycle
import SwitchyardSynchronization

/// Pings systemd's watchdog (`WATCHDOG=1`) at half the interval it expects, but only while the
/// daemon is healthy: each ping is sent only if the router and every hosted feature answered
/// the health probe sent with the previous one.
///
/// A probe travels through each feature's mailbox, so a feature whose reducer blocks its actor,
/// or whose mailbox stopped draining, never answers; the pings stop and systemd's watchdog
/// action (`WatchdogSec=`, then SIGABRT and `Restart=`) takes over. A timer that pinged regardless
/// would hide exactly the failure the watchdog is there to catch.
package struct Watchdog: Service {
  package let manager: ServiceManager
  /// Half of `WATCHDOG_USEC`.
  package let period: Duration
  /// Sends one health probe round: calls its argument once per answer (with the feature's name,
  /// `nil` for the router) and returns how many answers to expect.
  package let probe: @Sendable (_ answered: @escaping @Sendable (String?) -> Void) -> Int
  package let featureNames: [String]
  package let logger: Logger

  package init(
    manager: ServiceManager, period: Duration, probe: @escaping @Sendable (_ answered: @escaping @Sendable (String?) -> Void) -> Int,
    featureNames: [String], logger: Logger
  ) {
    self.manager = manager
    self.period = period
    self.probe = probe
    self.featureNames = featureNames
    self.logger = logger
  }

  package func run() async throws {
    await cancelWhenGracefulShutdown { await self.loop() }
  }

  private func loop() async {
    var round = self.startRound()
    var wasWithholding = false
    // The first ping as soon as the features answer: a daemon run again in its process (SIGUSR2)
    // keeps the watchdog's clock of the image before, which systemd does not reset.
    var pause = self.period / 10
    while !Task.isCancelled {
      do {
        try await Task.sleep(for: pause)
      } catch {
        return
      }
      let missing = round.missing(among: self.featureNames)
      if missing.isEmpty {
        self.manager.watchdog()
        if wasWithholding { self.logger.notice("every feature answers its health probe again; watchdog pings resume") }
        wasWithholding = false
        round = self.startRound()
        pause = self.period
      } else {
        // Looked at again soon rather than a whole period later: a round answered a little
        // late (a loaded machine) still gets its ping well before the watchdog's deadline.
        pause = self.period / 10
        // The unanswered round stays: a ping follows as soon as it is answered, and never
        // because a newer probe happened to get through while an older one is stuck.
        if !wasWithholding {
          self.logger.error(
            "withholding the watchdog ping: no answer to the health probe",
            metadata: ["feature": "\(missing.joined(separator: ","))"]
          )
        }
        wasWithholding = true
      }
    }
  }

  private func startRound() -> ProbeRound {
    let round = ProbeRound()
    let expected = self.probe { round.answered($0) }
    round.expect(expected)
    return round
  }
}

/// The answers to one round of health probes.
private final class ProbeRound: Sendable {
  private struct Answers {
    var expected: Int?
    var answered: [String?] = []
  }

  private let answers = Mutex(Answers())

  func expect(_ count: Int) {
    self.answers.withLock { $0.expected = count }
  }

  func answered(_ name: String?) {
    self.answers.withLock { $0.answered.append(name) }
  }

  /// Who has not answered: feature names, or "router".
  func missing(among features: [String]) -> [String] {
    self.answers.withLock { answers in
      guard let expected = answers.expected else { return ["router"] }
      guard answers.answered.count < expected else { return [] }
      var missing = features.filter { name in !answers.answered.contains(name) }
      if !answers.answered.contains(where: { $0 == nil }) { missing.append("router") }
      return missing
    }
  }
}
