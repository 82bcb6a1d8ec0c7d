import ConcurrencyExtras
import Logging
import Testing

@testable import SwitchyardRuntime

@Suite struct LogChangesTests {
  struct State: Equatable { var count = 0; var name = "a" }
  enum Action { case incr }

  /// A swift-log handler that keeps what it is given.
  struct Capture: LogHandler {
    let lines: LockIsolated<[String]>
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { self.metadata[key] }
      set { self.metadata[key] = newValue }
    }
    func log(event: LogEvent) {
      self.lines.withValue { $0.append("\(event.level): \(event.message)") }
    }
  }

  func logger(level: Logger.Level, into lines: LockIsolated<[String]>) -> Logger {
    Logger(label: "test") { _ in Capture(lines: lines, logLevel: level) }
  }

  let counter = Reduce<State, Action> { state, _ in
    state.count += 1
    return .none
  }

  @Test func logsTheActionAndADiffOfTheState() {
    let lines = LockIsolated<[String]>([])
    _ = run(self.counter.logChanges(to: self.logger(level: .debug, into: lines)), from: State(), [.incr])
    #expect(lines.value.count == 1)
    let line = lines.value[0]
    #expect(line.hasPrefix("debug: received action LogChangesTests.Action.incr"))
    #expect(line.contains("-   count: 0"))
    #expect(line.contains("+   count: 1"))
  }

  @Test func staysSilentAndCheapBelowItsLevel() {
    let lines = LockIsolated<[String]>([])
    let outcome = run(self.counter.logChanges(to: self.logger(level: .info, into: lines)), from: State(), [.incr])
    #expect(outcome.state.count == 1)
    #expect(lines.value.isEmpty)
  }
}
