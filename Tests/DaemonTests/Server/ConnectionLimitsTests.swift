import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// What one client, or many, can make the daemon hold: every queue has a bound, every wait a
/// timeout, and what is refused is told, through the real socket of a real daemon.
@Suite(.serialized) struct ConnectionLimitsTests {
  static let send = Array(#"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"incrTapped":{}}}}}"#.utf8) + [0]

  @Test func aClientThatPipelinesAndNeverReadsIsHeldBackNotBuffered() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LOG_LEVEL": "warning"])
    let before = try residentMegabytes(of: daemon.pid)
    // Writes until the daemon stops reading it: its socket buffers fill, the daemon's memory does not.
    let flooder = try RawSocket(path: daemon.socketPath, blocking: false)
    let chunk = Array((0..<1000).map { _ in Self.send }.joined())
    var frames = 0
    var stalledSince: ContinuousClock.Instant?
    let deadline = ContinuousClock.now + .seconds(20)
    while frames < 1_000_000, ContinuousClock.now < deadline {
      let written = flooder.sendSome(chunk)
      if written > 0 {
        frames += written / Self.send.count
        stalledSince = nil
      } else {
        let since = stalledSince ?? .now
        stalledSince = since
        if ContinuousClock.now - since > .milliseconds(500) { break }
        try await Task.sleep(for: .milliseconds(10))
      }
    }
    #expect(frames < 200_000, "the daemon stopped reading the client after \(frames) sends")
    let during = try residentMegabytes(of: daemon.pid)
    #expect(during - before < 64, "RSS grew from \(before) MB to \(during) MB")

    // Another client is served meanwhile, promptly.
    let other = try daemon.connect()
    let started = ContinuousClock.now
    #expect(try other.call("io.switchyard.Store.Get", ["path": "/signUp/email"])["state"] == "")
    #expect(ContinuousClock.now - started < .seconds(1))

    flooder.close()
    try await eventually { try other.call("io.switchyard.Store.Status")["connections"] == 1 }
    #expect(try residentMegabytes(of: daemon.pid) - before < 64)
    #expect(await daemon.terminate() == 0)
  }

  @Test func outOfFileDescriptorsTheDaemonRefusesCleanlyInsteadOfSpinning() async throws {
    let daemon = try await DaemonProcess(launcher: ["/usr/bin/prlimit", "--nofile=128:128"])
    var clients: [RawSocket] = []
    for _ in 0..<200 { clients.append(try RawSocket(path: daemon.socketPath, blocking: true)) }
    try await Task.sleep(for: .milliseconds(500))
    let cpuBefore = try cpuSeconds(of: daemon.pid)
    try await Task.sleep(for: .seconds(1))
    let cpu = try cpuSeconds(of: daemon.pid) - cpuBefore
    #expect(cpu < 0.3, "the daemon used \(cpu) s of CPU in a second with nothing to do")
    // The last ones were refused, and told.
    let refused = try #require(try clients.last?.readMessage())
    #expect(refused["error"] == "io.switchyard.Store.TooManyConnections", "\(refused)")
    #expect(daemon.log.contains("fewer connections than limits.maxConnections"))
    for client in clients { client.close() }
    try await eventually {
      (try? daemon.connect().call("io.switchyard.Store.Status"))?["connections"] == 1
    }
    #expect(await daemon.terminate() == 0)
  }

  @Test func aCallLeftUnfinishedTimesOut() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_FRAME_TIMEOUT": "1"])
    let slow = try daemon.connect()
    try slow.write(Array(#"{"method":"io.switchyard.Store.St"#.utf8))
    let started = ContinuousClock.now
    #expect(try slow.read() == nil, "closed")
    let waited = ContinuousClock.now - started
    #expect(waited >= .milliseconds(900) && waited < .seconds(3), "\(waited)")
    // A call sent in two parts within the timeout is answered.
    let patient = try daemon.connect()
    try patient.write(Array(#"{"method":"io.switchyard.Store.St"#.utf8))
    try await Task.sleep(for: .milliseconds(300))
    try patient.write(Array(#"atus"}"#.utf8) + [0])
    #expect(try patient.read()?["parameters"]?["features"] == 3)
    #expect(await daemon.terminate() == 0)
  }

  @Test func anIdleConnectionIsClosedButASubscriptionIsNot() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_IDLE_TIMEOUT": "1"])
    let idle = try daemon.connect()
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true)
    #expect(try subscriber.read()?["parameters"]?["state"] == 0)
    let started = ContinuousClock.now
    #expect(try idle.read() == nil, "the idle connection was closed")
    #expect(ContinuousClock.now - started < .seconds(3))
    try await Task.sleep(for: .seconds(1.5))
    try daemon.connect().call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    #expect(try subscriber.read()?["parameters"]?["patch"] != nil, "the subscription outlived the idle timeout")
    #expect(await daemon.terminate() == 0)
  }

  @Test func tenThousandInvalidCallsWriteAFewLogLinesAndASummary() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    let garbage = Array("{nope".utf8) + [0]
    for _ in 0..<10 {
      try client.write(Array((0..<1000).map { _ in garbage }.joined()))
      for _ in 0..<1000 { #expect(try client.read()?["error"] == "io.switchyard.Store.InvalidRequest") }
    }
    #expect(await daemon.terminate() == 0)
    let lines = daemon.log.split(separator: "\n").filter { $0.contains("malformed message") || $0.contains("left out") }
    #expect(lines.count < 30, "\(lines.count) lines")
    #expect(lines.contains { $0.contains("suppressed=") }, "a summary says how many were left out")
  }
}

/// A Unix stream socket with only what these tests need: writes that may be partial, and reads
/// of a NUL-ended message.
final class RawSocket {
  let fd: Int32
  private var buffer: [UInt8] = []

  init(path: String, blocking: Bool) throws {
    self.fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(self.fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard connected == 0 else {
      let code = errno
      Glibc.close(self.fd)
      throw POSIXError(.init(rawValue: code) ?? .EIO)
    }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(self.fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    if !blocking { _ = fcntl(self.fd, F_SETFL, fcntl(self.fd, F_GETFL) | O_NONBLOCK) }
  }

  /// Writes what the socket takes now; 0 when it takes nothing.
  func sendSome(_ bytes: [UInt8]) -> Int {
    max(0, bytes.withUnsafeBytes { Glibc.send(self.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) })
  }

  func readMessage() throws -> JSONValue? {
    while true {
      if let end = self.buffer.firstIndex(of: 0) {
        defer { self.buffer.removeSubrange(...end) }
        return try JSONValue(parsing: Array(self.buffer[..<end]))
      }
      var chunk = [UInt8](repeating: 0, count: 4096)
      let count = chunk.withUnsafeMutableBytes { recv(self.fd, $0.baseAddress, $0.count, 0) }
      if count <= 0 { return nil }
      self.buffer += chunk[..<count]
    }
  }

  func close() { Glibc.close(self.fd) }
}

/// A process's resident memory, from /proc.
func residentMegabytes(of pid: pid_t) throws -> Int {
  let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
  let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
  return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) / 1024
}

/// A process's CPU time (user and system), from /proc.
func cpuSeconds(of pid: pid_t) throws -> Double {
  let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
  // Past the command, which is in parentheses and may hold spaces.
  let fields = stat[stat.index(after: stat.lastIndex(of: ")")!)...].split(separator: " ")
  return (Double(fields[11])! + Double(fields[12])!) / Double(sysconf(Int32(_SC_CLK_TCK)))
}
