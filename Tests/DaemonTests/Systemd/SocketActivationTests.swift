import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Socket activation through the real `systemd-socket-activate`: it binds the socket, waits for
/// the first connection, then execs the daemon with the listening socket as fd 3.
@Suite(.serialized) struct SocketActivationTests {
  @Test func theFirstConnectionStartsTheDaemonWhichServesItOnTheInheritedSocket() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let activator = try SocketActivator(fdName: "varlink", listen: temporaryPath("activated.sock"), notifySocket: notify.path)
    #expect(activator.command.hasPrefix("systemd-socket"), "nothing but the activator runs before a client connects")
    let client = try VarlinkTestClient(path: activator.address)
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(activator.command == "switchyardd", "the activator exec'd the daemon")
    #expect(await notify.receive(until: { $0.fields["READY"] == "1" }) != nil)
    #expect(!FileManager.default.fileExists(atPath: activator.configuredSocketPath), "an activated daemon binds nothing itself")
    _ = try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    let second = try VarlinkTestClient(path: activator.address)
    #expect(try second.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 1, "later clients reach the same daemon")
    #expect(await activator.terminate() == 0)
    #expect(activator.log.contains("socket=\(activator.address)"), "the log names the inherited socket's path")
  }

  @Test func aSocketWithAnotherNameIsRefusedWithTheFix() async throws {
    let activator = try SocketActivator(fdName: "other", listen: temporaryPath("other.sock"))
    _ = try? VarlinkTestClient(path: activator.address).read()
    #expect(await activator.waitForExit() == 1)
    #expect(activator.log.contains("none named 'varlink'"), "\(activator.log)")
    #expect(activator.log.contains("FileDescriptorName=varlink"), "the message says how to fix the unit")
  }

  @Test func aTCPSocketIsRefused() async throws {
    let port = Int.random(in: 20_000..<60_000)
    let activator = try SocketActivator(fdName: "varlink", listen: "127.0.0.1:\(port)")
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    try #require(connected == 0, "the activator listens on port \(port)")
    #expect(await activator.waitForExit() == 1)
    #expect(activator.log.contains("is not a listening Unix stream socket"), "\(activator.log)")
  }
}

/// `systemd-socket-activate` listening for `switchyardd`.
private final class SocketActivator: @unchecked Sendable {
  let address: String
  let configuredSocketPath = temporaryPath("configured.sock")
  private let process = Process()
  private let stderr = Pipe()
  private var output = Data()

  init(fdName: String, listen address: String, notifySocket: String? = nil) throws {
    self.address = address
    self.process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
    var arguments = ["--listen=\(address)", "--fdname=\(fdName)"]
    var environment = ["PATH": "/usr/bin:/bin"]
    if let notifySocket {
      arguments.append("--setenv=NOTIFY_SOCKET")
      environment["NOTIFY_SOCKET"] = notifySocket
    }
    let daemon = DaemonProcess.productsDirectory.appendingPathComponent("switchyardd").path
    self.process.arguments = arguments + [daemon, "--socket", self.configuredSocketPath]
    self.process.environment = environment
    self.process.standardError = self.stderr
    self.process.standardOutput = FileHandle.nullDevice
    try self.process.run()
    // The activator binds before it waits; a client that comes too early is refused.
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline, !self.isListening {
      Thread.sleep(forTimeInterval: 0.01)
    }
  }

  deinit {
    if self.process.isRunning {
      self.process.terminate()
      // Foundation's Process passes on the spawning thread's signal mask: started from a thread
      // that blocks SIGTERM (libdispatch's do), the activator never sees it. SIGKILL it is then.
      let deadline = ContinuousClock.now + .seconds(2)
      while self.process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.01) }
      if self.process.isRunning { kill(self.process.processIdentifier, SIGKILL) }
      self.process.waitUntilExit()
    }
    if self.address.hasPrefix("/") { unlink(self.address) }
  }

  private var isListening: Bool {
    if self.address.hasPrefix("/") { return FileManager.default.fileExists(atPath: self.address) }
    return (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8))?
      .contains(String(format: ":%04X 00000000:0000 0A", Int(self.address.split(separator: ":").last!)!)) == true
  }

  /// The process's name: the activator's until it execs the daemon.
  var command: String {
    ((try? String(contentsOfFile: "/proc/\(self.process.processIdentifier)/comm", encoding: .utf8)) ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  func terminate() async -> Int32 {
    kill(self.process.processIdentifier, SIGTERM)
    return await self.waitForExit()
  }

  func waitForExit() async -> Int32 {
    let deadline = ContinuousClock.now + .seconds(10)
    while self.process.isRunning, ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(20))
    }
    if self.process.isRunning {
      Issue.record("the daemon did not exit")
      self.process.terminate()
    }
    self.process.waitUntilExit()
    return self.process.terminationStatus
  }

  /// What the daemon wrote to stderr, once it has exited.
  var log: String {
    self.output.append(self.stderr.fileHandleForReading.availableData)
    return String(decoding: self.output, as: UTF8.self)
  }
}
