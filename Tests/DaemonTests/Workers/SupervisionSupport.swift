import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// A worker as `Status` shows it.
struct WorkerStatus: Equatable {
  var pid: Int32?
  var state: String
  var restarts: Int
  var lastExit: String?
  var lastRestartMilliseconds: Double?

  init(_ json: JSONValue) {
    if case let .int(pid)? = json["pid"] { self.pid = Int32(pid) }
    if case let .string(state)? = json["state"] { self.state = state } else { self.state = "?" }
    if case let .int(restarts)? = json["restarts"] { self.restarts = Int(restarts) } else { self.restarts = -1 }
    if case let .string(lastExit)? = json["lastExit"] { self.lastExit = lastExit }
    switch json["lastRestartMilliseconds"] {
    case let .double(value)?: self.lastRestartMilliseconds = value
    case let .int(value)?: self.lastRestartMilliseconds = Double(value)
    default: break
    }
  }
}

extension VarlinkTestClient {
  /// The workers, by feature, from `Status`.
  func workers() throws -> [String: WorkerStatus] {
    guard case let .array(workers)? = try self.call("io.switchyard.Store.Status")["workers"] else { return [:] }
    var result: [String: WorkerStatus] = [:]
    for worker in workers {
      if case let .string(feature)? = worker["feature"] { result[feature] = WorkerStatus(worker) }
    }
    return result
  }

  /// Sends one action; its reply's parameters or error.
  @discardableResult
  func send(_ action: JSONValue) throws -> JSONValue {
    try self.call("io.switchyard.Store.Send", ["action": action])
  }
}

/// The fixture daemon (`alpha`, `beta`, `gamma` in workers) with a supervision configuration.
func supervisedFixture(
  strategy: String = "one_for_one",
  intensity: Int = 5,
  restarts: [String: String] = [:],
  environment: [String: String] = [:]
) async throws -> DaemonProcess {
  let features = restarts.map { #""\#($0.key)": {"restart": "\#($0.value)"}"# }.joined(separator: ", ")
  let json = """
    {"switchyard": {"supervision": {"strategy": "\(strategy)", "intensity": \(intensity), "period": 10}, \
    "features": {\(features)}}}
    """
  let path = temporaryPath("supervision.json")
  try json.write(toFile: path, atomically: true, encoding: .utf8)
  defer { unlink(path) }
  let daemon = try await DaemonProcess(environment: environment, arguments: ["--config", path], executable: "switchyard-fixture")
  let client = try daemon.connect()
  try await eventually { try client.workers().values.allSatisfy { $0.state == "running" } }
  return daemon
}

/// Polls `read` until `condition` holds of its value, and returns that value.
func poll<Value>(
  _ read: () throws -> Value,
  within timeout: Duration = .seconds(10),
  every interval: Duration = .milliseconds(5),
  until condition: (Value) -> Bool
) async throws -> Value {
  let deadline = ContinuousClock.now + timeout
  while true {
    let value = try read()
    if condition(value) { return value }
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition never held; last: \(value)")
      return value
    }
    try await Task.sleep(for: interval)
  }
}

/// Runs blocking work (a test client's reads) on a thread of its own, so that it does not hold
/// one of the few threads Swift's concurrency pool has.
func onThread<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}

/// Whether a process is gone: no such pid, or a zombie nobody reaped yet.
func isGone(_ pid: Int32) -> Bool {
  guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
  // The state follows the command name in parentheses: "1234 (name) Z …".
  guard let close = stat.lastIndex(of: ")") else { return true }
  return stat[stat.index(close, offsetBy: 2)] == "Z"
}
