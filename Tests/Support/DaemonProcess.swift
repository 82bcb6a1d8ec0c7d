import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A real `switchyardd`, started for one test on a socket of its own and stopped after it.
///
/// Shared by the test targets that drive the daemon as a process (DaemonTests, ClientTests).
public final class DaemonProcess: @unchecked Sendable {
  public let directory: URL
  public let socketPath: String
  public let process: ChildProcess

  /// The directory the test bundle was built into, where `switchyardd` and `switchyard` are too.
  public static var productsDirectory: URL {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
  }

  /// Starts the daemon and waits until its socket accepts connections.
  ///
  /// - Parameters:
  ///   - socketPath: The socket to serve on; a new temporary one by default.
  ///   - environment: Variables to add, such as `SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT`; the test
  ///     process's own `SWITCHYARD_*` variables are not passed on.
  ///   - arguments: Further command-line arguments.
  ///   - executable: The daemon to start: `switchyardd`, or `switchyard-fixture` for features
  ///     that misbehave on purpose.
  ///   - launcher: A command that runs the daemon and becomes it (`exec`s it), such as
  ///     `["/usr/bin/prlimit", "--nofile=128:128"]`.
  ///   - inheriting: Descriptors the daemon gets as its 3, 4, … (what systemd passes).
  public init(
    socketPath: String? = nil,
    environment: [String: String] = [:],
    arguments: [String] = [],
    executable: String = "switchyardd",
    launcher: [String] = [],
    inheriting: [Int32] = []
  ) async throws {
    self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
    self.socketPath = socketPath ?? self.directory.appendingPathComponent("s.sock").path
    let daemon = Self.productsDirectory.appendingPathComponent(executable).path
    let command = launcher + [daemon, "--socket", self.socketPath] + arguments
    var processEnvironment = ProcessInfo.processInfo.environment.filter { !Self.isInheritedByMistake($0.key) }
    processEnvironment.merge(environment) { $1 }
    self.process = try ChildProcess(
      command[0], Array(command.dropFirst()), environment: processEnvironment, stderr: .collect, inheriting: inheriting
    )
    let deadline = ContinuousClock.now + .seconds(10) * Self.timeScale
    while !canConnect(to: self.socketPath) {
      guard self.process.isRunning, ContinuousClock.now < deadline else {
        throw DaemonFailedToStart(log: self.log)
      }
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  /// Variables of the test process that would change how the daemon runs: its own settings,
  /// and a service manager's (when the tests themselves run under systemd).
  private static func isInheritedByMistake(_ name: String) -> Bool {
    name.hasPrefix("SWITCHYARD_") || name.hasPrefix("LISTEN_") || name.hasPrefix("WATCHDOG_")
      || ["NOTIFY_SOCKET", "JOURNAL_STREAM"].contains(name)
  }

  /// How much longer than usual the daemon may take to start and stop:
  /// `SWITCHYARD_TEST_TIME_SCALE`, which `make test-tsan` sets, since ThreadSanitizer slows
  /// everything several times.
  static let timeScale = Int(ProcessInfo.processInfo.environment["SWITCHYARD_TEST_TIME_SCALE"] ?? "") ?? 1

  /// The process's id.
  public var pid: pid_t { self.process.pid }

  /// Whether the daemon still runs.
  public var isRunning: Bool { self.process.isRunning }

  /// Sends `signal` to the daemon.
  public func signal(_ signal: Int32) {
    self.process.signal(signal)
  }

  /// The process itself is stopped when the last reference to it goes (``ChildProcess``'s
  /// `deinit`: SIGTERM, two seconds, SIGKILL).
  deinit {
    try? FileManager.default.removeItem(at: self.directory)
    // A daemon started on another one's socket (a restart) serves from that one's directory,
    // which its daemon recreates when it binds after the first one's end removed it: the last of
    // them takes it away once nothing is left in it (`rmdir` refuses while a socket is there).
    let socketDirectory = URL(fileURLWithPath: self.socketPath).deletingLastPathComponent().standardizedFileURL
    if socketDirectory != self.directory.standardizedFileURL, socketDirectory.lastPathComponent.hasPrefix("switchyard-"),
      socketDirectory.deletingLastPathComponent().path == FileManager.default.temporaryDirectory.standardizedFileURL.path
    {
      rmdir(socketDirectory.path)
    }
  }

  /// Waits for the daemon to exit by itself; its exit status, or `nil` when it still runs
  /// after `timeout` (it is then killed), or when a signal ended it (an issue of the test).
  public func waitForExit(within timeout: Duration = .seconds(10)) async -> Int32? {
    let timeout = timeout * Self.timeScale
    guard let ended = await self.process.exit(within: timeout) else {
      Issue.record("the daemon did not exit within \(timeout):\n\(self.log)")
      // SIGKILL, which nothing can hold up: a daemon that ignored SIGTERM once would again,
      // and waiting for it without end would hang the whole suite.
      _ = await self.process.kill()
      return nil
    }
    guard case .exited(let status) = ended else {
      Issue.record("switchyardd ended with \(ended):\n\(self.log)")
      return nil
    }
    return status
  }

  /// Sends SIGTERM and waits for the exit status; a daemon that ends otherwise than with
  /// status 0 is an issue of the test, with the daemon's log.
  public func terminate() async -> Int32 {
    self.signal(SIGTERM)
    guard let status = await self.waitForExit() else { return -1 }
    if status != 0 {
      Issue.record("switchyardd ended with status \(status):\n\(self.log)")
    }
    return status
  }

  /// What the daemon logged so far.
  public var log: String { self.process.stderr }
}
public struct DaemonFailedToStart: Error, CustomStringConvertible {
  public let log: String
  public var description: String { "switchyardd did not start:\n\(self.log)" }
}

/// Whether a Unix socket at `path` accepts a connection (which is closed again at once).
public func canConnect(to path: String) -> Bool {
  let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
  guard fd >= 0 else { return false }
  defer { close(fd) }
  var address = sockaddr_un()
  address.sun_family = sa_family_t(AF_UNIX)
  withUnsafeMutableBytes(of: &address.sun_path) { raw in
    raw.copyBytes(from: path.utf8.prefix(raw.count - 1))
  }
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
  } == 0
}
