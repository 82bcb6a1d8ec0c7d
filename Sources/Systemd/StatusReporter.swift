import ServiceLifecycle

/// What the daemon is doing, in the one line `systemctl status` shows (`STATUS=`).
package struct StatusLine: Equatable, Sendable, CustomStringConvertible {
  package var features: Int
  package var workers: Int
  package var connections: Int
  package var subscribers: Int
  package var actionsPerSecond: Double
  /// The durability mode, `none` without a state directory.
  package var durability: String

  package init(features: Int, workers: Int, connections: Int, subscribers: Int, actionsPerSecond: Double, durability: String) {
    self.features = features
    self.workers = workers
    self.connections = connections
    self.subscribers = subscribers
    self.actionsPerSecond = actionsPerSecond
    self.durability = durability
  }

  package var description: String {
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
package struct StatusReporter: Service {
  package let manager: ServiceManager
  package let interval: Duration
  /// The counters now; `actions` is the total routed so far, turned into a rate here.
  package let counters: @Sendable () -> (line: StatusLine, actions: Int)

  package init(manager: ServiceManager, interval: Duration, counters: @escaping @Sendable () -> (line: StatusLine, actions: Int)) {
    self.manager = manager
    self.interval = interval
    self.counters = counters
  }

  package func run() async throws {
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
