import Testing

@testable import SwitchyardJSON

@Suite("JSON diff")
struct JSONDiffTests {
  /// Diffs, checks the patch really turns `old` into `new`, and returns its operations.
  func diff(_ old: JSONValue, _ new: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) -> [JSONPatch.Operation] {
    let patch = JSONPatch(from: old, to: new)
    do {
      let result = try patch.applied(to: old)
      #expect(result == new, "patch: \(patch)", sourceLocation: sourceLocation)
    } catch {
      Issue.record(error, "patch: \(patch)", sourceLocation: sourceLocation)
    }
    return patch.operations
  }

  static let numbers = JSONValue.array((0..<1_000).map { .int(Int64($0)) })

  static func items(_ count: Int = 1_000) -> [JSONValue] {
    (0..<count).map { ["id": .int(Int64($0)), "title": .string("Item \($0)"), "done": false] }
  }

  @Test("equal values give an empty patch")
  func equal() {
    #expect(diff(Self.numbers, Self.numbers) == [])
    #expect(diff(["items": .array(Self.items())], ["items": .array(Self.items())]) == [])
    #expect(diff(1, 1.0) == [])
    #expect(diff(["a": 1, "b": [1, 2]], ["b": [1.0, 2], "a": 1]) == [])
    #expect(JSONPatch(from: nil, to: nil).isEmpty)
  }

  @Test("one element inserted at the front of a 1,000-element array is one add at /0")
  func insertAtFront() {
    guard case .array(var numbers) = Self.numbers else { return }
    numbers.insert(-1, at: 0)
    #expect(diff(["list": Self.numbers], ["list": .array(numbers)]) == [.add(path: "/list/0", value: -1)])
  }

  @Test("one element removed from the middle is one remove")
  func removeFromMiddle() {
    guard case .array(var numbers) = Self.numbers else { return }
    numbers.remove(at: 500)
    #expect(diff(["list": Self.numbers], ["list": .array(numbers)]) == [.remove(path: "/list/500")])
  }

  @Test("one element appended is one add at its index, not -")
  func append() {
    guard case .array(var numbers) = Self.numbers else { return }
    numbers.append(1_000)
    #expect(diff(Self.numbers, .array(numbers)) == [.add(path: "/1000", value: 1_000)])
  }

  @Test("duplicates around the edit still give one operation")
  func repeatedElements() {
    #expect(diff([1, 1, 1, 1], [1, 1, 1, 1, 1]) == [.add(path: "/4", value: 1)])
    #expect(diff([1, 1, 2, 1, 1], [1, 1, 1, 1]) == [.remove(path: "/2")])
    #expect(diff([], [1, 2]) == [.add(path: "/0", value: 1), .add(path: "/1", value: 2)])
    #expect(diff([1, 2, 3], []) == [.remove(path: "/2"), .remove(path: "/1"), .remove(path: "/0")])
  }

  @Test("one field of one element of a 1,000-element array of objects is one deep replace")
  func deepFieldChange() {
    var items = Self.items()
    items[417] = ["id": 417, "title": "Changed", "done": false]
    #expect(
      diff(["items": .array(Self.items())], ["items": .array(items)])
        == [.replace(path: "/items/417/title", value: "Changed")]
    )
  }

  @Test("a change of type is one replace")
  func typeChange() {
    #expect(diff(["a": 1], ["a": "1"]) == [.replace(path: "/a", value: "1")])
    #expect(diff(["a": [1]], ["a": ["0": 1]]) == [.replace(path: "/a", value: ["0": 1])])
    #expect(diff(["a": nil], ["a": false]) == [.replace(path: "/a", value: false)])
    #expect(diff(["a": [:]], ["a": []]) == [.replace(path: "/a", value: [])])
  }

  @Test("a changed scalar root is a replace at the root")
  func rootScalar() {
    #expect(diff(1, 2) == [.replace(path: "", value: 2)])
    #expect(diff("a", ["a"]) == [.replace(path: "", value: ["a"])])
    #expect(diff(nil, 0) == [.replace(path: "", value: 0)])
  }

  @Test("object members are visited in sorted key order")
  func objectOrder() {
    let old: JSONValue = ["d": 2, "b": 1, "a": 0, "e": ["x": 1]]
    let new: JSONValue = ["c": 3, "a": 0, "e": ["x": 2, "w": 0], "d": 5]
    let expected: [JSONPatch.Operation] = [
      .remove(path: "/b"),
      .add(path: "/c", value: 3),
      .replace(path: "/d", value: 5),
      .add(path: "/e/w", value: 0),
      .replace(path: "/e/x", value: 2),
    ]
    #expect(diff(old, new) == expected)
    // Insertion order does not matter.
    let reordered: JSONValue = ["e": ["x": 1], "a": 0, "b": 1, "d": 2]
    #expect(diff(reordered, new) == expected)
  }

  @Test("keys that need escaping")
  func escapedKeys() {
    #expect(diff(["a/b": 1, "m~n": 1], ["a/b": 2]) == [.replace(path: "/a~1b", value: 2), .remove(path: "/m~0n")])
    #expect(JSONPatch(from: ["a/b": 1], to: ["a/b": 2]).jsonValue.serialized() == #"[{"op":"replace","path":"/a~1b","value":2}]"#)
  }

  @Test("a shifted window is one remove and one add")
  func shiftedWindow() {
    let old = JSONValue.array((1...100).map { .int(Int64($0)) })
    let new = JSONValue.array((2...101).map { .int(Int64($0)) })
    #expect(diff(old, new) == [.remove(path: "/0"), .add(path: "/99", value: 101)])
  }

  @Test("mixed edits use the longest common subsequence, with indices valid in sequence")
  func lcs() {
    #expect(
      diff([1, 2, 3, 4, 5], [1, 3, 4, 6, 5, 7])
        == [.remove(path: "/1"), .add(path: "/3", value: 6), .add(path: "/5", value: 7)]
    )
    // A replaced run is diffed element by element.
    #expect(
      diff(
        [["id": 1, "v": 0], ["id": 2, "v": 0], "keep", "x"],
        [["id": 1, "v": 1], "keep", "y"]
      )
        == [
          .replace(path: "/0/v", value: 1),
          .remove(path: "/1"),
          .replace(path: "/2", value: "y"),
        ]
    )
  }

  @Test("equal-length middles are diffed element by element")
  func pairwise() {
    #expect(
      diff([0, ["a": 1], ["b": 1], 9], [0, ["a": 2], ["b": 2], 9])
        == [.replace(path: "/1/a", value: 2), .replace(path: "/2/b", value: 2)]
    )
    #expect(diff(["a", "b"], ["b", "c"]).count == 2)
  }

  @Test("the diff is deterministic")
  func deterministic() {
    let old: JSONValue = ["list": [1, 2, 3, 2, 1], "o": ["p": 1, "q": 2]]
    let new: JSONValue = ["list": [2, 1, 3, 1, 2, 4], "o": ["q": 3, "r": 4]]
    let first = diff(old, new)
    for _ in 0..<5 {
      #expect(JSONPatch(from: old, to: new).operations == first)
    }
  }

  @Test("large unrelated arrays fall back to bounded work and stay correct")
  func largeUnrelated() {
    let old = JSONValue.array((0..<3_000).map { .int(Int64($0 * 2)) })
    let new = JSONValue.array((0..<2_500).map { .int(Int64($0 * 3 + 1)) })
    let operations = diff(old, new)
    #expect(operations.count == 3_000)
  }

  @Test("large arrays with scattered edits")
  func largeScattered() {
    var items = Self.items(5_000)
    items.remove(at: 10)
    items.insert(["id": -1, "title": "New", "done": true], at: 2_000)
    items[3_000] = ["id": 3_000, "title": "Item 3000", "done": true]
    items.append(["id": 9_999, "title": "Last", "done": false])
    let operations = diff(.array(Self.items(5_000)), .array(items))
    #expect(
      operations == [
        .remove(path: "/10"),
        .add(path: "/2000", value: ["id": -1, "title": "New", "done": true]),
        .replace(path: "/3000/done", value: true),
        .add(path: "/5000", value: ["id": 9_999, "title": "Last", "done": false]),
      ]
    )
  }
}
