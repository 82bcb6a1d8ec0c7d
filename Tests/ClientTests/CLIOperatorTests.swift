import Foundation
import SwitchyardJSON
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What an operator sees through the `switchyard` command, run as a subprocess against the real
/// `switchyardd`: global options anywhere, the human status, the metrics over Varlink and HTTP,
/// and one frame of `top`.
@Suite(.serialized) struct CLIOperatorTests {
  let cli = CLITests()

  @Test func theSocketOptionIsTakenBeforeOrAfterTheSubcommand() async throws {
    let daemon = try await DaemonProcess()
    var output = try await self.cli.run(["--socket", daemon.socketPath, "send", "counter.incrTapped"])
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "1\n")
    output = try await self.cli.run(["--socket=\(daemon.socketPath)", "get", "/primes/count"])
    #expect(output.stdout == "1\n", "\(output.stderr)")
    output = try await self.cli.run(["send", "counter.incrTapped", "--socket", daemon.socketPath])
    #expect(output.stdout == "2\n", "\(output.stderr)")
    output = try await self.cli.run(["status", "--json", "--socket", daemon.socketPath])
    #expect(try JSONValue(parsing: output.stdout)["seq"] == 2)
    // Before the subcommand, an unknown option is still a usage error.
    output = try await self.cli.run(["--sockets", daemon.socketPath, "status"])
    #expect(output.status == 2)
    #expect(await daemon.terminate() == 0)
  }

  @Test func statusAndDescribeAreShortSummaries() async throws {
    let daemon = try await DaemonProcess()
    let socket = ["--socket", daemon.socketPath]
    _ = try await self.cli.run(["send", "counter.incrTapped"] + socket)
    var output = try await self.cli.run(["status"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    let lines = output.stdout.split(separator: "\n").map(String.init)
    #expect(lines.first == "● switchyardd at \(daemon.socketPath)")
    #expect(lines.contains { $0.hasPrefix("     Active: up ") })
    #expect(lines.contains { $0.hasPrefix("      State: seq 1 after 1 actions (") && $0.hasSuffix("/s since start)") })
    #expect(lines.contains(" Durability: none"))
    // The command's own connection: its three calls share it.
    #expect(lines.contains("    Clients: 1 connection, 0 subscribers"))
    #expect(lines.contains("   Features: 3"))
    #expect(lines.contains { $0.hasPrefix("             primes        /primes        process  pid ") && $0.hasSuffix("  running  0 restarts") })
    #expect(lines.contains("             activityFeed  /activityFeed  actor"))
    #expect(!output.stdout.contains("\u{1B}["), "no colours off a terminal")

    output = try await self.cli.run(["describe"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout.hasPrefix("primes  /primes  process  pid "), "\(output.stdout)")
    #expect(output.stdout.contains("\n  route     full\n"), "\(output.stdout)")
    #expect(output.stdout.contains("\nactivityFeed  /activityFeed  actor\n"), "\(output.stdout)")
    #expect(output.stdout.contains("\n  route     read-only\n"), "\(output.stdout)")
    #expect(output.stdout.contains("\n  cases     counter.decrTapped\n            counter.incrTapped\n"), "\(output.stdout)")
    #expect(output.stdout.contains("\n  internal  counter.nthPrimeResponse(n: Int, prime: Int?)\n"), "\(output.stdout)")
    #expect(output.stdout.hasSuffix("\n\naccess: read, write, admin\n"), "\(output.stdout)")
    output = try await self.cli.run(["describe", "--json"] + socket)
    #expect(try JSONValue(parsing: output.stdout)["features"]?[0]?["name"] == "primes")
    #expect(await daemon.terminate() == 0)
  }

  /// After a known sequence of calls, the counters and histograms through `switchyard metrics`
  /// and through the HTTP endpoint.
  @Test func metricsCountAKnownSequenceOfCalls() async throws {
    let port = try freeTCPPort()
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_METRICS_LISTEN": "127.0.0.1:\(port)"])
    let socket = ["--socket", daemon.socketPath]
    for _ in 1...4 { #expect(try await self.cli.run(["send", "counter.incrTapped"] + socket).status == 0) }
    #expect(try await self.cli.run(["send", "counter.explode"] + socket).status == 1)
    #expect(try await self.cli.run(["get", "/nope"] + socket).status == 1)
    #expect(try await self.cli.run(["send", #"{"signUp":{"emailChanged":"a@b.c"}}"#] + socket).status == 0)

    let output = try await self.cli.run(["metrics"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    let text = output.stdout
    let expected = [
      #"switchyard_calls_total{method="io.switchyard.Store.Send",result="ok"} 5"#,
      #"switchyard_calls_total{method="io.switchyard.Store.Send",result="io.switchyard.Store.InvalidAction"} 1"#,
      #"switchyard_calls_total{method="io.switchyard.Store.Get",result="io.switchyard.Store.PathNotFound"} 1"#,
      #"switchyard_call_duration_seconds_count{method="io.switchyard.Store.Send"} 6"#,
      #"switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Send",le="+Inf"} 6"#,
      #"switchyard_reduce_duration_seconds_count{feature="primes"} 4"#,
      #"switchyard_reduce_duration_seconds_count{feature="signUp"} 1"#,
      #"switchyard_reduce_duration_seconds_count{feature="activityFeed"} 0"#,
      #"switchyard_mailbox_depth{feature="primes"} 0.0"#,
      "switchyard_actions_total 5",
      "switchyard_sequence_number 5.0",
      "switchyard_connections 1.0",
      #"switchyard_worker_restarts_total{feature="primes"} 0"#,
      #"switchyard_worker_up{feature="primes"} 1.0"#,
    ]
    for line in expected { #expect(text.contains(line + "\n"), "\(line) in\n\(text)") }

    // The HTTP endpoint serves the same, with the Metrics call above counted. (It binds once the
    // daemon runs, a moment after its socket accepts.)
    try await eventually("the endpoint listens") { (try? await httpGet(port: port, path: "/metrics")) != nil }
    let http = try await httpGet(port: port, path: "/metrics")
    #expect(http.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(http.prefix(200))")
    #expect(http.contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"))
    for line in expected where !line.hasPrefix("switchyard_connections") {
      #expect(http.contains(line + "\n"), "\(line) over HTTP")
    }
    #expect(http.contains(#"switchyard_calls_total{method="io.switchyard.Store.Metrics",result="ok"} 1"# + "\n"))
    #expect(try await httpGet(port: port, path: "/").hasPrefix("HTTP/1.1 404 Not Found\r\n"))
    #expect(await daemon.terminate() == 0)
  }

  /// With a journal the daemon knows each change's action and sender, and `watch` shows them.
  @Test func watchShowsWhatMadeEachChange() async throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-cli-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let socket = ["--socket", daemon.socketPath]
    let readable = try ChildProcess(CLITests.executable.path, ["watch", "/primes"] + socket, environment: CLITests.environment, stdout: .collect)
    let json = try ChildProcess(CLITests.executable.path, ["watch", "--json"] + socket, environment: CLITests.environment, stdout: .collect)
    try await eventually("both snapshots") { readable.stdout.contains("}\n") && json.stdout.contains("\n") }
    let sender = try await self.cli.run(["send", "favoritePrimes.deleteFavoritePrimes [0]"] + socket)
    #expect(sender.status == 0, "\(sender.stderr)")
    _ = try await self.cli.run(["send", "counter.incrTapped"] + socket)
    try await eventually("the change") { readable.stdout.contains("replace /count 1") && json.stdout.split(separator: "\n").count >= 2 }
    let line = try #require(readable.stdout.split(separator: "\n").first { $0.hasPrefix("seq 1 ") })
    #expect(line.hasPrefix("seq 1 primes ← counter.incrTapped (request, uid \(getuid()), pid "), "\(readable.stdout)")
    let change = try JSONValue(parsing: String(json.stdout.split(separator: "\n")[1]))
    #expect(change["cause"]?["action"] == ["counter": ["incrTapped": [:]]])
    #expect(change["cause"]?["origin"] == "request")
    #expect(change["cause"]?["feature"] == "primes")

    // The one change was journaled in one group commit (the delete changed nothing).
    let metrics = try await self.cli.run(["metrics"] + socket).stdout
    #expect(metrics.contains("\nswitchyard_journal_commit_changes_sum 1.0\n"), "\(metrics)")
    #expect(metrics.contains("\nswitchyard_journal_commit_changes_count 1\n"), "\(metrics)")
    #expect(metrics.contains("\nswitchyard_journal_commit_duration_seconds_count 1\n"), "\(metrics)")
    readable.signal(SIGTERM)
    json.signal(SIGTERM)
    _ = await readable.exit()
    _ = await json.exit()
    #expect(await daemon.terminate() == 0)
  }

  /// `watch` follows the daemon through a restart and says so on stderr: once as the connection
  /// drops, however many attempts the reconnection takes, and once it is back. `--json` prints
  /// the changes alone, as it would without the restart.
  @Test func watchSaysOnStderrThatItReconnectsAndGoesOnAfterTheDaemonRestarts() async throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-cli-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let socket = ["--socket", daemon.socketPath]
    func watch(_ arguments: [String]) throws -> ChildProcess {
      try ChildProcess(CLITests.executable.path, ["watch"] + arguments + socket, environment: CLITests.environment, stdout: .collect, stderr: .collect)
    }
    let readable = try watch(["/primes"])
    let json = try watch(["--json", "/primes"])
    try await eventually("both snapshots") { readable.stdout.contains("}\n") && json.stdout.contains("\n") }
    _ = try await self.cli.run(["send", "counter.incrTapped"] + socket)
    try await eventually("seq 1") { readable.stdout.contains("replace /count 1") }

    daemon.signal(SIGKILL)
    _ = await daemon.process.exit()
    let reconnecting = "reconnecting to \(daemon.socketPath): the connection closed …\n"
    try await eventually("the watcher says it reconnects") { readable.stderr == reconnecting }
    // No daemon listens meanwhile: attempts after 50, 100, 200 and 400 ms fail, and say nothing.
    try await Task.sleep(for: .seconds(1))
    #expect(readable.stderr == reconnecting)

    let restarted = try await DaemonProcess(socketPath: daemon.socketPath, arguments: ["--state-directory", state])
    try await eventually("the watcher says it is back") { readable.stderr == reconnecting + "reconnected at seq 1\n" }
    _ = try await self.cli.run(["send", "counter.incrTapped"] + socket)
    try await eventually("the change after the restart") { readable.stdout.contains("replace /count 2") }
    #expect(!readable.stdout.contains("reconnect"), "stdout has the changes alone: \(readable.stdout)")
    try await eventually("--json saw it too") { json.stdout.split(separator: "\n").count == 3 }
    let seqs = try json.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0))["seq"] }
    #expect(seqs == [0, 1, 2], "a snapshot, then one line per change: \(json.stdout)")
    #expect(json.stderr.isEmpty, "\(json.stderr)")
    readable.signal(SIGTERM)
    json.signal(SIGTERM)
    _ = await readable.exit()
    _ = await json.exit()
    #expect(await restarted.terminate() == 0)
  }

  @Test func topOncePrintsOneFrame() async throws {
    let daemon = try await DaemonProcess()
    let socket = ["--socket", daemon.socketPath]
    for _ in 1...3 { _ = try await self.cli.run(["send", "counter.incrTapped"] + socket) }
    let output = try await self.cli.run(["top", "--once"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    let lines = output.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0].hasPrefix("switchyard top — \(daemon.socketPath) — up "), "\(output.stdout)")
    #expect(lines[0].contains(" — seq 3 — "), "\(output.stdout)")
    #expect(lines[0].hasSuffix(" actions/s (since start)"), "\(output.stdout)")
    #expect(lines[1].hasPrefix("connections 1   subscribers 0 (queued 0, deepest 0)   memory "), "\(output.stdout)")
    let primes = try #require(lines.first { $0.hasPrefix("primes ") && $0.contains("process") }, "\(output.stdout)")
    // Three reductions: a rate, three percentiles, and an empty mailbox.
    #expect(primes.split(separator: " ").count == 7, "\(primes)")
    #expect(primes.hasSuffix(" 0"))
    #expect(lines.contains { $0.hasPrefix("activityFeed") && $0.contains("0.0") && $0.contains(" -  ") }, "\(output.stdout)")
    #expect(lines.contains { $0.hasPrefix("WORKER") })
    #expect(lines.contains { $0.hasPrefix("primes ") && $0.contains("running") && $0.contains("MiB") }, "\(output.stdout)")
    #expect(lines.contains { $0.hasPrefix("io.switchyard.Store.Send ") }, "\(output.stdout)")
    // Not a terminal: one frame without --once too, and no escape codes.
    let plain = try await self.cli.run(["top", "--interval", "0.2"] + socket)
    #expect(plain.status == 0)
    #expect(!plain.stdout.contains("\u{1B}["))
    #expect(await daemon.terminate() == 0)
  }
}
