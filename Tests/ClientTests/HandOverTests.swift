import Foundation
import PrimeTime
@_spi(Testing) import SwitchyardClient
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `systemctl restart` with the file descriptor store on, systemd's part played by the test: the
/// daemon hands its connections to the next process, and the client library notices nothing — a
/// subscription goes on without a snapshot, pipelined sends are all answered.
@Suite(.serialized) struct HandOverTests {
  typealias Client = SwitchyardClient<App.Action, App.State>

  @Test func aSubscriptionAndPipelinedSendsGoOnAcrossARestartWithNoErrorAndNoSnapshot() async throws {
    let notify = try NotifySocket(path: FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString.prefix(8))").path)
    let state = TemporaryStateDirectory()
    let environment = ["NOTIFY_SOCKET": notify.path, "SWITCHYARD_FDSTORE": "16", "SWITCHYARD_STATE_DIRECTORY": state.path]
    // systemd's part reads the notification socket all along, as systemd does: left unread, its
    // queue fills with the daemon's STATUS= lines on a slow machine, and the state finds no room.
    let messages = Task { await notify.receive(until: { $0.fields["FDNAME"] == "handover-state" }, timeout: .seconds(120)) ?? [] }
    let first = try await DaemonProcess(environment: environment)
    let store = StoredByTheManager()
    let client = Client(socketPath: first.socketPath)
    let recorder = Recorder(client.subscribe(path: "/primes/count", as: Int.self))
    try await eventually("the first snapshot") { !recorder.recorded.seqs.isEmpty }
    #expect(try await client.send(.counter(.incrTapped)) == 1)

    let sends = Task {
      try await withThrowingTaskGroup(of: UInt64.self) { group in
        for _ in 0..<1000 { group.addTask { try await client.send(.counter(.incrTapped)) } }
        return try await group.reduce(into: [UInt64]()) { $0.append($1) }
      }
    }
    try await Task.sleep(for: .milliseconds(5))
    #expect(await first.terminate() == 0)
    // Sent before the exit: everything up to the state is in the socket already.
    await store.take(await messages.value)
    let (names, fds) = store.passed
    #expect(names.contains("handover-state"), "the state is stored beside the connections")
    let second = try await DaemonProcess(
      socketPath: first.socketPath,
      environment: environment.merging(["LISTEN_FDS": "\(fds.count)", "LISTEN_FDNAMES": names.joined(separator: ":")]) { $1 },
      launcher: ["/bin/sh", "-c", #"LISTEN_PID=$$ exec "$0" "$@""#],
      inheriting: fds
    )

    let seqs = try await sends.value
    #expect(Set(seqs).count == 1000, "every pipelined send answered once, by one process or the other")
    try await eventually("the subscriber saw every change") { recorder.seq == 1001 }
    let recorded = recorder.recorded
    #expect(recorded.snapshots == 1, "no snapshot after the first")
    #expect(recorded.seqs == Array(0...1001), "contiguous, no duplicate")
    #expect(recorded.error == nil)
    #expect(second.log.contains("took over the connections of the process before"))
    #expect(await second.terminate() == 0)
    store.closeAll()
  }
}

/// What systemd keeps for the service: the descriptors stored under each name, until removed.
private final class StoredByTheManager: @unchecked Sendable {
  private var stored: [String: Int32] = [:]

  func take(_ messages: [NotifySocket.Message]) async {
    for message in messages {
      let fields = message.fields
      let name = fields["FDNAME"] ?? "stored"
      if fields["FDSTORE"] == "1", let fd = message.descriptors.first {
        if let previous = self.stored[name] { close(previous) }
        self.stored[name] = fd
        for extra in message.descriptors.dropFirst() { close(extra) }
      } else {
        for fd in message.descriptors { close(fd) }
        if fields["FDSTOREREMOVE"] == "1", let fd = self.stored.removeValue(forKey: name) { close(fd) }
      }
    }
  }

  /// The names and descriptors, in the order they are passed (`LISTEN_FDNAMES`).
  var passed: ([String], [Int32]) {
    let names = self.stored.keys.sorted()
    return (names, names.map { self.stored[$0]! })
  }

  func closeAll() {
    for fd in self.stored.values { close(fd) }
    self.stored = [:]
  }
}
