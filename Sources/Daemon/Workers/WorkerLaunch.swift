import Foundation
import Logging
import SwitchyardSystemd

/// How the daemon starts a worker: its own executable, run as `worker`.
struct WorkerLaunch: Sendable {
  let executable: String
  /// What `ps` shows as the command: the daemon's own path.
  let name: String
  let environment: [String: String]
  let logLevel: SharedLogLevel

  init(logLevel: SharedLogLevel, environment: [String: String] = ProcessInfo.processInfo.environment) {
    // /proc/self/exe names the running binary even after a package upgrade replaced the file.
    self.executable = "/proc/self/exe"
    self.name = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "switchyardd"
    self.logLevel = logLevel
    // A worker talks to the daemon only: not to systemd, and not to the journal (its stderr is a
    // pipe the daemon reads). Swift's backtracer would hold a crashed worker for seconds while
    // it symbolicates; the runtime's own crash message is enough, and restarts stay fast.
    var environment = environment.filter { name, _ in
      !(name.hasPrefix("LISTEN_") || name.hasPrefix("WATCHDOG_") || name == "NOTIFY_SOCKET" || name == "JOURNAL_STREAM")
    }
    environment["SWIFT_BACKTRACE"] = "enable=no"
    self.environment = environment
  }

  func spawn(feature: String) async throws -> SpawnedWorker {
    try await WorkerSpawner.shared.spawn(
      executable: self.executable,
      arguments: [self.name, "worker", "--feature", feature, "--parent", "\(getpid())", "--log-level", self.logLevel.level.rawValue],
      environment: self.environment
    )
  }
}

/// Logs a line a worker wrote to stderr under its feature's name, at the level the line names
/// (`… info worker: …`), or as an error when it names none (a crash message, for one).
func logWorkerLine(_ line: String, pid: pid_t, logger: Logger) {
  guard !line.isEmpty else { return }
  let words = line.split(separator: " ", maxSplits: 2)
  let level = words.count > 1 ? Logger.Level(rawValue: String(words[1])) : nil
  logger.log(level: level ?? .error, "worker: \(line)", metadata: ["worker.pid": "\(pid)"])
}
