import CasePaths
import Clocks
import ConcurrencyExtras
import Dependencies
import Testing

@testable import SwitchyardRuntime

@MainActor
@Suite struct EffectTests {
  struct State: Equatable, Codable, Sendable {
    var log: [String] = []
  }

  @CasePathable
  enum Action: Equatable, Sendable {
    case start(String)
    case stop(String)
    case record(String)
    case fail
  }

  nonisolated static func recorder(_ reduce: @escaping (String) -> Effect<Action>) -> Reduce<State, Action> {
    Reduce { state, action in
      switch action {
      case let .start(tag): return reduce(tag)
      case let .stop(tag): return .cancel(id: tag)
      case let .record(entry):
        state.log.append(entry)
        return .none
      case .fail:
        return .run { _ in struct Boom: Error {}; throw Boom() }
      }
    }
  }

  @Test func sendFeedsActionsBackInOrder() async {
    let store = TestStore(initialState: State()) {
      Self.recorder { tag in .merge(.send(.record("\(tag)1")), .send(.record("\(tag)2"))) }
    }
    await store.send(.start("a"))
    await store.receive(.record("a1")) { $0.log = ["a1"] }
    await store.receive(.record("a2")) { $0.log = ["a1", "a2"] }
  }

  @Test func concatenateRunsEffectsOneAfterAnother() async {
    let clock = TestClock()
    let store = TestStore(initialState: State()) {
      Self.recorder { tag in
        .concatenate(
          .run { send in
            try await clock.sleep(for: .seconds(2))
            send(.record("\(tag) slow"))
          },
          .send(.record("\(tag) fast"))
        )
      }
    }
    await store.send(.start("x"))
    await clock.advance(by: .seconds(2))
    await store.receive(.record("x slow")) { $0.log = ["x slow"] }
    await store.receive(.record("x fast")) { $0.log = ["x slow", "x fast"] }
  }

  @Test func mapTransformsEveryAction() async {
    let store = TestStore(initialState: State()) {
      Self.recorder { tag in
        Effect<String>.merge(.send(tag), .run { send in send(tag + "!") }).map { Action.record("mapped " + $0) }
      }
    }
    await store.send(.start("m"))
    await store.receive(.record("mapped m")) { $0.log = ["mapped m"] }
    await store.receive(.record("mapped m!")) { $0.log = ["mapped m", "mapped m!"] }
  }

  @Test func cancelStopsEffectsWithThatID() async {
    let clock = TestClock()
    let store = TestStore(initialState: State()) {
      Self.recorder { tag in
        .run { send in
          for await _ in clock.timer(interval: .seconds(1)) { send(.record(tag)) }
        }
        .cancellable(id: tag)
      }
    }
    await store.send(.start("t"))
    await clock.advance(by: .seconds(1))
    await store.receive(.record("t")) { $0.log = ["t"] }
    await store.send(.stop("t"))
    await clock.advance(by: .seconds(5))
    await store.finish()
    #expect(store.inFlightEffects.isEmpty)
  }

  @Test func cancelInFlightKeepsOnlyTheLatest() async {
    let clock = TestClock()
    let store = TestStore(initialState: State()) {
      Reduce<State, Action> { state, action in
        switch action {
        case let .start(tag):
          return .run { send in
            try await clock.sleep(for: .seconds(1))
            send(.record(tag))
          }
          .cancellable(id: "search", cancelInFlight: true)
        case let .record(entry):
          state.log.append(entry)
          return .none
        default:
          return .none
        }
      }
    }
    await store.send(.start("s"))
    await store.send(.start("sw"))
    await store.send(.start("swi"))
    await clock.advance(by: .seconds(1))
    await store.receive(.record("swi")) { $0.log = ["swi"] }
    await store.finish()
  }

  @Test func cancellationBelongsToTheStore() async throws {
    let clock = TestClock()
    let reducer = { @Sendable in
      Self.recorder { tag in
        .run { send in
          try await clock.sleep(for: .seconds(1))
          send(.record(tag))
        }
        .cancellable(id: "shared")
      }
    }
    let first = Store(initialState: State()) { reducer() }
    let second = Store(initialState: State()) { reducer() }
    await first.send(.start("first"))
    await second.send(.start("second"))
    await second.send(.stop("shared"))
    await clock.advance(by: .seconds(1))
    await first.settle()
    await second.settle()
    #expect(await first.state.log == ["first"])
    #expect(await second.state.log == [])
  }

  @Test func effectsEndWithTheirStore() async throws {
    let started = LockIsolated(false)
    let ended = AsyncStream.makeStream(of: Void.self)
    var store: Store<State, Action>? = Store(initialState: State()) {
      Self.recorder { _ in
        .run { _ in
          started.setValue(true)
          await withTaskCancellationHandler {
            try? await Task.sleep(for: .seconds(60))
          } onCancel: {
            ended.continuation.yield()
          }
        }
      }
    }
    await store?.send(.start("forever"))
    while !started.value { await Task.yield() }
    #expect(await store?.inFlightEffectCount == 1)
    store = nil
    var iterator = ended.stream.makeAsyncIterator()
    _ = await iterator.next()
  }

  @Test func unhandledErrorInRunIsReported() async {
    let issues = await collectingIssues {
      let store = TestStore(initialState: State()) { Self.recorder { _ in .none } }
      await store.send(.fail)
      await store.finish()
    }
    #expect(issues.count == 1)
    #expect(issues.first?.contains("threw an unhandled error") == true)
  }

  @Test func runCatchHandlerGetsTheError() async {
    struct Failure: Error {}
    let store = TestStore(initialState: State()) {
      Self.recorder { tag in
        .run { _ in throw Failure() } catch: { _, send in send(.record("caught \(tag)")) }
      }
    }
    await store.send(.start("e"))
    await store.receive(.record("caught e")) { $0.log = ["caught e"] }
  }

  struct Search: Reducer {
    struct State: Equatable { var query = ""; var results: [String] = [] }
    @CasePathable enum Action: Equatable { case queryChanged(String), results([String]) }
    @Dependency(\.continuousClock) var clock
    enum CancelID { case search }

    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case let .queryChanged(query):
        state.query = query
        return .run { [clock] send in
          try await clock.sleep(for: .milliseconds(300))
          send(.results(["\(query)1", "\(query)2"]))
        }
        .cancellable(id: CancelID.search, cancelInFlight: true)
      case let .results(results):
        state.results = results
        return .none
      }
    }
  }

  struct Saver: Reducer {
    struct State: Equatable { var isThrottled = false; var saves = 0 }
    @CasePathable enum Action: Equatable { case saveTapped, save, throttleEnded }
    @Dependency(\.continuousClock) var clock
    enum CancelID { case throttle }

    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      switch action {
      case .saveTapped:
        guard !state.isThrottled else { return .none }
        state.isThrottled = true
        return .merge(
          .send(.save),
          .run { [clock] send in
            try await clock.sleep(for: .seconds(1))
            send(.throttleEnded)
          }
          .cancellable(id: CancelID.throttle)
        )
      case .save:
        state.saves += 1
        return .none
      case .throttleEnded:
        state.isThrottled = false
        return .none
      }
    }
  }

  /// The throttle recipe from the documentation.
  @Test func throttleRecipe() async {
    let clock = TestClock()
    let store = TestStore(initialState: Saver.State()) {
      Saver()
    } withDependencies: {
      $0.continuousClock = clock
    }
    await store.send(.saveTapped) { $0.isThrottled = true }
    await store.receive(.save) { $0.saves = 1 }
    await clock.advance(by: .milliseconds(500))
    await store.send(.saveTapped)
    await clock.advance(by: .milliseconds(500))
    await store.receive(.throttleEnded) { $0.isThrottled = false }
    await store.send(.saveTapped) { $0.isThrottled = true }
    await store.receive(.save) { $0.saves = 2 }
    await clock.advance(by: .seconds(1))
    await store.receive(.throttleEnded) { $0.isThrottled = false }
  }

  /// The debounce recipe from the documentation: cancel the previous run, then sleep on the
  /// injected clock.
  @Test func debounceRecipe() async {
    let clock = TestClock()
    let store = TestStore(initialState: Search.State()) {
      Search()
    } withDependencies: {
      $0.continuousClock = clock
    }
    await store.send(.queryChanged("s")) { $0.query = "s" }
    await clock.advance(by: .milliseconds(200))
    await store.send(.queryChanged("sw")) { $0.query = "sw" }
    await clock.advance(by: .milliseconds(300))
    await store.receive(.results(["sw1", "sw2"])) { $0.results = ["sw1", "sw2"] }
  }
}
