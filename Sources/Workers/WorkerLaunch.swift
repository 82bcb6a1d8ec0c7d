import Foundation
import Logging
import SwitchyardSynchronization

/// How the daemon starts a worker: its own executable, run as `worker`.
package struct WorkerLaunch: Sendable {
  package let executable: String
  /// What `ps` shows as the command: the daemon's own path.
  package let name: String
  package let environment: [String: String]
  /// The level the daemon logs at when a worker starts: a reload may have changed it since.
  package let logLevel: @Sendable () -> Logger.Level

  package init(
    logLevel: @escaping @Sendable () -> Logger.Level, environment: [String: String] = ProcessInfo.processInfo.environment
  ) {
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

  package func spawn(feature: String) async throws -> SpawnedWorker {
    try await WorkerSpawner.shared.spawn(
      executable: self.executable,
      arguments: [self.name, "worker", "--feature", feature, "--parent", "\(getpid())", "--log-level", self.logLevel().rawValue],
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

extension SpawnedWorker {
  /// Logs the worker's stderr under its feature's name until it closes, then reaps the worker
  /// and hands `reaped` its `waitpid` status: on a thread of its own, since both block.
  package func watch(name: String, logger: Logger, reaped: @escaping @Sendable (Int32) -> Void) {
    let thread = Thread {
      // The kernel keeps 15 bytes of a name: the feature's is what tells the watchers apart.
      nameCurrentThread("watch-\(name)")
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(self.stderr, &buffer, buffer.count)
        if count < 0, errno == EINTR { continue }
        if count <= 0 { break }
        pending.append(contentsOf: buffer[..<count])
        while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
          logWorkerLine(String(decoding: pending[..<newline], as: UTF8.self), pid: self.pid, logger: logger)
          pending.removeSubrange(...newline)
        }
      }
      if !pending.isEmpty { logWorkerLine(String(decoding: pending, as: UTF8.self), pid: self.pid, logger: logger) }
      close(self.stderr)
      var status: Int32 = 0
      while waitpid(self.pid, &status, 0) < 0 && errno == EINTR {}
      reaped(status)
    }
    thread.start()
  }
}
