import Benchmark
import CasePaths
import SwitchyardRuntime

// Five concrete levels of nesting, each scoping its child along a field and a case:
// concrete rather than generic so that the case paths are the ones users get from @CasePathable.

struct Level1: Reducer {
  struct State: Sendable { var child = TrivialCounter.State() }
  @CasePathable enum Action: Sendable { case child(TrivialCounter.Action) }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: \.child) { TrivialCounter() }
  }
}

struct Level2: Reducer {
  struct State: Sendable { var child = Level1.State() }
  @CasePathable enum Action: Sendable { case child(Level1.Action) }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: \.child) { Level1() }
  }
}

struct Level3: Reducer {
  struct State: Sendable { var child = Level2.State() }
  @CasePathable enum Action: Sendable { case child(Level2.Action) }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: \.child) { Level2() }
  }
}

struct Level4: Reducer {
  struct State: Sendable { var child = Level3.State() }
  @CasePathable enum Action: Sendable { case child(Level3.Action) }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: \.child) { Level3() }
  }
}

struct Level5: Reducer {
  struct State: Sendable { var child = Level4.State() }
  @CasePathable enum Action: Sendable { case child(Level4.Action) }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: \.child) { Level4() }
  }
}

struct StoredCaseKeyPathLevel1: Reducer {
  typealias State = Level1.State
  typealias Action = Level1.Action
  static var toChild: CaseKeyPath<Action, TrivialCounter.Action> { \.child }
  var body: some ReducerOf<Self> {
    Scope(state: \.child, action: Self.toChild) { TrivialCounter() }
  }
}

func scopeBenchmarks() {
  Benchmark("Store.send through 0 Scopes") { benchmark in
    let store = Store(initialState: TrivialCounter.State()) { TrivialCounter() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(await store.send(.increment)) }
  }
  Benchmark("Store.send through 1 Scope") { benchmark in
    let store = Store(initialState: Level1.State()) { Level1() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(await store.send(.child(.increment))) }
  }
  // The same level with its case key path stored as a `CaseKeyPath`, which swift-case-paths
  // resolves on every extraction: what a level cost before literals became route key paths.
  Benchmark("Store.send through 1 Scope, stored CaseKeyPath") { benchmark in
    let store = Store(initialState: Level1.State()) { StoredCaseKeyPathLevel1() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(await store.send(.child(.increment))) }
  }
  Benchmark("Store.send through 3 Scopes") { benchmark in
    let store = Store(initialState: Level3.State()) { Level3() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(await store.send(.child(.child(.child(.increment))))) }
  }
  Benchmark("Store.send through 5 Scopes") { benchmark in
    let store = Store(initialState: Level5.State()) { Level5() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations { blackHole(await store.send(.child(.child(.child(.child(.child(.increment))))))) }
  }
}
