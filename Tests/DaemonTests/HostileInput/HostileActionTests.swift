import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// What a client can put in an action, sent as raw bytes to `switchyardd` over its real socket:
/// every such call gets a clear error, the daemon keeps serving, and the state does not move.
@Suite(.serialized) struct HostileActionTests {
  /// Sends one raw `Send` call and returns its reply.
  private func send(_ action: String, on client: VarlinkTestClient) throws -> JSONValue {
    try client.write(Array(#"{"method":"io.switchyard.Store.Send","parameters":{"action":\#(action)}}"#.utf8) + [0])
    return try #require(try client.read(), "the daemon answered")
  }

  private func expectError(
    _ reply: JSONValue, _ name: String, path: String? = nil, _ comment: Comment? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(reply["error"] == .string(name), comment ?? "\(reply)", sourceLocation: sourceLocation)
    if let path {
      #expect(reply["parameters"]?["path"] == .string(path), "\(reply)", sourceLocation: sourceLocation)
    }
  }

  /// Two favorites to lose, should anything get through.
  private func daemonWithFavorites() async throws -> (DaemonProcess, VarlinkTestClient) {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    for _ in 0..<2 { try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
    try client.call("io.switchyard.Store.Send", ["action": ["primeModal": ["saveFavoritePrimeTapped": [:]]]])
    try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    try client.call("io.switchyard.Store.Send", ["action": ["primeModal": ["saveFavoritePrimeTapped": [:]]]])
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/favoritePrimes"])["state"] == [2, 3])
    // Each save reaches the activity feed through an effect, after its `Send` was answered:
    // the state is the tests' "before" only once both have.
    try await eventually {
      try client.call("io.switchyard.Store.Get", ["path": "/activityFeed"])["state"]?[1] != nil
    }
    return (daemon, client)
  }

  @Test("index sets that trapped Foundation's decoding are InvalidAction, and the daemon lives")
  func indexSetsThatTrapped() async throws {
    let (daemon, client) = try await daemonWithFavorites()
    let before = try client.call("io.switchyard.Store.Get")
    let reply = try send(#"{"favoritePrimes":{"deleteFavoritePrimes":{"indexes":[{"location":5,"length":-1}]}}}"#, on: client)
    expectError(reply, "io.switchyard.Store.InvalidAction", path: "favoritePrimes.deleteFavoritePrimes.indexes[0].length")
    let pastMax = try send(
      #"{"favoritePrimes":{"deleteFavoritePrimes":{"indexes":[{"location":9223372036854775807,"length":1}]}}}"#, on: client
    )
    expectError(pastMax, "io.switchyard.Store.InvalidAction", path: "favoritePrimes.deleteFavoritePrimes.indexes[0]")
    #expect(try daemon.connect().call("io.switchyard.Store.Get") == before, "the state did not move")
    #expect(await daemon.terminate() == 0, "the daemon was still running")
  }

  @Test("150 bytes cannot stand for ten million indexes")
  func amplification() async throws {
    let (daemon, client) = try await daemonWithFavorites()
    let started = ContinuousClock.now
    let reply = try send(#"{"favoritePrimes":{"deleteFavoritePrimes":{"indexes":[{"location":0,"length":10000000}]}}}"#, on: client)
    #expect(ContinuousClock.now - started < .seconds(1), "answered at once, not after seconds of work")
    expectError(reply, "io.switchyard.Store.InvalidAction", path: "favoritePrimes.deleteFavoritePrimes")
    #expect(reply["parameters"]?["reason"]?.description.contains("65536") == true, "\(reply)")
    // Within the bound, Foundation's form still works: it deletes the favorites it names.
    let small = try send(#"{"favoritePrimes":{"deleteFavoritePrimes":{"indexes":[{"location":0,"length":1}]}}}"#, on: client)
    #expect(small["parameters"]?["seq"] != nil, "\(small)")
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/favoritePrimes"])["state"] == [3])
    #expect(await daemon.terminate() == 0)
  }

  @Test("a number that does not fit an integer exactly is an error, never another number", arguments: [
    ("[1e-400]", "favoritePrimes.deleteFavoritePrimes[0]"),
    ("[-9223372036854775809]", "favoritePrimes.deleteFavoritePrimes[0]"),
    ("[9007199254740993.0]", "favoritePrimes.deleteFavoritePrimes[0]"),
    ("[0.0]", "favoritePrimes.deleteFavoritePrimes[0]"),
    ("[1, 1e19]", "favoritePrimes.deleteFavoritePrimes[1]"),
  ])
  func inexactNumbers(_ indexes: String, _ path: String) async throws {
    let (daemon, client) = try await daemonWithFavorites()
    let reply = try send(#"{"favoritePrimes":{"deleteFavoritePrimes":\#(indexes)}}"#, on: client)
    expectError(reply, "io.switchyard.Store.InvalidAction", path: path)
    #expect(try client.call("io.switchyard.Store.Get", ["path": "/primes/favoritePrimes"])["state"] == [2, 3])
    #expect(await daemon.terminate() == 0)
  }

  @Test("actions only effects send are refused from clients, naming the feature and the action", arguments: [
    (#"{"counter":{"nthPrimeResponse":{"n":5,"prime":7}}}"#, "primes", "counter.nthPrimeResponse"),
    (#"{"counter":{"restarted":{}}}"#, "primes", "counter.restarted"),
    (#"{"favoritePrimes":{"saved":{}}}"#, "primes", "favoritePrimes.saved"),
    (#"{"favoritePrimes":{"storageFailed":"x"}}"#, "primes", "favoritePrimes.storageFailed"),
    (#"{"primeModal":{"favoritesChanged":{"added":[1]}}}"#, "primes", "primeModal.favoritesChanged"),
    (#"{"favoritePrimes":{"favoritesChanged":{"removed":[2]}}}"#, "primes", "favoritePrimes.favoritesChanged"),
  ])
  func internalActions(_ action: String, _ feature: String, _ name: String) async throws {
    let (daemon, client) = try await daemonWithFavorites()
    let before = try client.call("io.switchyard.Store.Get")
    let reply = try send(action, on: client)
    expectError(reply, "io.switchyard.Store.InternalAction")
    #expect(reply["parameters"] == ["index": 0, "feature": .string(feature), "action": .string(name)])
    #expect(try client.call("io.switchyard.Store.Get") == before, "nothing was applied, the feed included")
    #expect(await daemon.terminate() == 0)
  }

  @Test("a loaded of forty thousand numbers is refused at once, and a batch with one internal action applies nothing")
  func internalActionsInBulk() async throws {
    let (daemon, client) = try await daemonWithFavorites()
    let before = try client.call("io.switchyard.Store.Get")
    let numbers = (0..<40_000).map(String.init).joined(separator: ",")
    let started = ContinuousClock.now
    let loaded = try send(#"{"favoritePrimes":{"loaded":[\#(numbers)]}}"#, on: client)
    // A bound against work that grows faster than the action (encoding it again for each case
    // looked at, say), not a benchmark: a debug build on a loaded machine takes over a second.
    #expect(ContinuousClock.now - started < .seconds(5))
    expectError(loaded, "io.switchyard.Store.InternalAction")
    let batch = try client.call(
      "io.switchyard.Store.Describe"
    )["features"]?[0]?["internalActions"]
    #expect(batch?.description.contains("favoritePrimes.loaded") == true, "Describe lists the internal actions")
    #expect(throws: VarlinkErrorReply(
      name: "io.switchyard.Store.InternalAction",
      parameters: ["index": 1, "feature": "primes", "action": "counter.nthPrimeResponse"]
    )) {
      try client.call(
        "io.switchyard.Store.SendBatch",
        ["actions": [["counter": ["incrTapped": [:]]], ["counter": ["nthPrimeResponse": ["n": 1, "prime": 2]]]]]
      )
    }
    #expect(try client.call("io.switchyard.Store.Get") == before)
    // What the effects send still arrives: the modal's favoritesChanged reaches the feed.
    try client.call("io.switchyard.Store.Send", ["action": ["primeModal": ["removeFavoritePrimeTapped": [:]]]])
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/activityFeed"])["state"]?[2] != nil }
    #expect(await daemon.terminate() == 0)
  }
}
