import Foundation
import SwitchyardTestSupport
import SwitchyardVarlink
import Testing

/// `switchyard-fixture` is declared only by conforming to `DaemonMain` (no command of
/// its own): run as a process, it is a whole daemon — serve, worker processes, options, name,
/// version and usage errors.
@Suite struct ApplicationEntryPointTests {
  static let fixture = DaemonProcess.productsDirectory.appendingPathComponent("switchyard-fixture").path

  @Test func aMinimalApplicationServesAndRunsAWorkerHostedFeature() async throws {
    let daemon = try await DaemonProcess(executable: "switchyard-fixture")
    let client = try daemon.connect()
    let info = try client.call("org.varlink.service.GetInfo")
    #expect(info["product"] == "switchyard-fixture")
    #expect(info["version"] == .string(switchyardVersion))
    try client.call("io.switchyard.Store.Send", ["action": ["alpha": ["increment": [:]]]])
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/alpha/count"])["state"] == 1)
    let alpha = try client.call("io.switchyard.Store.Describe")["features"]?[2]
    #expect(alpha?["name"] == "alpha")
    #expect(alpha?["isolation"] == "process")
    guard case let .int(pid)? = alpha?["worker"]?["pid"] else {
      Issue.record("no worker pid in \(String(describing: alpha))")
      return
    }
    // The daemon started itself as the worker, through the protocol's hidden subcommand.
    let commandLine = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0")
    #expect(commandLine.dropFirst().prefix(3) == ["worker", "--feature", "alpha"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func versionAndHelp() async throws {
    let version = try ChildProcess(Self.fixture, ["--version"], stdout: .collect)
    #expect(await version.exit() == .exited(0))
    #expect(await version.stdoutToEnd() == switchyardVersion + "\n")
    let help = try ChildProcess(Self.fixture, ["--help"], stdout: .collect)
    #expect(await help.exit() == .exited(0))
    let text = await help.stdoutToEnd()
    #expect(text.contains("USAGE: switchyard-fixture"))
    #expect(text.contains("Hosts switchyard-fixture's features"))
    #expect(!text.contains("\n  worker"), "the worker subcommand is hidden")
  }

  /// The hidden `worker` started by hand, or for a feature the application does not have, says
  /// why it cannot serve as a worker and exits.
  @Test func aWorkerThatCannotServeSaysWhyAndExits() async throws {
    let orphan = try ChildProcess(Self.fixture, ["worker", "--feature", "alpha", "--parent", "1"], stderr: .collect)
    #expect(await orphan.exit() == .exited(1), "\(orphan.stderr)")
    #expect(orphan.stderr.contains("worker: the daemon (pid 1) is gone"), "\(orphan.stderr)")
    let parent = "\(getpid())"
    let unknown = try ChildProcess(Self.fixture, ["worker", "--feature", "nosuch", "--parent", parent], stderr: .collect)
    #expect(await unknown.exit() == .exited(1), "\(unknown.stderr)")
    #expect(unknown.stderr.contains("worker: the application has no feature named nosuch"), "\(unknown.stderr)")
  }

  /// Argument-parser's usage error, and an invalid configuration, both with the usage: 64.
  @Test(arguments: [["--no-such-option"], ["serve", "--config", "/nonexistent/switchyard.json"]])
  func usageErrorsExitWith64(arguments: [String]) async throws {
    let process = try ChildProcess(Self.fixture, arguments, stderr: .collect)
    #expect(await process.exit() == .exited(64), "\(process.stderr)")
    #expect(process.stderr.contains("Usage: switchyard-fixture") || process.stderr.contains("USAGE: switchyard-fixture"))
  }
}
