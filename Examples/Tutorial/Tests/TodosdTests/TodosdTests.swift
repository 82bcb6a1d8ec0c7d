import Foundation
import SwitchyardTestSupport
import Testing

/// todosd on a socket of its own, and the switchyard CLI talking to it.
struct TodosdTests {
  @Test func theCLIAddsATodoAndReadsItBack() async throws {
    let daemon = try await DaemonProcess(executable: "todosd")
    try await switchyard("send", "todos.add", #""Water the plants""#, socket: daemon.socketPath)
    try await switchyard("send", "todos.toggle", "1", socket: daemon.socketPath)
    #expect(try await switchyard("get", "/todos/items/0/title", socket: daemon.socketPath) == "\"Water the plants\"\n")
    #expect(try await switchyard("get", "/todos/items/0/isDone", socket: daemon.socketPath) == "true\n")
    #expect(await daemon.terminate() == 0)
  }
}

/// Runs the switchyard CLI, built next to the tests, and returns what it printed.
@discardableResult
func switchyard(_ arguments: String..., socket: String) async throws -> String {
  let path = DaemonProcess.productsDirectory.appendingPathComponent("switchyard").path
  let cli = try ChildProcess(path, arguments + ["--socket", socket], stdout: .collect, stderr: .collect)
  #expect(await cli.exit(within: .seconds(30)) == .exited(0), "switchyard \(arguments): \(cli.stderr)")
  return await cli.stdoutToEnd()
}
