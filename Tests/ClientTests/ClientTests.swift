import Foundation
import PrimeTime
@_spi(Testing) import SwitchyardClient
import SwitchyardRuntime
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

/// `SwitchyardClient` against the real `switchyardd`, serving PrimeTime on a temporary socket.
@Suite(.serialized) struct ClientTests {
  typealias Client = SwitchyardClient<App.Action, App.State>

  @Test func countToAPrimeSaveItSeeTheFeedAndDeleteIt() async throws {
    let daemon = try await DaemonProcess()
    let client = Client(socketPath: daemon.socketPath)
    let recorder = Recorder(client.subscribe())
    try await eventually("the first snapshot") { !recorder.recorded.seqs.isEmpty }

    /// Waits until the subscriber has caught up with `get()`, then compares the two.
    func expectReplicaEqualsGet(_ comment: Comment) async throws -> App.State {
      let (seq, state) = try await client.get()
      let (_, json) = try await client.get(.root)
      try await eventually(comment) { recorder.seq >= seq }
      let recorded = recorder.recorded
      #expect(recorded.seqs.last == seq, comment)
      #expect(recorded.latest == state, comment)
      #expect(recorded.json == json, comment)
      #expect(recorded.error == nil, comment)
      return state
    }

    #expect(try await client.send(.counter(.incrTapped)) == 1)
    #expect(try await client.send(.counter(.incrTapped)) == 2)
    var state = try await expectReplicaEqualsGet("after counting to 2")
    #expect(state.primes.count == 2)

    try await client.send(.primeModal(.saveFavoritePrimeTapped))
    // The activity feed hears of it through the modal's effect, routed again: wait for it.
    try await eventually("the feed shows the saved prime") {
      try await !client.get().state.activityFeed.isEmpty
    }
    state = try await expectReplicaEqualsGet("after saving 2")
    #expect(state.primes.favoritePrimes == [2])
    #expect(state.activityFeed.map(\.kind) == [.addedFavoritePrime(2)])

    try await client.send(.favoritePrimes(.deleteFavoritePrimes([0])))
    try await eventually("the feed shows the removal") {
      try await client.get().state.activityFeed.count == 2
    }
    state = try await expectReplicaEqualsGet("after deleting it")
    #expect(state.primes.favoritePrimes == [])
    #expect(state.activityFeed.map(\.kind) == [.addedFavoritePrime(2), .removedFavoritePrime(2)])

    let seqs = recorder.recorded.seqs
    #expect(seqs == seqs.sorted() && Set(seqs).count == seqs.count, "the subscription only went forward")
    #expect(recorder.recorded.snapshots == 1, "one snapshot, then patches")

    // The typed reads of the other methods.
    let features = try await client.describe()
    #expect(features.map(\.name) == ["primes", "activityFeed", "signUp"])
    #expect(features.first { $0.name == "activityFeed" }?.readOnly == true)
    #expect(features.map(\.isolation) == ["process", "actor", "actor"], "PrimeTime's primes runs in a worker")
    #expect(features.first?.worker?.state == "running")
    // The cases come from the action enums' declarations, payloads and nested actions included.
    let counter = features.first?.cases?.first { $0.name == "counter" }
    #expect(counter?.payload.map(\.type) == ["Counter.Action"])
    #expect(counter?.payload.first?.cases?.map(\.description) == [
      "decrTapped", "incrTapped", "nthPrimeButtonTapped", "nthPrimeResponse(n: Int, prime: Int?) (internal)",
      "cancelNthPrimeTapped", "alertDismissButtonTapped", "restarted (internal)",
    ])
    #expect(features.last?.cases?.map(\.description) == ["emailChanged(String)", "passwordChanged(String)", "submitTapped"])
    let status = try await client.status()
    #expect(status.workers.map(\.feature) == ["primes"])
    #expect(status.workers.first?.pid == features.first?.worker?.pid)
    #expect(status.seq == (try await client.get()).seq)
    #expect(status.subscribers == 1)
    #expect(status.actions == 4)
    #expect(try await client.send(batch: [.counter(.incrTapped), .counter(.decrTapped)]) > status.seq)
    #expect(try await client.get("/primes/count", as: Int.self).state == 2)
    recorder.cancel()
    #expect(await daemon.terminate() == 0)
  }

  @Test func pipelinedCallsAreAnsweredInOrder() async throws {
    let daemon = try await DaemonProcess()
    let client = Client(socketPath: daemon.socketPath)
    try await client.connect()
    let seqs = try await withThrowingTaskGroup(of: UInt64.self) { group in
      for _ in 0..<50 { group.addTask { try await client.send(.counter(.incrTapped)) } }
      return try await group.reduce(into: []) { $0.append($1) }
    }
    #expect(Set(seqs) == Set(1...50))
    let (seq, count) = try await client.get("/primes/count")
    #expect(seq == 50)
    #expect(count == 50)
    #expect(await daemon.terminate() == 0)
  }

  @Test func errorsAreTyped() async throws {
    let daemon = try await DaemonProcess()
    let client = Client(socketPath: daemon.socketPath)
    await #expect(throws: SwitchyardError.pathNotFound(path: "/nope")) {
      try await client.get("/nope")
    }
    await #expect(throws: SwitchyardError.invalidAction(reason: "", path: "favoritePrimes.deleteFavoritePrimes[0]")) {
      do {
        try await client.call(
          method: "io.switchyard.Store.Send",
          parameters: ["action": ["favoritePrimes": ["deleteFavoritePrimes": ["x"]]]]
        )
      } catch let SwitchyardError.invalidAction(reason, path) {
        #expect(!reason.isEmpty)
        throw SwitchyardError.invalidAction(reason: "", path: path)
      }
    }
    await #expect(throws: SwitchyardError.methodNotFound(method: "io.switchyard.Store.Explode")) {
      try await client.call(method: "io.switchyard.Store.Explode")
    }
    await #expect(throws: SwitchyardError.interfaceNotFound(interface: "com.example.Nope")) {
      try await client.call(method: "com.example.Nope.Get")
    }
    await #expect(throws: SwitchyardError.invalidParameter(parameter: "action")) {
      try await client.call(method: "io.switchyard.Store.Send")
    }
    await #expect(throws: SwitchyardError.expectedMore) {
      try await client.call(method: "io.switchyard.Store.Subscribe")
    }
    await #expect(throws: SwitchyardError.internalAction(index: 0, feature: "primes", action: "favoritePrimes.loaded")) {
      try await client.send(.favoritePrimes(.loaded([2, 3])))
    }
    // A subscription the daemon refuses ends with its error.
    await #expect(throws: SwitchyardError.pathNotFound(path: "/nope")) {
      for try await _ in client.subscribe(path: "/nope", as: JSONValue.self) {}
    }
    // Errors leave the connection and the state alone.
    #expect(try await client.send(.counter(.incrTapped)) == 1)
    #expect(await daemon.terminate() == 0)

    // Nobody listens any more. The connection the client kept may not have seen the daemon's
    // end yet: a call written to it fails as closed, and the next one finds nobody to connect to.
    await #expect(throws: SwitchyardConnectionError.self) {
      try await client.get(.root)
    }
    await #expect {
      try await client.get(.root)
    } throws: { error in
      guard case let SwitchyardConnectionError.cannotConnect(path, _) = error else { return false }
      return path == daemon.socketPath
    }
    await #expect(throws: SwitchyardConnectionError.self) {
      for try await _ in client.subscribe() {}
    }
  }

  @Test func aSubscriptionToAPathIsOnlySentTheChangesThatTouchIt() async throws {
    let daemon = try await DaemonProcess()
    let client = Client(socketPath: daemon.socketPath)
    let recorder = Recorder(client.subscribe(path: "/primes/count", as: Int.self))
    try await eventually("the first snapshot") { !recorder.recorded.seqs.isEmpty }
    #expect(try await client.send(.counter(.incrTapped)) == 1)
    // Changes to other features are numbered too, and never reach this subscriber: its replica
    // takes the next change to its path whatever its number.
    #expect(try await client.send(.signUp(.emailChanged("ada@example.com"))) == 2)
    #expect(try await client.send(.counter(.incrTapped)) == 3)
    try await eventually("the subscriber saw 3") { recorder.seq == 3 }
    let recorded = recorder.recorded
    #expect(recorded.seqs == [0, 1, 3])
    #expect(recorded.latest == 2)
    #expect(recorded.error == nil)
    recorder.cancel()
    #expect(await daemon.terminate() == 0)
  }

  /// A client of `daemon` whose subscription to `/primes` is recorded, once its first snapshot
  /// has come.
  private func followPrimes(_ daemon: DaemonProcess, reconnectDelay: Duration) async throws -> (Client, Recorder<Primes.State>) {
    var configuration = Client.Configuration()
    configuration.reconnectDelay = reconnectDelay
    let client = Client(socketPath: daemon.socketPath, configuration: configuration)
    let recorder = Recorder(client.subscribe(path: "/primes", as: Primes.State.self))
    try await eventually("the first snapshot") { !recorder.recorded.seqs.isEmpty }
    return (client, recorder)
  }

  @Test func aSubscriptionResumesAfterItsConnectionDrops() async throws {
    let daemon = try await DaemonProcess()
    // Long enough that the sends below surely happen while the subscription is disconnected.
    let (client, recorder) = try await self.followPrimes(daemon, reconnectDelay: .milliseconds(500))
    for _ in 0..<3 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber saw 3") { recorder.seq == 3 }
    #expect(client.subscriptionConnectionsOpened == 1)

    // Drop the subscription's connection: the daemon sees its subscriber hang up.
    client.dropSubscriptionConnections()
    for _ in 0..<2 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber resumed and saw 5") { recorder.seq == 5 }
    let recorded = recorder.recorded
    #expect(client.subscriptionConnectionsOpened >= 2, "it reconnected")
    #expect(recorded.seqs == [0, 1, 2, 3, 4, 5], "every change once, in order")
    #expect(recorded.snapshots == 1, "resumed with since: the daemon replayed 4 and 5 instead of a snapshot")
    #expect(recorded.latest == (try await client.get("/primes", as: Primes.State.self)).state)
    #expect(recorded.latest?.count == 5)
    #expect(recorded.error == nil)
    try await eventually("one subscriber on the daemon") { try await client.status().subscribers == 1 }
    recorder.cancel()
    try await eventually("the subscription's connection closed") { try await client.status().subscribers == 0 }
    #expect(await daemon.terminate() == 0)
  }

  /// A program that shows its user the connection's state hears of a drop once, and of the
  /// reconnection before the changes it missed.
  @Test func aSubscriptionTellsItsConfigurationWhenItReconnects() async throws {
    let daemon = try await DaemonProcess()
    let told = Mutex<[(ReconnectionEvent, seenSeq: UInt64)]>([])
    let recorder = Mutex<Recorder<Primes.State>?>(nil)
    var configuration = Client.Configuration()
    configuration.reconnectDelay = .milliseconds(500)
    configuration.onReconnection = { event in
      let seen = recorder.withLock { $0 }?.seq ?? 0
      told.withLock { $0.append((event, seen)) }
    }
    let client = Client(socketPath: daemon.socketPath, configuration: configuration)
    recorder.withLock { $0 = Recorder(client.subscribe(path: "/primes", as: Primes.State.self)) }
    try await client.send(.counter(.incrTapped))
    try await eventually("the subscriber saw 1") { recorder.withLock { $0 }?.seq == 1 }

    client.dropSubscriptionConnections()
    try await client.send(.counter(.incrTapped))
    try await eventually("the subscriber resumed and saw 2") { recorder.withLock { $0 }?.seq == 2 }
    let events = told.withLock { $0 }
    #expect(events.map(\.0) == [.reconnecting(path: "/primes", reason: "the connection closed"), .reconnected(path: "/primes", seq: 2)])
    #expect(events.map(\.seenSeq) == [1, 1], "told before the change it missed")
    recorder.withLock { $0 }?.cancel()
    #expect(await daemon.terminate() == 0)
  }

  @Test func aDaemonRestartedWithoutItsHistoryStartsTheSubscriptionOverFromASnapshot() async throws {
    let daemon = try await DaemonProcess()
    let (client, recorder) = try await self.followPrimes(daemon, reconnectDelay: .milliseconds(50))
    for _ in 0..<2 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber saw 2") { recorder.seq == 2 }
    #expect(await daemon.terminate() == 0)

    // The new run's seq 1 is another change than the old run's: the subscription resumes with
    // the old history's id, and the daemon answers with a snapshot of its own history.
    let restarted = try await DaemonProcess(socketPath: daemon.socketPath)
    try await eventually("the new run's snapshot") { recorder.recorded.snapshots == 2 }
    #expect(try await client.send(.counter(.incrTapped)) == 1)
    try await eventually("the subscriber follows the new run") { recorder.recorded.seqs.count == 5 }
    let recorded = recorder.recorded
    #expect(recorded.seqs == [0, 1, 2, 0, 1])
    #expect(recorded.latest?.count == 1, "the replica is the new run's state, not the old run's with its patches")
    #expect(recorded.error == nil)
    recorder.cancel()
    #expect(await restarted.terminate() == 0)
  }

  /// With a state directory the history outlives the daemon: a replica rides through a restart
  /// with the changes it missed, and no second snapshot.
  @Test func aReplicaRidesThroughARestartOfADaemonWithAJournal() async throws {
    let state = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-state-\(UUID().uuidString.prefix(8))").path
    defer { try? FileManager.default.removeItem(atPath: state) }
    let daemon = try await DaemonProcess(arguments: ["--state-directory", state])
    let (client, recorder) = try await self.followPrimes(daemon, reconnectDelay: .milliseconds(50))
    for _ in 0..<2 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber saw 2") { recorder.seq == 2 }
    daemon.signal(SIGKILL)
    _ = await daemon.process.exit()

    let restarted = try await DaemonProcess(socketPath: daemon.socketPath, arguments: ["--state-directory", state])
    #expect(try await client.send(.counter(.incrTapped)) == 3, "the numbers go on")
    try await eventually("the subscriber follows") { recorder.seq == 3 }
    let recorded = recorder.recorded
    #expect(recorded.seqs == [0, 1, 2, 3])
    #expect(recorded.snapshots == 1, "resumed with since, not started over")
    #expect(recorded.latest?.count == 3)
    #expect(recorded.error == nil)
    recorder.cancel()
    #expect(await restarted.terminate() == 0)
  }
}
