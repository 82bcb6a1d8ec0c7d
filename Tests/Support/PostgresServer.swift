import Foundation
import SwitchyardSynchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A real PostgreSQL 15 for the tests: `initdb` in a temporary directory, serving on a Unix
/// socket in it only, as `nobody` when the tests run as root (PostgreSQL refuses to), stopped
/// (by its pid) and removed when the test process exits. Each test takes a database of its own.
///
/// ```swift
/// let server = try await PostgresServer.shared()
/// let parameters = try await server.makeDatabase()   // "host=/tmp/… user=switchyard dbname=test_…"
/// ```
public final class PostgresServer: Sendable {
  /// Where Debian's postgresql-15 puts the server's programs (`make deps` installs it).
  public static let binaries = "/usr/lib/postgresql/15/bin"
  /// The superuser `initdb` made, who connects without a password over the socket.
  public static let user = "switchyard"

  /// Holds the data directory and the server's socket.
  public let directory: String
  public let process: ChildProcess

  private static let started = Mutex<PostgresServer?>(nil)
  private static let starting = Mutex<Task<PostgresServer, any Error>?>(nil)

  /// The server of this test process, started by the first test that asks for it.
  public static func shared() async throws -> PostgresServer {
    let start = Self.starting.withLock { starting in
      if let starting { return starting }
      let start = Task {
        let server = try await PostgresServer()
        Self.started.withLock { $0 = server }
        atexit { PostgresServer.started.withLock { $0 }?.stop() }
        return server
      }
      starting = start
      return start
    }
    return try await start.value
  }

  /// Starts a new server of its own (stop it with ``stop()``).
  public init() async throws {
    guard FileManager.default.isExecutableFile(atPath: Self.binaries + "/initdb") else {
      throw PostgresServerError("PostgreSQL 15 is not installed (\(Self.binaries)/initdb): `make deps` installs postgresql-15")
    }
    self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-pg-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
    let runAs = getuid() == 0 ? ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"] : []
    if getuid() == 0 { chown(self.directory, 65534, 65534) }
    chmod(self.directory, 0o700)
    let initdb = try ChildProcess(
      runAs.first ?? Self.binaries + "/initdb",
      Array(runAs.dropFirst()) + (runAs.isEmpty ? [] : [Self.binaries + "/initdb"])
        + ["-D", self.directory + "/data", "-U", Self.user, "-A", "trust", "-E", "UTF8", "--no-sync"],
      environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], stdout: .collect, stderr: .collect
    )
    guard await initdb.exit(within: .seconds(120)) == .exited(0) else {
      throw PostgresServerError("initdb failed: \(initdb.stderr)")
    }
    // fsync off: what the tests kill is the daemon, never this server; its commits still wait
    // for the WAL writer as `synchronous_commit` says.
    let postgres = [
      Self.binaries + "/postgres", "-D", self.directory + "/data", "-c", "listen_addresses=", "-c",
      "unix_socket_directories=\(self.directory)", "-c", "fsync=off", "-c", "max_connections=300", "-c", "shared_buffers=32MB",
    ]
    self.process = try ChildProcess(
      runAs.first ?? postgres[0], Array(runAs.dropFirst()) + (runAs.isEmpty ? Array(postgres.dropFirst()) : postgres),
      environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"], stderr: .collect
    )
    let deadline = ContinuousClock.now + .seconds(60)
    while !(try await self.run("pg_isready", ["-q", "-h", self.directory, "-U", Self.user, "-d", "postgres"])) {
      guard self.process.isRunning, ContinuousClock.now < deadline else {
        self.stop()
        throw PostgresServerError("PostgreSQL did not start: \(self.process.stderr)")
      }
      try await Task.sleep(for: .milliseconds(50))
    }
  }

  /// How long a test's journal waits for this server to answer at open. The daemon's 10 s is
  /// for a server of its own; this one serves every PostgreSQL test of the suite at once, on a
  /// machine the suite loads, and a slow start there is not what the tests are about (one test
  /// checks the limit itself, against no server at all).
  public static let answerWithin: Duration = .seconds(60)

  /// A new, empty database; libpq-style parameters to connect to it.
  public func makeDatabase() async throws -> String {
    let name = "test_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
    guard try await self.run("createdb", ["-h", self.directory, "-U", Self.user, name]) else {
      throw PostgresServerError("createdb \(name) failed")
    }
    return self.parameters(database: name)
  }

  /// libpq-style parameters that connect to `database` on this server.
  public func parameters(database: String) -> String {
    "host=\(self.directory) user=\(Self.user) dbname=\(database)"
  }

  /// Runs a program of the server's as a client: whether it exited 0.
  @discardableResult
  public func run(_ program: String, _ arguments: [String]) async throws -> Bool {
    let child = try ChildProcess(Self.binaries + "/" + program, arguments, environment: ["PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"])
    return await child.exit(within: .seconds(60)) == .exited(0)
  }

  /// Stops the server at once (SIGQUIT: its backends go with it), SIGKILL after five seconds,
  /// and removes its directory.
  public func stop() {
    self.process.signal(SIGQUIT)
    let deadline = ContinuousClock.now + .seconds(5)
    while self.process.isRunning, ContinuousClock.now < deadline { usleep(10_000) }
    if self.process.isRunning { self.process.signal(SIGKILL) }
    while self.process.isRunning, ContinuousClock.now < deadline + .seconds(5) { usleep(10_000) }
    try? FileManager.default.removeItem(atPath: self.directory)
  }
}

/// The test server could not be set up.
public struct PostgresServerError: Error, CustomStringConvertible {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
