import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The `switchyard` command, run as a subprocess against the real `switchyardd`.
@Suite(.serialized) struct CLITests {
  struct Output {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  static var executable: URL { DaemonProcess.productsDirectory.appendingPathComponent("switchyard") }

  static var environment: [String: String] {
    ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHYARD_") }
  }

  /// Runs `switchyard` with `arguments` and waits for it to exit.
  func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
    let process = try ChildProcess(
      Self.executable.path, arguments, environment: Self.environment.merging(environment) { $1 },
      stdout: .collect, stderr: .collect
    )
    guard case .exited(let status) = await process.exit(within: .seconds(30)) else {
      Issue.record("switchyard \(arguments.joined(separator: " ")) did not exit with a status")
      _ = await process.kill()
      return Output(status: -1, stdout: process.stdout, stderr: process.stderr)
    }
    return Output(status: status, stdout: process.stdout, stderr: process.stderr)
  }

  /// What a new user reads: `describe` lists every action as `send` takes it and the state's
  /// paths; an error reply is a sentence that says what happened and what to do (`--json`
  /// keeps the wire form); `log --since 0` starts at the oldest change kept, and a feature that
  /// is not there is said to be so.
  @Test func aNewUserFindsEveryActionAndReadsErrorsAsSentences() async throws {
    let plain = try await DaemonProcess()
    var output = try await self.run(["describe", "--socket", plain.socketPath])
    #expect(output.status == 0, "\(output.stderr)")
    for expected in ["counter.incrTapped", "favoritePrimes.deleteFavoritePrimes(IndexSet)", "signUp.emailChanged(String)", "/primes/count"] {
      #expect(output.stdout.contains(expected), "\(expected): \(output.stdout)")
    }
    #expect(output.stdout.contains("internal  counter.nthPrimeResponse(n: Int, prime: Int?)"), "\(output.stdout)")
    output = try await self.run(["log", "--socket", plain.socketPath])
    #expect(output.status == 1)
    #expect(output.stderr.hasPrefix("switchyard: the daemon keeps no journal"), "\(output.stderr)")
    #expect(output.stderr.contains("--state-directory"), "how to give it one: \(output.stderr)")
    output = try await self.run(["log", "--json", "--socket", plain.socketPath])
    #expect(output.stderr == "io.switchyard.Store.NoJournal {}\n", "\(output.stderr)")
    #expect(await plain.terminate() == 0)

    // An application's own daemon is named as GetInfo names it.
    let fixture = try await DaemonProcess(executable: "switchyard-fixture")
    output = try await self.run(["status", "--socket", fixture.socketPath])
    #expect(output.stdout.hasPrefix("● switchyard-fixture at \(fixture.socketPath)\n"), "\(output.stdout)")
    #expect(await fixture.terminate() == 0)

    let state = FileManager.default.temporaryDirectory.appendingPathComponent("cli-state-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    // A snapshot every two changes, one kept, nothing retained behind it: the first changes go.
    let daemon = try await DaemonProcess(
      environment: ["SWITCHYARD_SNAPSHOTS_EVERY": "2", "SWITCHYARD_SNAPSHOTS_KEEP": "1", "SWITCHYARD_JOURNAL_RETENTION": "0"],
      arguments: ["--state-directory", state]
    )
    let socket = ["--socket", daemon.socketPath]
    for _ in 1...7 { #expect(try await self.run(["send", "counter.incrTapped"] + socket).status == 0) }
    try await eventually("the first changes pruned") { try await self.run(["get", "/primes/count", "--at", "1"] + socket).status == 1 }
    output = try await self.run(["get", "/primes/count", "--at", "1"] + socket)
    #expect(output.stderr.hasPrefix("switchyard: the journal no longer holds seq 1: it holds states from seq "), "\(output.stderr)")
    output = try await self.run(["get", "/primes/count", "--at", "9"] + socket)
    #expect(output.stderr.hasPrefix("switchyard: the journal has not reached seq 9: its latest change is 7"), "\(output.stderr)")
    output = try await self.run(["log", "--json", "--since", "0"] + socket)
    #expect(output.status == 0, "from the oldest kept: \(output.stderr)")
    #expect(output.stdout.split(separator: "\n").last.map { try? JSONValue(parsing: String($0))["seq"] } == 7, "\(output.stdout)")
    output = try await self.run(["log", "--feature", "nosuch"] + socket)
    #expect(output.status == 1 && output.stdout.isEmpty)
    #expect(output.stderr == "switchyard: no feature is named nosuch: the daemon hosts primes, activityFeed, signUp\n", "\(output.stderr)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func sendGetDescribeStatusAndCall() async throws {
    let daemon = try await DaemonProcess()
    let socket = ["--socket", daemon.socketPath]

    var output = try await self.run(["send", "counter.incrTapped"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "1\n")
    output = try await self.run(["send", #"{"counter":{"incrTapped":{}}}"#] + socket)
    #expect(output.stdout == "2\n")
    // The socket from the environment, and a payload after a space in the same argument.
    output = try await self.run(["send", #"signUp.emailChanged "a@b.c""#], environment: ["SWITCHYARD_SOCKET": daemon.socketPath])
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "3\n")
    // A payload as the next argument. (No favorite to delete: the state, and its seq, stay,
    // which stderr says.)
    output = try await self.run(["send", "favoritePrimes.deleteFavoritePrimes", "[0]"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "3\n")
    #expect(output.stderr == "no change: the action left the state as it was (seq 3)\n", "\(output.stderr)")

    output = try await self.run(["get", "/primes/count"] + socket)
    #expect(output.stdout == "2\n")
    output = try await self.run(["get", "/signUp/email"] + socket)
    #expect(output.stdout == "\"a@b.c\"\n")
    output = try await self.run(["get"] + socket)
    let state = try JSONValue(parsing: output.stdout)
    #expect(state["primes"]?["count"] == 2)
    #expect(output.stdout.contains("\n  \"primes\": {\n"), "pretty-printed")

    output = try await self.run(["describe", "--json"] + socket)
    let features = try JSONValue(parsing: output.stdout)["features"]
    #expect(features?[0]?["name"] == "primes")
    #expect(features?[1]?["readOnly"] == true)

    output = try await self.run(["status", "--json"] + socket)
    let status = try JSONValue(parsing: output.stdout)
    #expect(status["seq"] == 3)
    #expect(status["actions"] == 4)
    #expect(status["features"] == 3)

    output = try await self.run(["call", "io.switchyard.Store.Get", #"{"path": "/primes/count"}"#] + socket)
    #expect(try JSONValue(parsing: output.stdout) == ["seq": 3, "state": 2])
    output = try await self.run(["call", "org.varlink.service.GetInfo"] + socket)
    #expect(try JSONValue(parsing: output.stdout)["interfaces"] == ["org.varlink.service", "io.switchyard.Store"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func exitCodes() async throws {
    let daemon = try await DaemonProcess()
    let socket = ["--socket", daemon.socketPath]

    // 1: the daemon answered with an error, named on stderr with its parameters.
    var output = try await self.run(["get", "/nope"] + socket)
    #expect(output.status == 1)
    #expect(output.stdout == "")
    #expect(output.stderr.contains(#"io.switchyard.Store.PathNotFound {"path":"/nope"}"#), "\(output.stderr)")
    output = try await self.run(["send", "counter.explode"] + socket)
    #expect(output.status == 1)
    #expect(output.stderr.contains("io.switchyard.Store.InvalidAction"), "\(output.stderr)")
    output = try await self.run(["call", "io.switchyard.Store.Explode"] + socket)
    #expect(output.status == 1)
    #expect(output.stderr.contains("org.varlink.service.MethodNotFound"), "\(output.stderr)")

    // 2: usage errors.
    output = try await self.run(["send"] + socket)
    #expect(output.status == 2)
    output = try await self.run(["send", "counter.incrTapped {"] + socket)
    #expect(output.status == 2)
    #expect(output.stderr.contains("payload"), "\(output.stderr)")
    output = try await self.run(["get", "no-slash"] + socket)
    #expect(output.status == 2)
    output = try await self.run(["frobnicate"] + socket)
    #expect(output.status == 2)

    // Nothing reached the state.
    #expect(try await self.run(["get", "/primes/count"] + socket).stdout == "0\n")
    #expect(await daemon.terminate() == 0)

    // 3: nobody listens.
    output = try await self.run(["status", "--socket", daemon.socketPath])
    #expect(output.status == 3)
    #expect(output.stderr.contains("cannot connect"), "\(output.stderr)")
    output = try await self.run(["watch", "--json", "--socket", daemon.directory.appendingPathComponent("missing.sock").path])
    #expect(output.status == 3)
  }

  @Test func completionScript() async throws {
    let output = try await self.run(["--generate-completion-script", "bash"])
    #expect(output.status == 0)
    #expect(output.stdout.contains("watch"))
  }

  @Test func watchJSONPrintsASnapshotThenEachChange() async throws {
    let daemon = try await DaemonProcess()
    let readable = try ChildProcess(
      Self.executable.path, ["watch", "/primes", "--socket", daemon.socketPath], environment: Self.environment, stdout: .collect
    )
    let process = try ChildProcess(
      Self.executable.path, ["watch", "/primes", "--json", "--socket", daemon.socketPath],
      environment: Self.environment, stdout: .collect
    )
    func lines() -> [String] {
      process.stdout.split(separator: "\n").map(String.init)
    }

    try await eventually("a snapshot line") { !lines().isEmpty }
    let snapshot = try JSONValue(parsing: try #require(lines().first))
    #expect(snapshot["seq"] == 0)
    #expect(snapshot["state"]?["count"] == 0)

    try await eventually("the readable watcher's snapshot") { readable.stdout.contains("}\n") }
    let send = try await self.run(["send", "counter.incrTapped", "--socket", daemon.socketPath])
    #expect(send.status == 0)
    try await eventually("a change line") { lines().count >= 2 }
    let change = try JSONValue(parsing: lines()[1])
    // Without a journal the daemon knows only which feature made the change.
    #expect(change == ["seq": 1, "patch": [["op": "replace", "path": "/count", "value": 1]], "cause": ["feature": "primes"]])

    process.signal(SIGTERM)
    #expect(await process.exit() == .signalled(SIGTERM))

    // Without --json and not on a terminal: readable, without colours, one operation a line.
    try await eventually("the readable watcher saw the change") { readable.stdout.contains("seq 1 ") }
    #expect(readable.stdout.hasPrefix("seq 0 snapshot\n{\n  \"count\": 0,\n"), "\(readable.stdout)")
    #expect(readable.stdout.hasSuffix("seq 1 primes\n  replace /count 1\n"), "\(readable.stdout)")
    #expect(!readable.stdout.contains("\u{1B}["))
    readable.signal(SIGTERM)
    #expect(await daemon.terminate() == 0)
  }

  /// `log`, `get --at`, `replay` and `backup` against a daemon that keeps a journal.
  @Test func logGetAtReplayAndBackupReadTheJournal() async throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-cli-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let socket = ["--socket", daemon.socketPath]
    for _ in 1...3 { #expect(try await self.run(["send", "counter.incrTapped"] + socket).status == 0) }

    var output = try await self.run(["log", "--json", "--since", "1"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    let entries = try output.stdout.split(separator: "\n").map { try JSONValue(parsing: String($0)) }
    #expect(entries.map { $0["seq"] } == [2, 3])
    #expect(entries.first?["action"] == ["counter": ["incrTapped": [:]]] && entries.first?["origin"] == "request")
    output = try await self.run(["log", "--feature", "primes", "--until", "1"] + socket)
    #expect(output.stdout.hasPrefix("seq 1 "), "\(output.stdout)")
    #expect(output.stdout.contains(" primes request uid \(getuid()) pid "), "\(output.stdout)")
    #expect(output.stdout.hasSuffix("\n  {\"counter\":{\"incrTapped\":{}}}\n  replace /primes/count 1\n"), "\(output.stdout)")

    output = try await self.run(["get", "/primes/count", "--at", "2"] + socket)
    #expect(output.stdout == "2\n")
    output = try await self.run(["get", "/primes/count", "--at", "7"] + socket)
    #expect(output.status == 1 && output.stderr.contains("io.switchyard.Store.SeqNotRetained"), "\(output.stderr)")

    output = try await self.run(["replay"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "replayed 3 changes from 0 to 3; skipped 0 (action not known)\nevery replayed change agrees with the journal\n")

    output = try await self.run(["backup"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    let copy = state + "/backup/journal.sqlite"
    let bytes = (try FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? -1
    #expect(output.stdout == "wrote \(copy): \(bytes) bytes, the journal up to seq 3\n", "\(output.stdout)")

    let follower = try ChildProcess(
      Self.executable.path, ["log", "--follow", "--json", "--since", "3"] + socket, environment: Self.environment, stdout: .collect
    )
    #expect(try await self.run(["send", "counter.incrTapped"] + socket).status == 0)
    try await eventually("the followed change") { follower.stdout.contains("\"seq\":4") }
    follower.signal(SIGTERM)
    _ = await follower.exit()
    #expect(await daemon.terminate() == 0)
  }
}
