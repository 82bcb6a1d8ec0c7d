import Foundation
import IdentifiedCollections
import Testing

@testable import SwitchyardJSON

// MARK: - Fixtures

private struct JSONCodingTodo: Codable, Equatable, Identifiable, Sendable {
  var id: Int
  var title: String
  var isComplete = false
}

private struct JSONCodingAppState: Codable, Equatable, Sendable {
  var count = 0
  var todos: IdentifiedArrayOf<JSONCodingTodo> = []
  var selection: Int?
  var settings = Settings()

  struct Settings: Codable, Equatable, Sendable {
    var theme = "dark"
    var volume = 0.5
  }
}

private enum JSONCodingCounterAction: Codable, Equatable, Sendable {
  case incrTapped(x: Int)
  case decrTapped
  case set(Int, animated: Bool)
}

/// An action whose child actions are encoded without the synthesized `_0` wrapper, the way the
/// runtime's action envelopes nest: `{"counter":{"incrTapped":{"x":1}}}`.
private enum JSONCodingAppAction: Codable, Equatable, Sendable {
  case counter(JSONCodingCounterAction)
  case reset

  enum CodingKeys: String, CodingKey { case counter, reset }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    if container.contains(.counter) {
      self = .counter(try container.decode(JSONCodingCounterAction.self, forKey: .counter))
    } else if container.contains(.reset) {
      self = .reset
    } else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: container.codingPath, debugDescription: "Unknown action")
      )
    }
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .counter(let action): try container.encode(action, forKey: .counter)
    case .reset: try container.encode([String: Int](), forKey: .reset)
    }
  }
}

/// The same shape with Swift's synthesized Codable: `{"counter":{"_0":{"incrTapped":{"x":1}}}}`.
private enum JSONCodingSynthesizedAction: Codable, Equatable, Sendable {
  case counter(JSONCodingCounterAction)
}

private class JSONCodingAnimal: Codable {
  var name: String
  init(name: String) { self.name = name }
}

private final class JSONCodingDog: JSONCodingAnimal {
  var breed: String

  init(name: String, breed: String) {
    self.breed = breed
    super.init(name: name)
  }

  private enum CodingKeys: String, CodingKey { case breed }

  required init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    breed = try container.decode(String.self, forKey: .breed)
    try super.init(from: container.superDecoder())
  }

  override func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(breed, forKey: .breed)
    try super.encode(to: container.superEncoder())
  }
}

/// Uses nested containers by hand, writing to them after they were created.
private struct JSONCodingNested: Codable, Equatable {
  var x: Int
  var list: [String]

  enum CodingKeys: String, CodingKey { case outer, list, after }
  enum OuterKeys: String, CodingKey { case x }

  init(x: Int, list: [String]) {
    self.x = x
    self.list = list
  }

  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    var outer = container.nestedContainer(keyedBy: OuterKeys.self, forKey: .outer)
    var list = container.nestedUnkeyedContainer(forKey: .list)
    try container.encode(true, forKey: .after)
    try outer.encode(x, forKey: .x)
    for item in self.list {
      var element = list.nestedUnkeyedContainer()
      try element.encode(item)
    }
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    let outer = try container.nestedContainer(keyedBy: OuterKeys.self, forKey: .outer)
    x = try outer.decode(Int.self, forKey: .x)
    var list = try container.nestedUnkeyedContainer(forKey: .list)
    var items: [String] = []
    while !list.isAtEnd {
      var element = try list.nestedUnkeyedContainer()
      items.append(try element.decode(String.self))
    }
    self.list = items
  }
}

private func jsonErrorPath(of error: any Error) -> String? {
  switch error as? DecodingError {
  case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
    return jsonPathDescription(context.codingPath)
  case .keyNotFound(let key, let context):
    return jsonPathDescription(context.codingPath + [key])
  default:
    return nil
  }
}

// MARK: - Encoder

@Suite("JSONValueEncoder")
struct JSONValueEncoderTests {
  let encoder = JSONValueEncoder()

  @Test("nested structs, optionals and IdentifiedArray")
  func nestedStructs() throws {
    let state = JSONCodingAppState(
      count: 2,
      todos: [JSONCodingTodo(id: 1, title: "Milk"), JSONCodingTodo(id: 2, title: "Eggs", isComplete: true)],
      selection: nil
    )
    let value = try encoder.encode(state)
    #expect(
      value == [
        "count": 2,
        "todos": [
          ["id": 1, "title": "Milk", "isComplete": false],
          ["id": 2, "title": "Eggs", "isComplete": true],
        ],
        "settings": ["theme": "dark", "volume": 0.5],
      ]
    )
    // nil optionals are omitted, not null; fields keep declaration order.
    guard case .object(let object) = value else {
      Issue.record("expected an object")
      return
    }
    #expect(Array(object.keys) == ["count", "todos", "settings"])
    #expect(try JSONValueDecoder().decode(JSONCodingAppState.self, from: value) == state)
  }

  @Test("enums use the synthesized shape, with single unlabeled payloads unwrapped")
  func enums() throws {
    #expect(try encoder.encode(JSONCodingCounterAction.incrTapped(x: 3)) == ["incrTapped": ["x": 3]])
    #expect(try encoder.encode(JSONCodingCounterAction.decrTapped) == ["decrTapped": [:]])
    #expect(try encoder.encode(JSONCodingCounterAction.set(7, animated: true)) == ["set": ["_0": 7, "animated": true]])
    #expect(try encoder.encode(JSONCodingSynthesizedAction.counter(.decrTapped)) == ["counter": ["decrTapped": [:]]])
    #expect(try encoder.encode(JSONCodingAppAction.counter(.incrTapped(x: 1))) == ["counter": ["incrTapped": ["x": 1]]])
    #expect(try encoder.encode(JSONTestColor.green) == "green")
  }

  @Test("single unlabeled payloads decode unwrapped and in Swift's own _0 form")
  func unlabeledPayloads() throws {
    let unwrapped: JSONValue = ["counter": ["decrTapped": [:]]]
    let synthesized: JSONValue = ["counter": ["_0": ["decrTapped": [:]]]]
    #expect(try JSONValueDecoder().decode(JSONCodingSynthesizedAction.self, from: unwrapped) == .counter(.decrTapped))
    #expect(try JSONValueDecoder().decode(JSONCodingSynthesizedAction.self, from: synthesized) == .counter(.decrTapped))
    enum Loaded: Codable, Equatable { case loaded([Int]), renamed(String) }
    #expect(try encoder.encode(Loaded.loaded([2, 3])) == ["loaded": [2, 3]])
    #expect(try JSONValueDecoder().decode(Loaded.self, from: ["loaded": [2, 3]]) == .loaded([2, 3]))
    #expect(try JSONValueDecoder().decode(Loaded.self, from: ["renamed": "x"]) == .renamed("x"))
    #expect(try JSONValueDecoder().decode(Loaded.self, from: ["loaded": ["_0": [5]]]) == .loaded([5]))
  }

  @Test("encodeNil writes null; nil optionals in arrays are null")
  func nils() throws {
    struct Explicit: Encodable {
      var value: Int?
      func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: JSONTestKey.self)
        try container.encode(value, forKey: JSONTestKey("value"))
        try container.encodeIfPresent(value, forKey: JSONTestKey("omitted"))
        try container.encodeNil(forKey: JSONTestKey("nil"))
      }
    }
    #expect(try encoder.encode(Explicit(value: nil)) == ["value": nil, "nil": nil])
    #expect(try encoder.encode([1, nil, 3] as [Int?]) == [1, nil, 3])
    #expect(try encoder.encode(Int?.none) == nil)
  }

  @Test("String- and Int-keyed dictionaries become objects; other keys become pair arrays")
  func dictionaries() throws {
    #expect(try encoder.encode(["b": 2, "a": 1]) == ["a": 1, "b": 2])
    #expect(try encoder.encode([3: "c", 1: "a"]) == ["1": "a", "3": "c"])
    #expect(try encoder.encode([JSONTestColor.red: 1]) == ["red": 1])
    #expect(try encoder.encode([1.5: "x"]) == [1.5, "x"])
    let decoded = try JSONValueDecoder().decode([Int: String].self, from: ["1": "a", "3": "c"])
    #expect(decoded == [1: "a", 3: "c"])
  }

  @Test("Date is RFC 3339 text; Data uses its own Codable; URL is a string; Decimal is a number; UUID a string")
  func foundationTypes() throws {
    let date = Date(timeIntervalSinceReferenceDate: 12.5)
    #expect(try encoder.encode(date) == "2001-01-01T00:00:12.5Z")
    #expect(try encoder.encode(Data([1, 2, 255])) == [1, 2, 255])
    let url = URL(string: "https://example.com/a?b=c")!
    #expect(try encoder.encode(url) == "https://example.com/a?b=c")
    let relative = URL(string: "b/c", relativeTo: URL(string: "https://example.com/a/")!)!
    #expect(try encoder.encode(relative) == "https://example.com/a/b/c")
    #expect(try encoder.encode(Decimal(string: "12.25")!) == .double(12.25))
    #expect(try encoder.encode(Decimal(42)) == .int(42))
    let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    #expect(try encoder.encode(uuid) == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")

    let decoder = JSONValueDecoder()
    #expect(try decoder.decode(Date.self, from: "2001-01-01T00:00:12.5Z") == date)
    #expect(try decoder.decode(Data.self, from: [1, 2, 255]) == Data([1, 2, 255]))
    #expect(try decoder.decode(URL.self, from: "https://example.com/a?b=c") == url)
    #expect(try decoder.decode(Decimal.self, from: .double(12.25)) == Decimal(string: "12.25"))
    #expect(try decoder.decode(Decimal.self, from: .double(0.1)) == Decimal(string: "0.1"))
    #expect(try decoder.decode(UUID.self, from: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") == uuid)
  }

  @Test("integers and floating point")
  func numbers() throws {
    #expect(try encoder.encode(Int64.min) == .int(.min))
    #expect(try encoder.encode(UInt64(Int64.max)) == .int(.max))
    #expect(try encoder.encode(UInt64(1) << 63) == .double(9223372036854775808))
    #expect(throws: EncodingError.self) { try encoder.encode(UInt64.max - 1) }
    #expect(try encoder.encode(Float(0.1)) == .double(0.1))
    #expect(try encoder.encode(2.0) == .double(2))
    #expect(try encoder.encode(Int128(5)) == .int(5))
    #expect(try encoder.encode(UInt8(255)) == .int(255))
  }

  @Test("non-finite doubles throw invalidValue with the path of the value")
  func nonFiniteDoubles() throws {
    struct Sample: Encodable {
      var readings: [String: [Double]]
    }
    let error = #expect(throws: EncodingError.self) {
      try encoder.encode(Sample(readings: ["temp": [1, .nan]]))
    }
    guard case .invalidValue(let value, let context) = error else {
      Issue.record("expected invalidValue, got \(String(describing: error))")
      return
    }
    #expect((value as? Double)?.isNaN == true)
    #expect(jsonPathDescription(context.codingPath) == "readings.temp[1]")
    #expect(throws: EncodingError.self) { try encoder.encode(Double.infinity) }
    #expect(throws: EncodingError.self) { try encoder.encode(["x": -Float.infinity]) }
  }

  @Test("superEncoder and superDecoder nest the superclass under \"super\"")
  func superclasses() throws {
    let value = try encoder.encode(JSONCodingDog(name: "Rex", breed: "Lab"))
    #expect(value == ["breed": "Lab", "super": ["name": "Rex"]])
    let dog = try JSONValueDecoder().decode(JSONCodingDog.self, from: value)
    #expect(dog.name == "Rex")
    #expect(dog.breed == "Lab")
  }

  @Test("nested containers are filled in after creation, keeping key order")
  func nestedContainers() throws {
    let value = try encoder.encode(JSONCodingNested(x: 5, list: ["a", "b"]))
    #expect(value == ["outer": ["x": 5], "list": [["a"], ["b"]], "after": true])
    guard case .object(let object) = value else {
      Issue.record("expected an object")
      return
    }
    #expect(Array(object.keys) == ["outer", "list", "after"])
    #expect(try JSONValueDecoder().decode(JSONCodingNested.self, from: value) == JSONCodingNested(x: 5, list: ["a", "b"]))
  }

  @Test("codingPath is visible to values while encoding")
  func codingPathWhileEncoding() throws {
    struct Probe: Encodable {
      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(jsonPathDescription(encoder.codingPath))
      }
    }
    struct Outer: Encodable {
      var items: [[String: Probe]]
    }
    let value = try encoder.encode(Outer(items: [["a": Probe()], ["b": Probe()]]))
    #expect(value == ["items": [["a": "items[0].a"], ["b": "items[1].b"]]])
  }

  @Test("a top-level value that encodes nothing is an error")
  func emptyTopLevel() {
    struct Nothing: Encodable {
      func encode(to encoder: any Encoder) throws {}
    }
    #expect(throws: EncodingError.self) { try encoder.encode(Nothing()) }
  }

  @Test("userInfo reaches the values being encoded")
  func userInfo() throws {
    struct Reader: Encodable {
      func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(encoder.userInfo[JSONTestKey.userInfoKey] as? String ?? "missing")
      }
    }
    var encoder = JSONValueEncoder()
    encoder.userInfo[JSONTestKey.userInfoKey] = "hello"
    #expect(try encoder.encode(["x": Reader()]) == ["x": "hello"])
  }
}

// MARK: - Decoder

@Suite("JSONValueDecoder")
struct JSONValueDecoderTests {
  let decoder = JSONValueDecoder()

  @Test("the error path names exactly the bad value inside nested enums")
  func nestedEnumErrorPath() throws {
    let value = try JSONValue(parsing: #"{"counter":{"incrTapped":{"x":"oops"}}}"#)
    let error = #expect(throws: DecodingError.self) {
      try decoder.decode(JSONCodingAppAction.self, from: value)
    }
    guard case .typeMismatch(let type, let context) = error else {
      Issue.record("expected typeMismatch, got \(String(describing: error))")
      return
    }
    #expect(type is Int.Type)
    #expect(context.codingPath.map(\.stringValue) == ["counter", "incrTapped", "x"])
    #expect(jsonPathDescription(context.codingPath) == "counter.incrTapped.x")
    #expect(context.debugDescription.contains("found a string"))

    let synthesized = try JSONValue(parsing: #"{"counter":{"_0":{"incrTapped":{"x":"oops"}}}}"#)
    let synthesizedError = #expect(throws: DecodingError.self) {
      try decoder.decode(JSONCodingSynthesizedAction.self, from: synthesized)
    }
    // The unlabeled payload's "_0" is not on the wire, so it is not in the path either.
    #expect(synthesizedError.flatMap(jsonErrorPath(of:)) == "counter.incrTapped.x")
  }

  @Test(
    "error paths",
    arguments: [
      (#"{"count":1,"todos":[{"id":1,"title":"a","isComplete":true},{"id":2,"title":3,"isComplete":true}],"settings":{"theme":"x","volume":1}}"#, "todos[1].title"),
      (#"{"count":1,"todos":[{"id":1}],"settings":{"theme":"x","volume":1}}"#, "todos[0].title"),
      (#"{"count":1.5,"todos":[],"settings":{"theme":"x","volume":1}}"#, "count"),
      (#"{"count":1,"todos":[],"settings":{"theme":"x","volume":null}}"#, "settings.volume"),
      (#"{"count":1,"todos":[],"settings":{"theme":"x"}}"#, "settings.volume"),
      (#"{"count":1,"todos":{},"settings":{"theme":"x","volume":1}}"#, "todos"),
      (#"{"count":1,"todos":[],"selection":"x","settings":{"theme":"x","volume":1}}"#, "selection"),
    ]
  )
  func errorPaths(json: String, expectedPath: String) throws {
    let value = try JSONValue(parsing: json)
    let error = #expect(throws: DecodingError.self) {
      try decoder.decode(JSONCodingAppState.self, from: value)
    }
    #expect(error.flatMap(jsonErrorPath(of:)) == expectedPath)
  }

  @Test("keyNotFound names the containing path and the key")
  func keyNotFound() throws {
    let error = #expect(throws: DecodingError.self) {
      try decoder.decode(JSONCodingAppState.self, from: ["count": 1, "todos": [["id": 1]], "settings": [:]])
    }
    guard case .keyNotFound(let key, let context) = error else {
      Issue.record("expected keyNotFound, got \(String(describing: error))")
      return
    }
    #expect(key.stringValue == "title")
    #expect(jsonPathDescription(context.codingPath) == "todos[0]")
  }

  @Test("integers decode from integral doubles only, within range")
  func integers() throws {
    #expect(try decoder.decode(Int.self, from: .double(3.0)) == 3)
    #expect(try decoder.decode(Int.self, from: .int(3)) == 3)
    #expect(try decoder.decode(Double.self, from: .int(3)) == 3.0)
    #expect(try decoder.decode(Float.self, from: .double(0.1)) == Float(0.1))
    // Past 2^53 a Double stands for many integers, so none of them is taken from it.
    #expect(throws: DecodingError.self) { try decoder.decode(UInt64.self, from: .double(9223372036854775808)) }
    #expect(try decoder.decode(UInt64.self, from: .double(9007199254740991)) == 9_007_199_254_740_991)
    #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .double(3.5)) }
    #expect(throws: DecodingError.self) { try decoder.decode(Int8.self, from: .int(128)) }
    #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: .int(-1)) }
    #expect(throws: DecodingError.self) { try decoder.decode(Int.self, from: .double(1e300)) }
    #expect(throws: DecodingError.self) { try decoder.decode(Float.self, from: .double(1e300)) }
    #expect(throws: DecodingError.self) { try decoder.decode(Bool.self, from: .int(1)) }
    #expect(throws: DecodingError.self) { try decoder.decode(String.self, from: .int(1)) }
  }

  @Test("optionals: missing and null both decode as nil")
  func optionals() throws {
    struct Sample: Decodable, Equatable {
      var a: Int?
      var b: Int?
      var c: [Int?]
    }
    let sample = try decoder.decode(Sample.self, from: ["b": nil, "c": [1, nil]])
    #expect(sample == Sample(a: nil, b: nil, c: [1, nil]))
  }

  @Test("decoding past the end of an unkeyed container names the index")
  func unkeyedAtEnd() throws {
    struct Pair: Decodable {
      var first: Int
      var second: Int
      init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        first = try container.decode(Int.self)
        second = try container.decode(Int.self)
      }
    }
    let error = #expect(throws: DecodingError.self) {
      try decoder.decode([String: Pair].self, from: ["p": [1]])
    }
    #expect(error.flatMap(jsonErrorPath(of:)) == "p[1]")
  }

  @Test("unknown enum case and extra keys in synthesized enums are errors")
  func badEnums() throws {
    #expect(throws: DecodingError.self) { try decoder.decode(JSONCodingCounterAction.self, from: ["nope": [:]]) }
    #expect(throws: DecodingError.self) {
      try decoder.decode(JSONCodingCounterAction.self, from: ["incrTapped": ["x": 1], "decrTapped": [:]])
    }
    #expect(throws: DecodingError.self) { try decoder.decode(JSONTestColor.self, from: "purple") }
  }

  @Test("round trips of actions")
  func actionRoundTrips() throws {
    let actions: [JSONCodingAppAction] = [.counter(.incrTapped(x: -1)), .counter(.decrTapped), .counter(.set(2, animated: false)), .reset]
    for action in actions {
      let value = try JSONValueEncoder().encode(action)
      #expect(try decoder.decode(JSONCodingAppAction.self, from: value) == action)
    }
  }

  @Test("IdentifiedArray with duplicate ids fails to decode")
  func identifiedArrayDuplicates() {
    #expect(throws: (any Error).self) {
      try decoder.decode(IdentifiedArrayOf<JSONCodingTodo>.self, from: [["id": 1, "title": "a"], ["id": 1, "title": "b"]])
    }
  }

  @Test("jsonPathDescription formats keys, indices and odd names")
  func pathDescription() {
    #expect(jsonPathDescription([]) == "")
    #expect(jsonPathDescription([JSONTestKey("items"), _JSONIndexKey(3), JSONTestKey("name")]) == "items[3].name")
    #expect(jsonPathDescription([_JSONIndexKey(0)]) == "[0]")
    #expect(jsonPathDescription([JSONTestKey("headers"), JSONTestKey("content-type")]) == #"headers["content-type"]"#)
    #expect(jsonPathDescription([JSONTestKey("a"), JSONTestKey("")]) == #"a[""]"#)
    #expect(jsonPathDescription([JSONTestKey("map"), JSONTestKey(intValue: 7)]) == "map[7]")
  }
}

struct JSONTestKey: CodingKey {
  var stringValue: String
  var intValue: Int?

  init(_ string: String) {
    stringValue = string
  }

  init(stringValue: String) {
    self.stringValue = stringValue
  }

  init(intValue: Int) {
    self.stringValue = String(intValue)
    self.intValue = intValue
  }

  static let userInfoKey = CodingUserInfoKey(rawValue: "jsonTest")!
}

@Suite("IndexSet on the wire")
struct JSONIndexSetTests {
  @Test("an IndexSet is the array of its indexes, and Foundation's own form still decodes")
  func indexSets() throws {
    let indexes: IndexSet = [0, 2, 3]
    #expect(try JSONValueEncoder().encode(indexes) == [0, 2, 3])
    #expect(try JSONValueDecoder().decode(IndexSet.self, from: [3, 0, 2]) == indexes)
    let foundation = try JSONValue(parsing: JSONEncoder().encode(indexes))
    #expect(try JSONValueDecoder().decode(IndexSet.self, from: foundation) == indexes)
    #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(IndexSet.self, from: [1, -1]) }
  }
}
