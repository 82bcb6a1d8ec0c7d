import ServiceLifecycle

/// What the daemon is doing, in the one line `systemctl status` shows (`STATUS=`).
struct StatusLine: Equatable, Sendable, CustomStringConvertible {
  var features: Int
  var workers: Int
  var connections: Int
  var subscribers: Int
  var actionsPerSecond: Double
  /// The durability mode, `none` without a state directory.
  var durability: String

  var description: String {
    func count(_ value: Int, _ noun: String) -> String { "\(value) \(noun)\(value == 1 ? "" : "s")" }
    let rate = (self.actionsPerSecond * 10).rounded() / 10
    return [
      count(self.features, "feature"),
      count(self.workers, "worker"),
      count(self.connections, "connection"),
      count(self.subscribers, "subscriber"),
      "\(rate) actions/s",
      "durability \(self.durability)",
    ].joined(separator: ", ")
  }
}

/// Keeps the service manager's status line current: every `interval` it computes the line from
/// the counters and sends it when it changed.
struct StatusReporter: Service {
  let manager: ServiceManager
  let interval: Duration
  /// The counters now; `actions` is the total routed so far, turned into a rate here.
  let counters: @Sendable () -> (line: StatusLine, actions: Int)

  func run() async throws {
    await cancelWhenGracefulShutdown { await self.loop() }
  }

  private func loop() async {
    var lastActions = self.counters().actions
    var lastTime = ContinuousClock.now
    var lastLine: StatusLine?
    while !Task.isCancelled {
      do {
        try await Task.sleep(for: self.interval)
      } catch {
        return
      }
      let now = ContinuousClock.now
      var (line, actions) = self.counters()
      let elapsed = now - lastTime
      let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
      line.actionsPerSecond = seconds > 0 ? Double(actions - lastActions) / seconds : 0
      (lastActions, lastTime) = (actions, now)
      if line != lastLine {
        self.manager.status(line.description)
        lastLine = line
      }
    }
  }
}
