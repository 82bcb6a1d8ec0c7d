import Foundation
import SwitchyardJSON
import SwitchyardTestSupport
import Testing

/// The programs the end-to-end tests run, each as a process of its own.
enum Executables {
  /// `flags-watch`, built next to the tests.
  static var flagsWatch: String {
    DaemonProcess.productsDirectory.appendingPathComponent("flags-watch").path
  }

  /// The `switchyard` CLI, built from the repository's own package: `$SWITCHYARD_CLI`
  /// (`make examples-test` sets it), or its debug build beside this example.
  static var switchyard: String {
    if let path = ProcessInfo.processInfo.environment["SWITCHYARD_CLI"], !path.isEmpty { return path }
    let repository = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent()
    return repository.appendingPathComponent(".build/debug/switchyard").path
  }
}

/// What a finished command said.
struct CommandOutput {
  var status: ChildProcess.Termination?
  var stdout: String
  var stderr: String

  /// Stdout as JSON.
  func json() throws -> JSONValue {
    try JSONValue(parsing: self.stdout)
  }
}

extension DaemonProcess {
  /// Runs `switchyard ARGUMENTS --socket SOCKET` against this daemon and waits for it to end.
  func switchyard(_ arguments: String...) async throws -> CommandOutput {
    try await self.switchyard(arguments)
  }

  func switchyard(_ arguments: [String]) async throws -> CommandOutput {
    guard FileManager.default.isExecutableFile(atPath: Executables.switchyard) else {
      throw MissingExecutable(path: Executables.switchyard)
    }
    let cli = try ChildProcess(
      Executables.switchyard, arguments + ["--socket", self.socketPath], stdout: .collect, stderr: .collect
    )
    let status = await cli.exit(within: .seconds(30))
    return CommandOutput(status: status, stdout: await cli.stdoutToEnd(), stderr: cli.stderr)
  }

  /// Runs `switchyard ARGUMENTS` and expects it to succeed.
  @discardableResult
  func expectSuccess(_ arguments: String...) async throws -> CommandOutput {
    let output = try await self.switchyard(arguments)
    #expect(output.status == .exited(0), "switchyard \(arguments.joined(separator: " ")): \(output.stderr)")
    return output
  }

  /// Starts `flags-watch ARGUMENTS --socket SOCKET`, its output collected.
  func watcher(_ arguments: String...) throws -> ChildProcess {
    try ChildProcess(
      Executables.flagsWatch, arguments + ["--socket", self.socketPath], stdout: .collect, stderr: .collect
    )
  }
}

struct MissingExecutable: Error, CustomStringConvertible {
  var path: String
  var description: String {
    "\(self.path) is missing: build the CLI in the repository first (swift build --product switchyard), or set SWITCHYARD_CLI"
  }
}

/// Waits until `condition` holds, checking every 20 ms, for at most `timeout`.
func waitUntil(
  _ what: @autoclosure () -> String, timeout: Duration = .seconds(10), _ condition: () throws -> Bool
) async throws {
  let deadline = ContinuousClock.now + timeout
  while try !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("timed out waiting until \(what())")
      return
    }
    try await Task.sleep(for: .milliseconds(20))
  }
}
