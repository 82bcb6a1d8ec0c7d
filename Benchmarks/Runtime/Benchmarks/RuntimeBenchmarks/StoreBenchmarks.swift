import Benchmark
import SwitchyardRuntime

/// The reference: what a Swift programmer would write by hand for a counter owned by an actor.
actor HandWrittenCounter {
  var count = 0

  func increment() -> Int {
    self.count += 1
    return self.count
  }
}

struct TrivialCounter: Reducer {
  struct State: Equatable, Codable, Sendable { var count = 0 }
  enum Action: Sendable { case increment }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    return .none
  }
}

func storeBenchmarks() {
  Benchmark("Store.send, trivial reducer") { benchmark in
    let store = Store(initialState: TrivialCounter.State()) { TrivialCounter() }
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      blackHole(await store.send(.increment))
    }
  }

  Benchmark("Reference: hand-written actor, same mutation") { benchmark in
    let counter = HandWrittenCounter()
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
      blackHole(await counter.increment())
    }
  }
}
