import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing
@testable import SwitchyardSystemd

/// What `switchyardd` tells systemd through `NOTIFY_SOCKET`, read from a stand-in socket.
@Suite(.serialized) struct ServiceManagerTests {
  @Test func readyComesOnlyOnceTheSocketAcceptsConnections() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let socketPath = temporaryPath("s.sock")
    let launch = Task { try await DaemonProcess(socketPath: socketPath, environment: ["NOTIFY_SOCKET": notify.path]) }
    let ready = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    #expect(canConnect(to: socketPath), "the socket accepts as soon as READY=1 arrives")
    #expect(ready.last?.fields["STATUS"] == "3 features, 1 worker, 0 connections, 0 subscribers, 0.0 actions/s, durability none")
    #expect(ready.count == 1, "nothing comes before READY=1: \(ready)")
    let daemon = try await launch.value
    #expect(await daemon.terminate() == 0)
  }

  @Test func statusFollowsConnectionsSubscribersAndTheActionRate() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path])
    let client = try daemon.connect()
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", [:], more: true)
    _ = try subscriber.read()
    let busy = Task.detached {
      for _ in 0..<400 {
        _ = try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
        try await Task.sleep(for: .milliseconds(5))
      }
    }
    let status = await notify.receive(until: { message in
      guard let status = message.fields["STATUS"] else { return false }
      return status.hasPrefix("3 features, 1 worker, 2 connections, 1 subscriber, ") && !status.hasSuffix(" 0.0 actions/s, durability none")
    })
    #expect(status != nil, "a status line counts both connections, the subscriber and a non-zero rate")
    try await busy.value
    #expect(await daemon.terminate() == 0)
  }

  /// Recovering a journal takes as long as its changes since the last snapshot: the daemon tells
  /// systemd it is still starting as it begins, and every second after, so that a large
  /// journal does not fail the start timeout.
  @Test func aRecoveryExtendsTheStartTimeoutBeforeReady() async throws {
    let state = TemporaryStateDirectory()
    let environment = ["SWITCHYARD_SNAPSHOTS_EVERY": "100000"]
    let first = try await DaemonProcess(environment: environment, arguments: ["--state-directory", state.path])
    for _ in 1...3 { try first.connect().call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
    // Killed: no snapshot at the stop, so the next start applies the three changes.
    first.signal(SIGKILL)
    _ = await first.process.exit()

    let notify = try NotifySocket(path: temporaryPath("notify"))
    var environmentWithNotify = environment
    environmentWithNotify["NOTIFY_SOCKET"] = notify.path
    let second = try await DaemonProcess(
      socketPath: first.socketPath, environment: environmentWithNotify, arguments: ["--state-directory", state.path]
    )
    let messages = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    let extend = try #require(messages.first { $0.fields["EXTEND_TIMEOUT_USEC"] != nil }, "\(messages)")
    #expect(extend.fields["EXTEND_TIMEOUT_USEC"] == "30000000")
    #expect(messages.firstIndex { $0.fields["EXTEND_TIMEOUT_USEC"] != nil }! < messages.firstIndex { $0.fields["READY"] == "1" }!)
    #expect(await second.terminate() == 0)
  }

  @Test func sigtermSaysStoppingBeforeTheDrain() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path])
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    daemon.signal(SIGTERM)
    let stopping = await notify.receive(until: { $0.fields["STOPPING"] == "1" })
    #expect(stopping != nil)
    #expect(await daemon.terminate() == 0)
  }

  @Test func sighupSaysReloadingThenReady() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path])
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    daemon.signal(SIGHUP)
    let reload = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    let reloading = try #require(reload.firstIndex { $0.fields["RELOADING"] == "1" }, "RELOADING=1 comes first: \(reload)")
    #expect(reload[reloading].fields["MONOTONIC_USEC"].flatMap(UInt64.init) != nil)
    #expect(reload.last?.fields["STATUS"]?.hasPrefix("3 features") == true)
    #expect(await daemon.terminate() == 0, "SIGHUP reloads; it does not end the process")
  }

  @Test func aNotifySocketNobodyReadsNeitherStallsTheDaemonNorItsShutdown() async throws {
    // A manager that has stopped reading: its socket's queue is full before the daemon starts,
    // so READY=1 and every status line meet a full queue. A blocking sd_notify would hang the
    // status reporter there, and the shutdown that waits for it.
    let path = temporaryPath("notify")
    let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    try #require(fd >= 0)
    defer {
      close(fd)
      unlink(path)
    }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    try #require(bound == 0)
    let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    defer { close(sender) }
    var queued = 0
    while queued < 100_000 {
      let sent = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          sendto(sender, "STATUS=filler", 13, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
      }
      if sent < 0 { break }
      queued += 1
    }
    try #require(errno == EAGAIN, "the queue is full after \(queued) datagrams")

    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": path])
    let client = try daemon.connect()
    #expect(try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])["seq"] != nil)
    try await Task.sleep(for: .seconds(1.5))  // status lines come about once a second
    #expect(await daemon.terminate() == 0)
  }

  @Test func withoutNotifySocketNothingIsSent() async throws {
    // sd_notify is a no-op without NOTIFY_SOCKET; the daemon runs the same.
    let daemon = try await DaemonProcess()
    daemon.signal(SIGHUP)
    #expect(try daemon.connect().call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await daemon.terminate() == 0)
  }
}

/// A new path in /tmp, short enough for `sockaddr_un`; whoever binds it removes it.
func temporaryPath(_ name: String) -> String {
  "/tmp/switchyard-\(UUID().uuidString.prefix(8))-\(name)"
}
