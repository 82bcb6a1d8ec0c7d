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

  @Test func outOfFileDescriptorsUnderTheLimitTheDaemonPausesAcceptingAndCatchesUpLater() async throws {
    let daemon = try await DaemonProcess()
    // Lowered under the running daemon, the file descriptor limit no longer leaves room for
    // its connection limit: accepting fails with EMFILE while clients wait in the backlog.
    let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(daemon.pid)/fd").count
    try await runProcess("/usr/bin/prlimit", "--pid", "\(daemon.pid)", "--nofile=\(open + 16):\(open + 16)")
    var clients: [RawSocket] = []
    for _ in 0..<40 { clients.append(try RawSocket(path: daemon.socketPath, blocking: true)) }
    try await Task.sleep(for: .milliseconds(500))
    let cpuBefore = try cpuSeconds(of: daemon.pid)
    try await Task.sleep(for: .seconds(1))
    let cpu = try cpuSeconds(of: daemon.pid) - cpuBefore
    #expect(cpu < 0.3, "the daemon used \(cpu) s of CPU in a second with clients it cannot accept")
    // Descriptors free up: the client that waited is accepted and served.
    let waiting = clients.removeLast()
    for client in clients { client.close() }
    _ = waiting.sendSome(Array(#"{"method":"io.switchyard.Store.Status"}"#.utf8) + [0])
    #expect(try waiting.readMessage()?["parameters"]?["features"] == 3)
    waiting.close()
    #expect(await daemon.terminate() == 0)
    #expect(daemon.log.contains("out of file descriptors: not accepting connections for a while"))
  }

  @Test func aCallLeftUnfinishedTimesOut() async throws {
    // Three seconds, not one: the call sent in two parts below must reach the daemon within the
    // timeout, and on a loaded machine (the tests run in parallel) a short sleep can take over a
    // second to come back.
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_FRAME_TIMEOUT": "3"])
    let slow = try daemon.connect()
    try slow.write(Array(#"{"method":"io.switchyard.Store.St"#.utf8))
    let started = ContinuousClock.now
    // A call sent in two parts within the timeout is answered, meanwhile.
    let patient = try daemon.connect()
    try patient.write(Array(#"{"method":"io.switchyard.Store.St"#.utf8))
    try await Task.sleep(for: .milliseconds(100))
    try patient.write(Array(#"atus"}"#.utf8) + [0])
    #expect(try patient.read()?["parameters"]?["features"] == 3)
    #expect(try slow.read() == ["error": "io.switchyard.Store.Timeout", "parameters": ["seconds": 3.0]])
    #expect(try slow.read() == nil, "then closed")
    let waited = ContinuousClock.now - started
    #expect(waited >= .milliseconds(2_900) && waited < .seconds(9), "\(waited)")
    #expect(await daemon.terminate() == 0)
  }

  @Test func aClientHeldBackLongerThanTheFrameTimeoutKeepsItsConnectionAndEveryReply() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_FRAME_TIMEOUT": "1"])
    let client = try RawSocket(path: daemon.socketPath, blocking: false)
    // Pipelines without reading until the daemon holds it back; its last read most likely ends
    // inside a call, whose rest waits in the socket.
    let calls = Array((0..<50_000).map { _ in Self.send }.joined())
    var written = 0
    var stalledSince: ContinuousClock.Instant?
    // Held back for sure only once its replies overflow the kernel's socket buffers and the
    // daemon's own 64 KiB: a daemon that is merely slow (a loaded machine) also stalls the
    // client for a while, and would then answer everything, wait for the rest of the call in
    // earnest, and rightly time it out.
    let enough = 12_000 * Self.send.count
    while written < calls.count {
      let count = client.sendSome(Array(calls[written...].prefix(64 << 10)))
      if count > 0 {
        written += count
        stalledSince = nil
      } else {
        let since = stalledSince ?? .now
        stalledSince = since
        let stalled = ContinuousClock.now - since
        if stalled > .milliseconds(300) && written >= enough || stalled > .seconds(3) { break }
        try await Task.sleep(for: .milliseconds(10))
      }
    }
    #expect(written < calls.count, "the daemon held the client back")
    // Held back for twice the frame timeout: the client is not the one that is slow.
    try await Task.sleep(for: .seconds(2))
    // Finishes the call it was writing and reads: every call is answered, in order.
    let sent = (written + Self.send.count - 1) / Self.send.count
    // A generous bound: this is about losing nothing, and several thousand sends through a debug
    // build while the rest of the suite runs on two cores have taken more than 5 seconds.
    let replies = try client.exchange(calls[written..<(sent * Self.send.count)], readingMessages: sent, within: .seconds(30))
    #expect(replies.count == sent, "\(replies.count) replies to \(sent) calls")
    let sequence = replies.compactMap { reply -> Int? in
      guard case let .int(seq)? = reply["parameters"]?["seq"] else { return nil }
      return Int(seq)
    }
    let others = replies.filter { $0["parameters"]?["seq"] == nil }
    #expect(others.isEmpty, "replies without a sequence number: \(others.prefix(3)) (\(others.count) in all)")
    #expect(sequence.count == sent && zip(sequence, sequence.dropFirst()).allSatisfy { $0 < $1 }, "replies in call order")
    client.close()
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

  @Test func aSubscriberThatStopsReadingDoesNotHoldUpAGracefulShutdown() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_MAX_UNWRITTEN_BYTES": "1024"])
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", [:], more: true)
    #expect(try subscriber.read()?["parameters"]?["state"] != nil)
    // Changes it never reads: its socket fills, then what the daemon may buffer for it.
    let client = try daemon.connect()
    for _ in 0..<3 {
      try client.write(Array((0..<1000).map { _ in Self.send }.joined()))
      for _ in 0..<1000 { _ = try client.read() }
    }
    daemon.signal(SIGTERM)
    #expect(await daemon.process.exit(within: .seconds(5)) == .exited(0), "the daemon waited for a subscriber that does not read")
  }

  @Test func tenThousandInvalidCallsWriteAFewLogLinesAndASummary() async throws {
    let daemon = try await DaemonProcess()
    do {
      let client = try daemon.connect()
      let garbage = Array("{nope".utf8) + [0]
      for _ in 0..<10 {
        try client.write(Array((0..<1000).map { _ in garbage }.joined()))
        for _ in 0..<1000 { #expect(try client.read()?["error"] == "io.switchyard.Store.InvalidRequest") }
      }
    }
    try await eventually { try daemon.connect().call("io.switchyard.Store.Status")["connections"] == 1 }
    #expect(await daemon.terminate() == 0)
    let lines = daemon.log.split(separator: "\n")
    // Starting and stopping take about ten lines; the 10,000 refusals a few more.
    #expect(lines.count < 40, "\(lines.count) lines:\n\(lines.joined(separator: "\n"))")
    #expect(lines.filter { $0.contains("malformed message") }.count >= 10, "the first ones are logged")
    #expect(!lines.contains { $0.contains("error reply") }, "once each, not again with their error reply")
    #expect(
      lines.contains { $0.contains("connection ended") && $0.contains("suppressed=") },
      "when the connection ends, a summary says how many were left out"
    )
  }
}
