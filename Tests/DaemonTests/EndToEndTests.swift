import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// `switchyardd` serving PrimeTime, driven over its real Unix socket.
@Suite(.serialized) struct EndToEndTests {
  @Test func theServiceDescribesItself() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    let info = try client.call("org.varlink.service.GetInfo")
    #expect(info["interfaces"] == ["org.varlink.service", "io.switchyard.Store"])
    let description = try client.call("org.varlink.service.GetInterfaceDescription", ["interface": "io.switchyard.Store"])
    #expect(description["description"]?.description.contains("interface io.switchyard.Store") == true)
    #expect(throws: VarlinkErrorReply(name: "org.varlink.service.InterfaceNotFound", parameters: ["interface": "io.nope"])) {
      try client.call("org.varlink.service.GetInterfaceDescription", ["interface": "io.nope"])
    }
    let features = try client.call("io.switchyard.Store.Describe")["features"]
    #expect(features?[0]?["name"] == "primes")
    #expect(features?[1]?["readOnly"] == true)
    // Derived from the action enums: favoritePrimes(FavoritePrimes.Action) and its
    // deleteFavoritePrimes(IndexSet), as a client reads them.
    let favoritePrimes = features?[0]?["cases"]?[2]
    #expect(favoritePrimes?["name"] == "favoritePrimes")
    #expect(favoritePrimes?["payload"]?[0]?["type"] == "FavoritePrimes.Action")
    #expect(
      favoritePrimes?["payload"]?[0]?["cases"]?[0] == ["name": "deleteFavoritePrimes", "internal": false, "payload": [["type": "IndexSet"]]]
    )
    #expect(features?[2]?["cases"]?[0] == ["name": "emailChanged", "internal": false, "payload": [["type": "String"]]])
    #expect(await daemon.terminate() == 0)
  }

  @Test func countToAPrimeSaveItAndDeleteIt() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", [:], more: true)
    var replica = Replica()
    try replica.apply(try #require(try subscriber.read()))
    #expect(replica.snapshots == 1)

    func expectReplicaEqualsGet(_ comment: Comment) throws {
      for _ in 0..<50 {
        let current = try client.call("io.switchyard.Store.Get")
        guard case let .int(seq)? = current["seq"] else { throw UnexpectedReply(reply: current) }
        try replica.advance(to: UInt64(seq), from: subscriber)
        if replica.seq == UInt64(seq) {
          #expect(replica.state == current["state"], comment)
          return
        }
      }
      Issue.record("the replica never caught up: \(comment)")
    }

    try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    try expectReplicaEqualsGet("after counting to 2")
    #expect(replica.state["primes"]?["count"] == 2)

    try client.call("io.switchyard.Store.Send", ["action": ["primeModal": ["saveFavoritePrimeTapped": [:]]]])
    // The feed hears of it through the modal's effect, routed again to its read-only route.
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/activityFeed"])["state"]?[0] != nil }
    try expectReplicaEqualsGet("after saving 2")
    #expect(replica.state["primes"]?["favoritePrimes"] == [2])
    #expect(replica.state["activityFeed"]?[0]?["kind"] == ["addedFavoritePrime": 2])

    try client.call("io.switchyard.Store.Send", ["action": ["favoritePrimes": ["deleteFavoritePrimes": [0]]]])
    try await eventually { try client.call("io.switchyard.Store.Get", ["path": "/activityFeed"])["state"]?[1] != nil }
    try expectReplicaEqualsGet("after deleting it")
    #expect(replica.state["primes"]?["favoritePrimes"] == [])
    #expect(replica.state["activityFeed"]?[1]?["kind"] == ["removedFavoritePrime": 2])
    #expect(await daemon.terminate() == 0)
  }

  @Test func badInputGetsAnErrorAndChangesNothing() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    let other = try daemon.connect()
    let before = try client.call("io.switchyard.Store.Get")

    func expectError(_ name: String, _ call: () throws -> JSONValue) {
      do {
        _ = try call()
        Issue.record("expected \(name)")
      } catch let error as VarlinkErrorReply {
        #expect(error.name == name)
      } catch {
        Issue.record("expected \(name), got \(error)")
      }
    }

    try client.write(Array(#"{"method": "io.switchyard.Store.Get", "#.utf8) + [0])
    #expect(try client.read()?["error"] == "io.switchyard.Store.InvalidRequest")
    try client.write(Array(#"[1, 2]"#.utf8) + [0])
    #expect(try client.read()?["error"] == "io.switchyard.Store.InvalidRequest")
    expectError("org.varlink.service.MethodNotFound") { try client.call("io.switchyard.Store.Explode") }
    expectError("org.varlink.service.InterfaceNotFound") { try client.call("com.example.Nope") }
    expectError("org.varlink.service.InvalidParameter") { try client.call("io.switchyard.Store.Send") }
    expectError("org.varlink.service.InvalidParameter") { try client.call("io.switchyard.Store.Get", ["path": 5]) }
    expectError("org.varlink.service.InvalidParameter") { try client.call("io.switchyard.Store.Get", ["path": "no-slash"]) }
    expectError("io.switchyard.Store.PathNotFound") { try client.call("io.switchyard.Store.Get", ["path": "/nope"]) }
    expectError("io.switchyard.Store.InvalidAction") { try client.call("io.switchyard.Store.Send", ["action": "incr"]) }
    expectError("org.varlink.service.ExpectedMore") { try client.call("io.switchyard.Store.Subscribe") }
    do {
      try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": ["by": "x"]], "extra": 1]])
      Issue.record("expected InvalidAction")
    } catch let error as VarlinkErrorReply {
      #expect(error.name == "io.switchyard.Store.InvalidAction")
      #expect(error.parameters["path"] == "counter.incrTapped.by")
    }
    do {
      try client.call("io.switchyard.Store.Send", ["action": ["favoritePrimes": ["deleteFavoritePrimes": ["x"]]]])
      Issue.record("expected InvalidAction")
    } catch let error as VarlinkErrorReply {
      #expect(error.parameters["path"] == "favoritePrimes.deleteFavoritePrimes[0]")
    }
    // The connection survived all of that.
    #expect(try client.call("io.switchyard.Store.Get") == before)

    // A message over the limit cannot be skipped: that connection is closed, no other.
    let flooder = try daemon.connect()
    try? flooder.write([UInt8](repeating: UInt8(ascii: "a"), count: (1 << 20) + 4_096))
    // Closed: the end of the stream, or a reset when the daemon closed it with the rest unread
    // (it stops reading at the limit, however soon that comes).
    do {
      #expect(try flooder.read() == nil)
    } catch {
      #expect((error as NSError).code == Int(ECONNRESET), "\(error)")
    }
    #expect(try other.call("io.switchyard.Store.Get") == before)
    #expect(await daemon.terminate() == 0)
  }

  /// In a worker process a `Send` is answered when the worker's change comes back; in an actor
  /// on the loop that read it, as it is read (reduced while it was routed). Either way the
  /// replies come in call order, a refused action's error among them.
  @Test(arguments: ["process", "actor"])
  func pipelinedCallsAreAnsweredInOrderAndOnewayCallsNotAtAll(isolation: String) async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_FEATURES_PRIMES_ISOLATION": isolation])
    let client = try daemon.connect()
    let incr: JSONValue = ["action": ["counter": ["incrTapped": [:]]]]
    var bytes: [UInt8] = []
    for call: JSONValue in [
      ["method": "io.switchyard.Store.Send", "parameters": incr],
      ["method": "io.switchyard.Store.Get", "parameters": ["path": "/primes/count"]],
      ["method": "io.switchyard.Store.Send", "parameters": incr, "oneway": true],
      ["method": "io.switchyard.Store.Send", "parameters": ["action": ["counter": ["restarted": [:]]]]],
      ["method": "io.switchyard.Store.Send", "parameters": incr],
      ["method": "io.switchyard.Store.Get", "parameters": ["path": "/primes/count"]],
    ] {
      bytes += call.serializedBytes() + [0]
    }
    try client.write(bytes)
    #expect(try client.read()?["parameters"]?["seq"] == 1)
    #expect(try client.read()?["parameters"]?["state"] == 1)
    #expect(try client.read()?["error"] == "io.switchyard.Store.InternalAction")
    #expect(try client.read()?["parameters"]?["seq"] == 3)
    #expect(try client.read()?["parameters"]?["state"] == 3)
    #expect(await daemon.terminate() == 0)
  }

  @Test func aSubscriberResumesFromTheHistory() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    var replica = Replica()
    do {
      let first = try daemon.connect()
      try first.send("io.switchyard.Store.Subscribe", [:], more: true)
      try replica.apply(try #require(try first.read()))
    }
    for _ in 0..<3 { try client.call("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
    let resumed = try daemon.connect()
    let history = try #require(replica.history)
    try resumed.send("io.switchyard.Store.Subscribe", ["since": .int(Int64(replica.seq)), "history": history], more: true)
    try replica.advance(to: 3, from: resumed)
    #expect(replica.snapshots == 1, "the changes were replayed, not replaced by a snapshot")
    #expect(replica.state == (try client.call("io.switchyard.Store.Get"))["state"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func aStalledSubscriberGetsASnapshotInsteadOfAnEndlessQueue() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_SUBSCRIPTIONS_QUEUE_LIMIT": "8"])
    let client = try daemon.connect()
    let stalled = try daemon.connect()
    let keepingUp = try daemon.connect()
    var stalledReplica = Replica()
    var keepingUpReplica = Replica()
    try stalled.send("io.switchyard.Store.Subscribe", [:], more: true)
    try keepingUp.send("io.switchyard.Store.Subscribe", [:], more: true)
    try stalledReplica.apply(try #require(try stalled.read()))
    try keepingUpReplica.apply(try #require(try keepingUp.read()))
    let batch: JSONValue = .array(Array(repeating: ["counter": ["incrTapped": [:]]], count: 500))
    for _ in 0..<10 {
      try client.call("io.switchyard.Store.SendBatch", ["actions": batch])
      try keepingUpReplica.advance(to: try seq(of: client.call("io.switchyard.Store.Get")), from: keepingUp)
    }
    let final = try client.call("io.switchyard.Store.Get")
    guard case let .int(seq)? = final["seq"] else { throw UnexpectedReply(reply: final) }
    #expect(seq == 5_000)
    try stalledReplica.advance(to: UInt64(seq), from: stalled)
    #expect(stalledReplica.snapshots > 1, "the stalled subscriber's queue was replaced by a snapshot")
    #expect(stalledReplica.state == final["state"])
    #expect(keepingUpReplica.state == final["state"])
    #expect(await daemon.terminate() == 0)
  }

  @Test func twoHundredClientsSendAndSubscribeAtOnce() async throws {
    let daemon = try await DaemonProcess()
    let clients = try (0..<200).map { _ in try daemon.connect() }
    let subscribers = Array(clients.prefix(20))
    let senders = Array(clients.dropFirst(20))
    var replicas = Array(repeating: Replica(), count: subscribers.count)
    for (index, subscriber) in subscribers.enumerated() {
      try subscriber.send("io.switchyard.Store.Subscribe", ["path": "/primes"], more: true)
      try replicas[index].apply(try #require(try subscriber.read()))
    }
    for _ in 0..<5 {
      for sender in senders { try sender.send("io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]]) }
      for sender in senders { #expect(try sender.read()?["parameters"]?["seq"] != nil) }
    }
    let final = try senders[0].call("io.switchyard.Store.Get", ["path": "/primes"])
    #expect(final["state"]?["count"] == .int(Int64(senders.count * 5)))
    for index in subscribers.indices {
      try replicas[index].advance(to: UInt64(senders.count * 5), from: subscribers[index])
      #expect(replicas[index].state == final["state"])
    }
    #expect(await daemon.terminate() == 0)
  }

  @Test func aSubscriberThatHangsUpIsReleasedPromptly() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    do {
      let subscriber = try daemon.connect()
      try subscriber.send("io.switchyard.Store.Subscribe", [:], more: true)
      _ = try subscriber.read()
      #expect(try client.call("io.switchyard.Store.Status")["subscribers"] == 1)
    }
    // Nothing changes meanwhile: the daemon notices the hang-up itself, not on a failed write.
    try await eventually { try client.call("io.switchyard.Store.Status")["subscribers"] == 0 }
    #expect(await daemon.terminate() == 0)
  }

  @Test func connectionsOverTheLimitAreToldWhyAndClosedAndTheOthersGoOn() async throws {
    let daemon = try await DaemonProcess(environment: ["SWITCHYARD_LIMITS_MAX_CONNECTIONS": "3"])
    // The daemon's own readiness probe connected and left; wait until it is counted out.
    let first = try daemon.connect()
    try await eventually { try first.call("io.switchyard.Store.Status")["connections"] == 1 }
    let second = try daemon.connect()
    let third = try daemon.connect()
    // Connecting returns as soon as the kernel queues the connection; the daemon counts it a moment later.
    try await eventually { try third.call("io.switchyard.Store.Status")["connections"] == 3 }
    let fourth = try daemon.connect()
    #expect(try fourth.read() == ["error": "io.switchyard.Store.TooManyConnections", "parameters": ["limit": 3]])
    #expect(try fourth.read() == nil, "then the fourth connection is closed")
    #expect(try second.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    #expect(await daemon.terminate() == 0)
  }

  @Test func sigtermFinishesTheCallsInFlight() async throws {
    let daemon = try await DaemonProcess()
    let client = try daemon.connect()
    let observer = try daemon.connect()
    let batch: JSONValue = .array(Array(repeating: ["counter": ["incrTapped": [:]]], count: 20_000))
    try client.send("io.switchyard.Store.SendBatch", ["actions": batch])
    // Once the first actions are reduced, the batch has been read and routed: it is in flight.
    try await eventually(within: .seconds(30)) { try seq(of: observer.call("io.switchyard.Store.Get")) > 0 }
    let status = await daemon.terminate()
    let reply = try client.read()
    #expect(
      reply?["parameters"]?["seq"] == 20_000,
      "the batch in flight was answered before the daemon exited; it answered \(String(describing: reply)):\n\(daemon.log)"
    )
    #expect(status == 0)
  }

  @Test func sigtermEndsSubscriptionsAndExitsCleanly() async throws {
    let daemon = try await DaemonProcess()
    let subscriber = try daemon.connect()
    try subscriber.send("io.switchyard.Store.Subscribe", [:], more: true)
    _ = try subscriber.read()
    #expect(await daemon.terminate() == 0)
    #expect(try subscriber.read()?["error"] == "io.switchyard.Store.ShuttingDown")
    #expect(!FileManager.default.fileExists(atPath: daemon.socketPath))
  }
}

/// Polls `condition` for up to `timeout`.
func eventually(within timeout: Duration = .seconds(5), _ condition: () throws -> Bool) async throws {
  let deadline = ContinuousClock.now + timeout
  while try !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("the condition never held")
      return
    }
    try await Task.sleep(for: .milliseconds(10))
  }
}
