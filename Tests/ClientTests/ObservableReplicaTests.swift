import Foundation
import IdentifiedCollections
import Observation
import SwitchyardClient
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

/// A model built with the Observation module, on Linux, that shows one flag of the daemon's
/// state: it reads the flag through an `ObservableReplica`, and Observation sees the model
/// change when the daemon's state does.
@MainActor @Observable
final class BetaBanner {
  let beta: ObservableReplica<FixtureFlags.Flag?>
  /// Stored in the model itself, to show a model's own state and the replica's side by side.
  var dismissed = false

  init(client: FixtureFlags.Client) {
    self.beta = client.replica(\.flags[id: "beta"])
  }

  var isShown: Bool { !self.dismissed && self.beta.value??.isOn == true }
}

@Suite(.serialized) struct ObservableReplicaTests {
  typealias Flag = FixtureFlags.Flag

  @Test @MainActor func anObservableModelSeesTheDaemonsChanges() async throws {
    let daemon = try await DaemonProcess(executable: "switchyard-fixture")
    let client = FixtureFlags.Client(socketPath: daemon.socketPath)
    let banner = BetaBanner(client: client)
    #expect(banner.beta.value == nil && banner.beta.seq == nil, "nothing before it runs")
    let follower = Task { await banner.beta.run() }
    try await eventually("the first snapshot") { banner.beta.seq == 0 }
    #expect(banner.beta.value == .some(nil), "no flag beta yet")

    // withObservationTracking: a change to what the model read is announced once.
    let changed = Mutex(0)
    withObservationTracking {
      _ = banner.isShown
    } onChange: {
      changed.withLock { $0 += 1 }
    }
    let at = Date(timeIntervalSince1970: 1_714_564_800.5)
    try await client.send(.flags(.add(Flag(id: "beta", isOn: false, changed: at))))
    try await eventually("the model was told") { changed.withLock { $0 } == 1 }
    try await eventually("the replica has beta") { banner.beta.value == .some(Flag(id: "beta", isOn: false, changed: at)) }
    #expect(!banner.isShown)

    // Observations: the values of the model's computed property, as the daemon changes.
    guard #available(macOS 26, *) else { return }
    let shown = Mutex<[Bool]>([])
    let watcher = Task { @MainActor in
      for await isShown in Observations({ banner.isShown }) {
        shown.withLock { $0.append(isShown) }
      }
    }
    try await eventually("the first value") { shown.withLock { $0 } == [false] }
    try await client.send(.flags(.set(id: "beta", isOn: true, at: at)))
    try await eventually("shown") { shown.withLock { $0 } == [false, true] }
    banner.dismissed = true
    try await eventually("dismissed in the model") { shown.withLock { $0 } == [false, true, false] }
    banner.dismissed = false
    try await client.send(.flags(.remove("beta")))
    try await eventually("beta went") { banner.beta.value == .some(nil) }
    #expect(!banner.isShown)
    #expect(banner.beta.failure == nil)
    #expect(banner.beta.path == #"/flags[id="beta"]"#)

    watcher.cancel()
    follower.cancel()
    await follower.value
    #expect(banner.beta.failure == nil, "cancelled, not failed")
    #expect(await daemon.terminate() == 0)
  }

  @Test func aPathTheDaemonRefusesIsTheReplicasFailure() async throws {
    let daemon = try await DaemonProcess(executable: "switchyard-fixture")
    let client = FixtureFlags.Client(socketPath: daemon.socketPath)
    let replica = client.replica(path: "/nope", as: Int.self)
    await replica.run()
    #expect(replica.failure as? SwitchyardError == .pathNotFound(path: "/nope"))
    #expect(replica.value == nil)
    #expect(await daemon.terminate() == 0)
  }
}
