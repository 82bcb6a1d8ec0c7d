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
    let before = Todos(count: count)
    var after = before
    after.todos[count / 2].title = "changed"
    let encoder = JSONValueEncoder()
    let beforeJSON = try! encoder.encode(before)
    let afterJSON = try! encoder.encode(after)

    // The diff alone, between two JSON trees: what the goal is about.
    Benchmark(
      "Diff of one changed element, \(count) elements",
      configuration: .init(scalingFactor: .one, maxDuration: .seconds(2))
    ) { benchmark in
      for _ in benchmark.scaledIterations {
        blackHole(JSONPatch(from: beforeJSON, to: afterJSON))
      }
    }

    // What a store does after each change today: encode the new state, then diff.
    Benchmark(
      "Encode and diff, one changed element, \(count) elements",
      configuration: .init(scalingFactor: .one, maxDuration: .seconds(2))
    ) { benchmark in
      for _ in benchmark.scaledIterations {
        blackHole(JSONPatch(from: beforeJSON, to: try encoder.encode(after)))
      }
    }
  }
}
