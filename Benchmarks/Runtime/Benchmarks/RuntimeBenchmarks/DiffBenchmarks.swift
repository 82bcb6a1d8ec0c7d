import Benchmark
import IdentifiedCollections
import SwitchyardRuntime

struct Todo: Codable, Identifiable, Sendable {
  let id: Int
  var title: String
  var isDone: Bool
}

struct Todos: Codable, Sendable {
  var todos: IdentifiedArrayOf<Todo>
  var filter = "all"

  init(count: Int) {
    self.todos = IdentifiedArray(uniqueElements: (0..<count).map { Todo(id: $0, title: "todo \($0)", isDone: false) })
  }
}

func diffBenchmarks() {
  for count in [10, 1_000, 100_000] {
    // The diff alone, between two JSON trees: what the goal is about.
    Benchmark(
      "Diff of one changed element, \(count) elements",
      configuration: .init(scalingFactor: .one, maxDuration: .seconds(2))
    ) { benchmark in
      let (before, after) = try encodedPair(count: count)
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(JSONPatch(from: before, to: after))
      }
    }

    // What a store does after each change today: encode the new state, then diff.
    Benchmark(
      "Encode and diff, one changed element, \(count) elements",
      configuration: .init(scalingFactor: .one, maxDuration: .seconds(2))
    ) { benchmark in
      let (before, _) = try encodedPair(count: count)
      let after = changed(Todos(count: count))
      let encoder = JSONValueEncoder()
      benchmark.startMeasurement()
      for _ in benchmark.scaledIterations {
        blackHole(JSONPatch(from: before, to: try encoder.encode(after)))
      }
    }
  }
}

/// The todos with the title of the middle one changed.
func changed(_ todos: Todos) -> Todos {
  var todos = todos
  todos.todos[todos.todos.count / 2].title = "changed"
  return todos
}

func encodedPair(count: Int) throws -> (JSONValue, JSONValue) {
  let before = Todos(count: count)
  let encoder = JSONValueEncoder()
  return (try encoder.encode(before), try encoder.encode(changed(before)))
}
