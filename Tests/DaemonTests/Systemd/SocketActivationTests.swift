import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing
@testable import SwitchyardSystemd

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
    let client = try VarlinkTestClient(path: activator.address)
    _ = try? client.read()
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
private final class SocketActivator: Sendable {
  let address: String
  let configuredSocketPath = temporaryPath("configured.sock")
  private let process: ChildProcess

  init(fdName: String, listen address: String, notifySocket: String? = nil) throws {
    self.address = address
    var arguments = ["--listen=\(address)", "--fdname=\(fdName)"]
    var environment = ["PATH": "/usr/bin:/bin"]
    if let notifySocket {
      arguments.append("--setenv=NOTIFY_SOCKET")
      environment["NOTIFY_SOCKET"] = notifySocket
    }
    let daemon = DaemonProcess.productsDirectory.appendingPathComponent("switchyardd").path
    self.process = try ChildProcess(
      "/usr/bin/systemd-socket-activate", arguments + [daemon, "--socket", self.configuredSocketPath],
      environment: environment, stderr: .collect
    )
    // A client that comes before listen() is refused, and the activator then waits for one
    // that never comes: the socket's file exists from bind() on, so ask the kernel instead.
    let deadline = ContinuousClock.now + .seconds(5)
    while ContinuousClock.now < deadline, !self.isListening {
      usleep(10_000)
    }
  }

  deinit {
    if self.address.hasPrefix("/") { unlink(self.address) }
  }

  /// Whether the activator's socket is listening, from /proc/net/unix (flag `__SO_ACCEPTCON`,
  /// 0x10000) or /proc/net/tcp (state 0A, LISTEN).
  private var isListening: Bool {
    if self.address.hasPrefix("/") {
      let table = (try? String(contentsOfFile: "/proc/net/unix", encoding: .utf8)) ?? ""
      return table.split(separator: "\n").contains { line in
        let fields = line.split(separator: " ")
        return fields.last.map(String.init) == self.address && fields.count > 3 && fields[3] == "00010000"
      }
    }
    return (try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8))?
      .contains(String(format: ":%04X 00000000:0000 0A", Int(self.address.split(separator: ":").last!)!)) == true
  }

  /// The process's name: the activator's until it execs the daemon.
  var command: String {
    ((try? String(contentsOfFile: "/proc/\(self.process.pid)/comm", encoding: .utf8)) ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  func terminate() async -> Int32 {
    self.process.signal(SIGTERM)
    return await self.waitForExit()
  }

  /// The daemon's exit status; -1, with an issue, when it did not exit within ten seconds or a
  /// signal ended it.
  func waitForExit() async -> Int32 {
    guard let ended = await self.process.exit(within: .seconds(10)) else {
      Issue.record("the daemon did not exit")
      _ = await self.process.kill()
      return -1
    }
    guard case .exited(let status) = ended else {
      Issue.record("the daemon ended with \(ended)")
      return -1
    }
    return status
  }

  /// What the daemon wrote to stderr.
  var log: String { self.process.stderr }
}
