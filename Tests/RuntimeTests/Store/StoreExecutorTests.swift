import ConcurrencyExtras
import Foundation
import Testing

@testable import SwitchyardRuntime

/// A store given a ``StoreExecutor`` runs there — reducer, observers, callbacks — and takes
/// actions enqueued from outside without a task per action.
@Suite(.timeLimit(.minutes(1))) struct StoreExecutorTests {
  /// Appends numbers, and counts the actions it reduced anywhere but on `executor`.
  struct Log: Reducer {
    struct State: Equatable, Codable, Sendable {
      var entries: [Int] = []
      var echoes = 0
      var offTheExecutor = 0
    }
    enum Action: Equatable, Sendable { case append(Int), echo(Int), echoed, fetch(Int) }

    let executor: ThreadExecutor

    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      if !self.executor.isCurrent { state.offTheExecutor += 1 }
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
      case let .fetch(n):
        return .run { send in
          try? await Task.sleep(for: .milliseconds(1))
          send(.append(n))
        }
      }
    }
  }

  /// A store of `Log` on a new executor.
  static func makeStore() -> (Store<Log.State, Log.Action>, ThreadExecutor) {
    let executor = ThreadExecutor()
    let store = Store(initialState: Log.State(), executor: executor) { Log(executor: executor) }
    return (store, executor)
  }

  @Test func theExecutorKnowsItsOwnThread() async {
    let executor = ThreadExecutor()
    #expect(!executor.isCurrent)
    let onIt = await withCheckedContinuation { continuation in
      executor.execute { continuation.resume(returning: executor.isCurrent) }
    }
    #expect(onIt)
  }

  @Test func theStoreIsIsolatedToItsExecutor() async {
    let (store, executor) = Self.makeStore()
    #expect(await store.runsOn(executor))
    #expect(executor.jobs > 0, "the call hopped to the executor as a job")
  }

  @Test func sendReducesOnTheExecutorAndReturnsOnceTheEffectsSendsAreReduced() async {
    let (store, _) = Self.makeStore()
    let seq = await store.send(.echo(7))
    #expect(await store.state == Log.State(entries: [7], echoes: 1))
    #expect(seq == 2)
  }

  @Test func enqueuedActionsAreDrainedOnTheExecutorWithoutATask() async {
    let (store, executor) = Self.makeStore()
    let answeredOnTheExecutor = LockIsolated(false)
    let open = executor.block()
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      for n in 0..<1_000 { store.enqueue(.append(n)) }
      store.probe {
        answeredOnTheExecutor.setValue(executor.isCurrent)
        done.resume()
      }
      open()
    }
    #expect(executor.executed == 1, "a burst of actions is one drain")
    #expect(executor.jobs == 0, "no task hopped to the executor")
    #expect(answeredOnTheExecutor.value)
    #expect(await store.state.entries == Array(0..<1_000))
    #expect(await store.state.offTheExecutor == 0)
  }

  @Test func onReducedIsCalledOnTheExecutorWithTheVersionAfterTheAction() async {
    let (store, executor) = Self.makeStore()
    let reports = LockIsolated<[(seq: UInt64, onTheExecutor: Bool)]>([])
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      store.enqueue(.append(1)) { seq in reports.withValue { $0.append((seq, executor.isCurrent)) } }
      store.enqueue(.append(2)) { seq in
        reports.withValue { $0.append((seq, executor.isCurrent)) }
        done.resume()
      }
    }
    #expect(reports.value.map(\.seq) == [1, 2])
    #expect(reports.value.map(\.onTheExecutor) == [true, true])
  }

  @Test func enqueueFromManyThreadsKeepsEachThreadsOrderAndLosesNothing() async {
    let (store, _) = Self.makeStore()
    let threads = 8
    let perThread = 2_000
    await withTaskGroup(of: Void.self) { group in
      group.addTask {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
          let running = LockIsolated(threads)
          for t in 0..<threads {
            Thread {
              for n in 0..<perThread { store.enqueue(.append(t * perThread + n)) }
              if running.withValue({ $0 -= 1; return $0 }) == 0 { done.resume() }
            }.start()
          }
        }
      }
      // Meanwhile, calls that hop to the executor as jobs.
      for _ in 0..<3 {
        group.addTask {
          for _ in 0..<100 { await store.send(.echoed) }
        }
      }
    }
    await withCheckedContinuation { done in store.probe { done.resume() } }
    let state = await store.state
    #expect(state.entries.count == threads * perThread)
    for t in 0..<threads {
      let range = t * perThread..<(t + 1) * perThread
      #expect(state.entries.filter(range.contains) == Array(range), "thread \(t)'s actions in its order")
    }
    #expect(state.echoes == 300)
    #expect(state.offTheExecutor == 0)
  }

  @Test func theActionsOfEffectsComeBackToTheExecutor() async {
    let (store, _) = Self.makeStore()
    for n in 1...5 { store.enqueue(.fetch(n)) }
    await withCheckedContinuation { done in store.probe { done.resume() } }
    await store.settle()
    let state = await store.state
    #expect(state.entries.sorted() == [1, 2, 3, 4, 5])
    #expect(state.offTheExecutor == 0)
  }

  @Test func aProbeIsAnsweredOnTheExecutorAfterEverythingQueuedBeforeIt() async {
    let (store, executor) = Self.makeStore()
    let stateAtProbe = LockIsolated<[Int]?>(nil)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      for n in 1...100 { store.enqueue(.append(n)) }
      store.probe {
        // The store's isolation is the executor's: there for the taking.
        stateAtProbe.setValue(store.assumeIsolated { $0.state.entries })
        #expect(executor.isCurrent)
        done.resume()
      }
      store.enqueue(.append(101))
    }
    #expect(stateAtProbe.value == Array(1...100))
    #expect(await store.version == 101)
  }

  @Test func observersAreCalledOnTheExecutor() async throws {
    let (store, executor) = Self.makeStore()
    let calls = LockIsolated<[Bool]>([])
    let (snapshot, observation) = try await store.observe { _ in calls.withValue { $0.append(executor.isCurrent) } }
    defer { observation.cancel() }
    for n in 1...10 { store.enqueue(.append(n)) }
    await store.send(.echo(11))
    #expect(calls.value == Array(repeating: true, count: 12))
    #expect(await store.version == snapshot.version + 12)
  }

  @Test func storesOnOneExecutorTakeTurnsOnItsThread() async {
    let executor = ThreadExecutor()
    let first = Store(initialState: Log.State(), executor: executor) { Log(executor: executor) }
    let second = Store(initialState: Log.State(), executor: executor) { Log(executor: executor) }
    let open = executor.block()
    first.enqueue(.append(1))
    second.enqueue(.append(2))
    open()
    await first.send(.append(3))
    await second.send(.append(4))
    #expect(await first.state.entries == [1, 3])
    #expect(await second.state.entries == [2, 4])
    #expect(await first.state.offTheExecutor == 0)
    #expect(await second.state.offTheExecutor == 0)
  }

  @Test func withoutAnExecutorEachStoreRunsOnItsOwn() async throws {
    // A store blocked in its reducer holds up no other store.
    let started = LockIsolated(false)
    let gate = LockIsolated(false)
    let blocked = Store(initialState: 0) {
      Reduce<Int, Bool> { state, _ in
        started.setValue(true)
        while !gate.value { usleep(1_000) }
        state += 1
        return .none
      }
    }
    let free = Store(initialState: 0) {
      Reduce<Int, Bool> { state, _ in
        state += 1
        return .none
      }
    }
    // Should the other store wait after all, the gate opens anyway: the test fails, and ends.
    // Started before the store blocks, from a thread of its own: the blocked reducer holds one
    // of the concurrency pool's few threads, and other tests may hold the rest for seconds at a
    // time (a fresh-clone run took 7 s to get here), so the gate waits long.
    Thread {
      usleep(15_000_000)
      gate.setValue(true)
    }.start()
    blocked.enqueue(true)
    while !started.value { try await Task.sleep(for: .milliseconds(1)) }
    await free.send(true)
    #expect(!gate.value, "the other store reduced while this one was blocked")
    gate.setValue(true)
    await withCheckedContinuation { done in blocked.probe { done.resume() } }
    #expect(await blocked.state == 1)
    #expect(await free.state == 1)
  }
}

extension Store {
  /// Whether the store's isolated code runs on `executor`.
  fileprivate func runsOn(_ executor: ThreadExecutor) -> Bool {
    executor.isCurrent
  }
}
