import Benchmark
import CasePaths
import IdentifiedCollections
import SwitchyardRuntime

// What an observer of a store pays for one small change in a big state: the store reduces an
// action that toggles one element, then publishes the change as a JSON Patch. The goal is that
// 100,000 elements cost at most twice what 10 do.

struct TodoRow: Reducer {
  typealias State = Todo
  enum Action: Sendable { case toggled }

  func reduce(into state: inout Todo, action: Action) -> Effect<Action> {
    state.isDone.toggle()
    return .none
  }
}

struct TodoList: Reducer {
  typealias State = Todos
  @CasePathable enum Action: Sendable { case todos(IdentifiedActionOf<TodoRow>) }

  /// Whether a `Reduce` runs on every action at the root, as in many features: it may change
  /// anything, so the store encodes and diffs the whole state, as it did before change tracking.
  var reducesAtTheRoot = false

  var body: some ReducerOf<Self> {
    if reducesAtTheRoot {
      Reduce { _, _ in .none }
        .forEach(\.todos, action: \.todos) { TodoRow() }
    } else {
      EmptyReducer()
        .forEach(\.todos, action: \.todos) { TodoRow() }
    }
  }
}

func storeDiffBenchmarks() {
  for count in [10, 1_000, 100_000] {
    observedSendBenchmark("Observed Store.send changing one element, \(count) elements", count: count)
    observedSendBenchmark(
      "Observed Store.send changing one element, full diff, \(count) elements", count: count, reducesAtTheRoot: true
    )
  }
}

func observedSendBenchmark(_ name: String, count: Int, reducesAtTheRoot: Bool = false) {
  // Tracked, an iteration is 1,000 sends, like the other send benchmarks: the store, its first
  // encoding and the one-time copy of the trees the snapshot shares are set up once per
  // iteration, not once per send. A full diff of 100,000 elements takes a quarter of a second,
  // so there an iteration is one send.
  Benchmark(
    name,
    configuration: .init(scalingFactor: reducesAtTheRoot ? .one : .kilo, maxDuration: .seconds(2))
  ) { benchmark in
    let store = Store(initialState: Todos(count: count)) { TodoList(reducesAtTheRoot: reducesAtTheRoot) }
    let (_, observation) = try await store.observe { change in blackHole(change) }
    let action = TodoList.Action.todos(.element(id: count / 2, action: .toggled))
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      blackHole(await store.send(action))
    }
    benchmark.stopMeasurement()
    observation.cancel()
  }
}
