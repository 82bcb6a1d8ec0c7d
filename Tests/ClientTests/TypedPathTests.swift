import Foundation
import IdentifiedCollections
import PrimeTime
@_spi(Testing) import SwitchyardClient
import SwitchyardTestSupport
import Testing

/// Typed paths and dates through the real daemon: `switchyard-fixture`'s flags, an
/// `IdentifiedArray` addressed by id, and PrimeTime.
@Suite(.serialized) struct TypedPathTests {
  typealias Flag = FixtureFlags.Flag

  /// A date with a fraction a Double holds only approximately: it must come back equal.
  static let noon = Date(timeIntervalSince1970: 1_714_564_800.123_456_7)

  @Test func aSubscriptionByIdFollowsTheFlagWhileOthersComeAndGo() async throws {
    let daemon = try await DaemonProcess(executable: "switchyard-fixture")
    let client = FixtureFlags.Client(socketPath: daemon.socketPath)
    let recorder = Recorder(client.subscribe(\.flags[id: "beta"]))
    try await eventually("the first value") { recorder.recorded.seqs.count == 1 }
    #expect(recorder.recorded.latest == .some(nil), "no beta yet")

    let alpha = Flag(id: "alpha", isOn: false, changed: Self.noon)
    let beta = Flag(id: "beta", isOn: false, changed: Self.noon)
    try await client.send(.flags(.add(alpha)))
    try await client.send(.flags(.add(beta)))
    try await eventually("beta came") { recorder.recorded.seqs.count == 2 }
    // Others come before it, and change: it moves from index 1 to 2, and is not told.
    try await client.send(.flags(.insertFirst(Flag(id: "gamma", isOn: true, changed: Self.noon))))
    try await client.send(.flags(.set(id: "alpha", isOn: true, at: Self.noon)))
    let later = Self.noon.addingTimeInterval(0.000_000_3)
    let seq = try await client.send(.flags(.set(id: "beta", isOn: true, at: later)))
    try await eventually("beta was set") { recorder.recorded.seqs.count == 3 }
    try await client.send(.flags(.remove("beta")))
    try await eventually("beta went") { recorder.recorded.seqs.count == 4 }

    let recorded = recorder.recorded
    var on = beta
    on.isOn = true
    on.changed = later
    #expect(recorded.values == [nil, beta, on, nil])
    #expect(recorded.seqs == [0, 2, seq, seq + 1], "only the changes to beta, with their numbers")
    #expect(recorded.json.value(at: "/0/id") == "gamma" && recorded.json.value(at: "/1/id") == "alpha", "the replica holds the whole array")
    #expect(recorded.error == nil)
    recorder.cancel()
    #expect(await daemon.terminate() == 0)
  }

  /// In an actor, and in a worker process: the dates cross the worker link as text too.
  @Test(arguments: ["actor", "process"])
  func getByIdAndDatesAsTheDaemonKeepsThem(isolation: String) async throws {
    let daemon = try await DaemonProcess(
      environment: ["SWITCHYARD_FEATURES_FLAGS_ISOLATION": isolation], executable: "switchyard-fixture"
    )
    let client = FixtureFlags.Client(socketPath: daemon.socketPath)
    try await client.send(batch: [
      .flags(.add(Flag(id: "alpha", isOn: false, changed: Self.noon))),
      .flags(.insertFirst(Flag(id: "beta", isOn: true, changed: Self.noon))),
    ])
    #expect(try await client.get(\.flags[id: "alpha"]).state == Flag(id: "alpha", isOn: false, changed: Self.noon))
    #expect(try await client.get(\.flags[id: "beta"].isOn).state == true)
    #expect(try await client.get(\.flags[id: "nope"].isOn).state == nil)
    #expect(try await client.get(\.flags[1].id).state == "alpha")
    // On the wire, and in the daemon's state, a date is RFC 3339 text, exact to the Double.
    #expect(try await client.get("/flags/1/changed").state == "2024-05-01T12:00:00.1234567Z")
    #expect(try await client.get(\.flags).state.map(\.changed) == [Self.noon, Self.noon])

    // Changed in place: the patch carries the new date, from the client to the reducer and back.
    let later = Self.noon.addingTimeInterval(86_400.000_000_1)
    try await client.send(.flags(.set(id: "alpha", isOn: true, at: later)))
    #expect(try await client.get(\.flags[id: "alpha"]).state == Flag(id: "alpha", isOn: true, changed: later))

    let flags = try #require(try await client.describe().first { $0.name == "flags" })
    #expect(flags.isolation == isolation)
    #expect(flags.dates == .init(state: ["/*/changed"], action: ["/add/changed", "/insertFirst/changed", "/set/at"]))
    #expect(await daemon.terminate() == 0)
  }

  @Test func primeTimeThroughTypedPaths() async throws {
    let daemon = try await DaemonProcess()
    let client = SwitchyardClient<App.Action, App.State>(socketPath: daemon.socketPath)
    let counts = Recorder(client.subscribe(\.primes.count))
    try await eventually("the first count") { counts.recorded.seqs.count == 1 }
    try await client.send(batch: [.counter(.incrTapped), .counter(.incrTapped), .primeModal(.saveFavoritePrimeTapped)])
    try await eventually("counted to 2") { counts.recorded.values == [0, 1, 2] }
    try await eventually("the feed shows the saved prime") { try await !client.get(\.activityFeed).state.isEmpty }
    let entry = try await client.get(\.activityFeed[0]).state
    #expect(entry.kind == .addedFavoritePrime(2))
    #expect(abs(entry.timestamp.timeIntervalSinceNow) < 60, "the daemon's now, read back from RFC 3339 text")
    let features = try await client.describe()
    #expect(features.map(\.dates) == [.init(state: [], action: []), .init(state: ["/*/timestamp"], action: []), .init(state: [], action: [])])
    counts.cancel()
    #expect(await daemon.terminate() == 0)
  }
}
