import Foundation
import SwitchyardRuntime
import SwitchyardSynchronization
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

  /// Runs `switchyard` with `arguments` and waits for it to exit.
  func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Output {
    let process = Process()
    process.executableURL = Self.executable
    process.arguments = arguments
    var processEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHYARD_") }
    processEnvironment.merge(environment) { $1 }
    process.environment = processEnvironment
    let stdout = Pipe()
    let stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let out = stdout.fileHandleForReading.readDataToEndOfFile()
    let err = stderr.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Output(
      status: process.terminationStatus,
      stdout: String(decoding: out, as: UTF8.self),
      stderr: String(decoding: err, as: UTF8.self)
    )
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
    // A payload as the next argument. (No favorite to delete: the state, and its seq, stay.)
    output = try await self.run(["send", "favoritePrimes.deleteFavoritePrimes", "[0]"] + socket)
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout == "3\n")

    output = try await self.run(["get", "/primes/count"] + socket)
    #expect(output.stdout == "2\n")
    output = try await self.run(["get", "/signUp/email"] + socket)
    #expect(output.stdout == "\"a@b.c\"\n")
    output = try await self.run(["get"] + socket)
    let state = try JSONValue(parsing: output.stdout)
    #expect(state["primes"]?["count"] == 2)
    #expect(output.stdout.contains("\n  \"primes\": {\n"), "pretty-printed")

    output = try await self.run(["describe"] + socket)
    let features = try JSONValue(parsing: output.stdout)["features"]
    #expect(features?[0]?["name"] == "primes")
    #expect(features?[1]?["readOnly"] == true)

    output = try await self.run(["status"] + socket)
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
    let readable = try Watcher(["watch", "/primes", "--socket", daemon.socketPath])
    let process = Process()
    process.executableURL = Self.executable
    process.arguments = ["watch", "/primes", "--json", "--socket", daemon.socketPath]
    process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHYARD_") }
    let stdout = Pipe()
    process.standardOutput = stdout
    process.standardError = FileHandle.nullDevice
    let received = Mutex("")
    stdout.fileHandleForReading.readabilityHandler = { handle in
      let data = handle.availableData
      received.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    try process.run()
    defer {
      stdout.fileHandleForReading.readabilityHandler = nil
      if process.isRunning { process.terminate() }
    }
    func lines() -> [String] {
      received.withLock { $0 }.split(separator: "\n").map(String.init)
    }

    try await eventually("a snapshot line") { !lines().isEmpty }
    let snapshot = try JSONValue(parsing: try #require(lines().first))
    #expect(snapshot["seq"] == 0)
    #expect(snapshot["state"]?["count"] == 0)

    try await eventually("the readable watcher's snapshot") { readable.output.contains("}\n") }
    let send = try await self.run(["send", "counter.incrTapped", "--socket", daemon.socketPath])
    #expect(send.status == 0)
    try await eventually("a change line") { lines().count >= 2 }
    let change = try JSONValue(parsing: lines()[1])
    #expect(change == ["seq": 1, "patch": [["op": "replace", "path": "/count", "value": 1]]])

    process.terminate()
    process.waitUntilExit()
    #expect(process.terminationReason == .uncaughtSignal)

    // Without --json and not on a terminal: readable, without colours, one operation a line.
    try await eventually("the readable watcher saw the change") { readable.output.contains("seq 1\n") }
    #expect(readable.output.hasPrefix("seq 0 snapshot\n{\n  \"count\": 0,\n"), "\(readable.output)")
    #expect(readable.output.hasSuffix("seq 1\n  replace /count 1\n"), "\(readable.output)")
    #expect(!readable.output.contains("\u{1B}["))
    readable.stop()
    #expect(await daemon.terminate() == 0)
  }
}

/// `switchyard` running in the background, its stdout collected.
final class Watcher: Sendable {
  let process: Process
  private let pipe = Pipe()
  private let received = Mutex("")

  init(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = CLITests.executable
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHYARD_") }
    process.standardOutput = self.pipe
    process.standardError = FileHandle.nullDevice
    self.process = process
    self.pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
      let data = handle.availableData
      self?.received.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
    try process.run()
  }

  var output: String { self.received.withLock { $0 } }

  func stop() {
    self.pipe.fileHandleForReading.readabilityHandler = nil
    if self.process.isRunning {
      self.process.terminate()
      self.process.waitUntilExit()
    }
  }

  deinit { self.stop() }
}
