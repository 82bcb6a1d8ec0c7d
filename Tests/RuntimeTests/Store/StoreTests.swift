import Foundation
import CasePaths
import ConcurrencyExtras
import Testing

@testable import SwitchyardRuntime

@Suite struct StoreTests {
  struct Log: Reducer {
    struct State: Equatable, Codable, Sendable { var entries: [Int] = []; var echoes = 0 }
    @CasePathable enum Action: Equatable, Sendable { case append(Int), echo(Int), echoed }
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .append(n):
        state.entries.append(n)
        return .none
      case let .echo(n):
        state.entries.append(n)
        return .send(.echoed)
      case .echoed:
        state.echoes += 1
        return .none
      }
    }
  }

  @Test func sendReturnsOnceTheActionAndItsImmediateEffectsAreReduced() async {
    let store = Store(initialState: Log.State()) { Log() }
    await store.send(.echo(7))
    #expect(await store.state == Log.State(entries: [7], echoes: 1))
  }

  @Test func enqueueOrderIsReductionOrder() async {
    let store = Store(initialState: Log.State()) { Log() }
    let count = 10_000
    // Enqueued from one thread while other tasks hammer the actor with sends of their own.
    await withTaskGroup(of: Void.self) { group in
      group.addTask(priority: .low) {
        for n in 0..<count { store.enqueue(.append(n)) }
      }
      for priority in [TaskPriority.high, .medium, .background] {
        group.addTask(priority: priority) {
          for _ in 0..<100 { await store.send(.echoed) }
        }
      }
    }
    await store.settle()
    #expect(await store.state.entries == Array(0..<count))
    #expect(await store.state.echoes == 300)
  }

  @Test func aProbeIsAnsweredAfterEverythingQueuedBeforeIt() async {
    let store = Store(initialState: Log.State()) { Log() }
    let stateAtProbe = LockIsolated<[Int]?>(nil)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      for n in 1...100 { store.enqueue(.append(n)) }
      store.probe {
        // Answered on the store's isolation, between reductions: nothing after it has run yet.
        stateAtProbe.setValue(store.assumeIsolated { $0.state.entries })
        done.resume()
      }
      store.enqueue(.append(101))
    }
    #expect(stateAtProbe.value == Array(1...100))
    #expect(await store.state.entries.count == 101, "a probe changes nothing")
    #expect(await store.version == 101, "and does not advance the version")
  }

  @Test func aProbeIsNotAnsweredWhileTheStoreIsBlocked() async throws {
    let gate = LockIsolated(false)
    // The reducer blocks a thread of its own: blocking one of the few the concurrency pool has
    // can leave none for the test that opens the gate, when other tests block the rest.
    let executor = ThreadExecutor()
    let store = Store(initialState: 0, executor: executor) {
      Reduce<Int, Bool> { state, _ in
        while !gate.value { usleep(1_000) }
        state += 1
        return .none
      }
    }
    let answered = LockIsolated(false)
    store.enqueue(true)
    store.probe { answered.setValue(true) }
    try await Task.sleep(for: .milliseconds(200))
    #expect(!answered.value, "the reducer still blocks the store")
    gate.setValue(true)
    while !answered.value { try await Task.sleep(for: .milliseconds(5)) }
    #expect(await store.state == 1)
  }

  @Test func onReducedReportsTheVersionAfterTheAction() async {
    let store = Store(initialState: Log.State()) { Log() }
    let seqs = LockIsolated<[UInt64]>([])
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      store.enqueue(.append(1)) { seq in seqs.withValue { $0.append(seq) } }
      store.enqueue(.append(2)) { seq in
        seqs.withValue { $0.append(seq) }
        done.resume()
      }
    }
    #expect(seqs.value == [1, 2])
  }

  @Test func observersGetASnapshotThenEveryChangeWithConsecutiveVersions() async throws {
    let store = Store(initialState: Log.State()) { Log() }
    await store.send(.append(0))
    let (snapshot, changes) = try await store.changes()
    #expect(snapshot.state.entries == [0])
    var replica = snapshot.json
    var expectedSeq = snapshot.version + 1
    Task {
      for n in 1...50 { await store.send(n.isMultiple(of: 5) ? .echo(n) : .append(n)) }
    }
    var received = 0
    for await change in changes {
      #expect(change.version == expectedSeq)
      expectedSeq += 1
      try change.patch.apply(to: &replica)
      received += 1
      if received == 60 { break }
    }
    let final = try JSONValueEncoder().encode(await store.state)
    #expect(replica == final)
  }

  @Test func subscribingWhileActionsFlowMissesNothing() async throws {
    let store = Store(initialState: Log.State()) { Log() }
    let producer = Task {
      for n in 0..<2_000 { store.enqueue(.append(n)) }
    }
    try await Task.sleep(for: .microseconds(50))
    let (snapshot, changes) = try await store.changes()
    var replica = snapshot.json
    var last = snapshot.version
    await producer.value
    await store.settle()
    let target = await store.version
    if last < target {
      for await change in changes {
        #expect(change.version == last + 1)
        last = change.version
        try change.patch.apply(to: &replica)
        if last == target { break }
      }
    }
    let final = try JSONValueEncoder().encode(await store.state)
    #expect(replica == final)
  }

  @Test func aChangeIsPublishedAsAMinimalPatch() async throws {
    let store = Store(initialState: Log.State(entries: Array(0..<1_000))) { Log() }
    let (_, changes) = try await store.changes()
    await store.send(.append(1_000))
    var iterator = changes.makeAsyncIterator()
    let change = await iterator.next()
    #expect(change?.patch.operations == [.add(path: "/entries/1000", value: .int(1_000))])
  }

  @Test func actionsThatChangeNothingPublishNothing() async throws {
    struct Noop: Reducer {
      func reduce(into state: inout Log.State, action: Log.Action) -> Effect<Log.Action> { .none }
    }
    let store = Store(initialState: Log.State()) { Noop() }
    let (snapshot, observation) = try await store.observe { _ in Issue.record("unexpected change") }
    await store.send(.append(1))
    #expect(await store.version == snapshot.version)
    observation.cancel()
  }

  @Test func aHostCanTakeTheActionsOfEffects() async {
    struct Echo: Reducer {
      func reduce(into state: inout Log.State, action: Log.Action) -> Effect<Log.Action> {
        if case let .append(n) = action { return .run { send in send(.echo(n)) } }
        return .none
      }
    }
    let routed = AsyncStream.makeStream(of: Log.Action.self)
    let store = Store(initialState: Log.State()) {
      Echo()
    } effectActions: { action in
      routed.continuation.yield(action)
    }
    await store.send(.append(3))
    var iterator = routed.stream.makeAsyncIterator()
    #expect(await iterator.next() == .echo(3))
    #expect(await store.state == Log.State())
  }
}
