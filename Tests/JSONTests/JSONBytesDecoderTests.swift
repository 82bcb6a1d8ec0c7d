import Foundation
import PropertyBased
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJSON

// MARK: - Oracle

/// What decoding gave: a value, or an error described by its kind, path and text.
enum BytesDecodingOutcome<T: Equatable>: Equatable, CustomStringConvertible {
  case value(T)
  case failure(String)

  init(_ body: () throws -> T) {
    do {
      self = .value(try body())
    } catch let error as DecodingError {
      self = .failure(Self.describe(error))
    } catch let error as JSONParseError {
      self = .failure("parse: \(error)")
    } catch {
      self = .failure("other: \(error)")
    }
  }

  static func describe(_ error: DecodingError) -> String {
    switch error {
    case .typeMismatch(let type, let context):
      "typeMismatch(\(type)) at \(jsonPathDescription(context.codingPath)): \(context.debugDescription)"
    case .valueNotFound(let type, let context):
      "valueNotFound(\(type)) at \(jsonPathDescription(context.codingPath)): \(context.debugDescription)"
    case .keyNotFound(let key, let context):
      "keyNotFound(\(key.stringValue)) at \(jsonPathDescription(context.codingPath)): \(context.debugDescription)"
    case .dataCorrupted(let context):
      "dataCorrupted at \(jsonPathDescription(context.codingPath)): \(context.debugDescription)"
    @unknown default:
      "\(error)"
    }
  }

  var description: String {
    switch self {
    case .value(let value): "value \(value)"
    case .failure(let text): text
    }
  }
}

/// Decodes `text` as `T` through `JSONValue(parsing:)` and ``JSONValueDecoder`` (the oracle), and
/// straight from its bytes, ignoring unknown keys.
func decodedBothWays<T: Decodable & Equatable>(
  _ type: T.Type, _ text: some Collection<UInt8>
) -> (tree: BytesDecodingOutcome<T>, bytes: BytesDecodingOutcome<T>) {
  let tree = BytesDecodingOutcome { try JSONValueDecoder().decode(T.self, from: JSONValue(parsing: text)) }
  let bytes = BytesDecodingOutcome { try JSONBytesDecoder(refusesUnknownKeys: false).decode(T.self, from: text) }
  return (tree, bytes)
}

func expectSameDecoding<T: Decodable & Equatable>(
  _ type: T.Type, _ text: String, sourceLocation: SourceLocation = #_sourceLocation
) {
  let (tree, bytes) = decodedBothWays(T.self, Array(text.utf8))
  #expect(tree == bytes, "\(text)", sourceLocation: sourceLocation)
}

// MARK: - Fixtures

private enum BytesCounterAction: Codable, Equatable {
  case incrTapped
  case decrTapped
  case set(to: Int)
}

private enum BytesAppAction: Codable, Equatable {
  case counter(BytesCounterAction)
  case loaded([Int])
  case renamed(String)
  case status(JSONTestStatus)
  case moved(from: Int, to: Int?)
  case tagged(id: UUID, at: Date)
}

private struct BytesItem: Codable, Equatable {
  var name: String
  var count: Int?
  var tags: [String]?
}

private struct BytesEnvelope: Codable, Equatable {
  var items: [BytesItem]
  var byName: [String: BytesItem]
  var action: BytesAppAction?
}

/// A type that asks for the same object twice, with different keys.
private struct BytesTwoContainers: Decodable, Equatable {
  enum A: String, CodingKey { case a }
  enum B: String, CodingKey { case b }
  var a: Int
  var b: Int
  init(from decoder: any Decoder) throws {
    a = try decoder.container(keyedBy: A.self).decode(Int.self, forKey: .a)
    b = try decoder.container(keyedBy: B.self).decode(Int.self, forKey: .b)
  }
}

private final class BytesAnimal: Codable, Equatable {
  var name: String
  init(name: String) { self.name = name }
  static func == (lhs: BytesAnimal, rhs: BytesAnimal) -> Bool { lhs.name == rhs.name }
}

private final class BytesDog: Decodable, Equatable {
  var breed: String
  var animal: BytesAnimal
  enum CodingKeys: String, CodingKey { case breed }
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    breed = try container.decode(String.self, forKey: .breed)
    animal = try BytesAnimal(from: container.superDecoder())
  }
  static func == (lhs: BytesDog, rhs: BytesDog) -> Bool { lhs.breed == rhs.breed && lhs.animal == rhs.animal }
}

private func unknownKeyPath(_ text: String, as type: (some Decodable).Type) -> String? {
  do {
    _ = try JSONBytesDecoder().decode(type, from: text)
    return nil
  } catch let error as JSONUnknownKeyError {
    return jsonPathDescription(error.codingPath)
  } catch {
    return "other: \(error)"
  }
}

// MARK: - Tests

@Suite("JSONBytesDecoder")
struct JSONBytesDecoderTests {
  @Test(
    "decodes what JSONValueDecoder decodes, and fails where it fails, with the same path",
    arguments: [
      #"{"counter":{"incrTapped":{}}}"#,
      #"{"counter":{"set":{"to":3}}}"#,
      #"{"counter":{"set":{"to":"3"}}}"#,
      #"{"counter":{"set":{"to":3.5}}}"#,
      #"{"counter":{"set":{"to":3.0}}}"#,
      #"{"counter":{"set":{"to":1e-400}}}"#,
      #"{"counter":{"set":{"to":9007199254740993.0}}}"#,
      #"{"counter":{"set":{"to":null}}}"#,
      #"{"counter":{"set":{}}}"#,
      #"{"counter":{"bogus":{}}}"#,
      #"{"counter":{}}"#,
      #"{"counter":{"incrTapped":{},"decrTapped":{}}}"#,
      #"{"counter":{"incrTapped":{},"incrTapped":{}}}"#,
      #"{"counter":{"incrTapped":{},"incr\u0054apped":{"x":null}}}"#,
      #"{"counter":{"incrTapped":{},"incr\u0054apped":{},"decrTapped":{}}}"#,
      #"{"counter":"incrTapped"}"#,
      #"{"counter":[]}"#,
      #"{"counter":null}"#,
      #"{"loaded":[2,3]}"#,
      #"{"loaded":{"_0":[2,3]}}"#,
      #"{"loaded":{"_0":[2,"x"]}}"#,
      #"{"loaded":[2,"x"]}"#,
      #"{"loaded":null}"#,
      #"{"renamed":"x"}"#,
      #"{"renamed":{"_0":"x"}}"#,
      #"{"renamed":5}"#,
      #"{"status":{"loaded":{"_0":"s","count":2}}}"#,
      #"{"status":{"failed":{"code":1}}}"#,
      #"{"status":{"failed":{"code":1,"message":null}}}"#,
      #"{"status":{"failed":{"_0":{"code":"x"}}}}"#,
      #"{"status":{"failed":{"code":"x"}}}"#,
      #"{"status":{"failed":{"bogus":{}}}}"#,
      #"{"status":{"nope":{}}}"#,
      #"{"moved":{"from":1,"to":null}}"#,
      #"{"moved":{"from":1}}"#,
      #"{"moved":{"from":-1,"to":2}}"#,
      #"{"tagged":{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","at":12.5}}"#,
      #"{"tagged":{"id":"nope","at":12.5}}"#,
      #"{"tagged":{"id":"E621E1F8-C36C-495A-93FC-0C247A3E6E5F","at":"x"}}"#,
      "[]", "null", "1", #""x""#, "{", #"{"a":1,}"#, "[1] x",
    ]
  )
  func sameAsTreeDecoderForActions(text: String) {
    expectSameDecoding(BytesAppAction.self, text)
  }

  @Test(
    "structs, arrays, dictionaries and optionals decode as from the tree",
    arguments: [
      #"{"items":[],"byName":{}}"#,
      #"{"items":[{"name":"a"},{"name":"b","count":2,"tags":["x"]}],"byName":{"k":{"name":"c"}},"action":null}"#,
      #"{"items":[{"name":"a"},{"name":5}],"byName":{}}"#,
      #"{"items":[{"name":"a"},{}],"byName":{}}"#,
      #"{"items":[{"name":"a"}],"byName":{"k":{"name":"c","count":1.5}}}"#,
      #"{"items":[{"name":"a"}],"byName":{"a\"b":{"name":"c","count":true}}}"#,
      #"{"items":{},"byName":{}}"#,
      #"{"items":[],"byName":[]}"#,
      #"{"items":[],"byName":{},"action":{"loaded":[1]}}"#,
      #"{"items":[],"byName":{},"items":[{"name":"last wins"}]}"#,
      #"{"items":[{"name":"\u00e9\ud83d\ude00\n"}],"byName":{"\u006b":{"name":"escaped key"}}}"#,
    ]
  )
  func sameAsTreeDecoderForStructs(text: String) {
    expectSameDecoding(BytesEnvelope.self, text)
  }

  @Test("integers, floats and Foundation types follow JSONValueDecoder's rules")
  func scalars() {
    for text in ["0", "-0", "127", "128", "-129", "1.0", "1e2", "0.0", "1e-400", "1.5", "\"1\"", "null", "true"] {
      expectSameDecoding(Int8.self, text)
      expectSameDecoding(UInt8.self, text)
      expectSameDecoding(Int.self, text)
      expectSameDecoding(Float.self, text)
      expectSameDecoding(Double.self, text)
      expectSameDecoding(Decimal.self, text)
      expectSameDecoding(Bool.self, text)
    }
    for text in ["1e39", "-1e39", "3.4e38", "9223372036854775807", "9223372036854775808", "18446744073709551615"] {
      expectSameDecoding(Float.self, text)
      expectSameDecoding(Int64.self, text)
      expectSameDecoding(UInt64.self, text)
      expectSameDecoding(Int128.self, text)
    }
    for text in [
      "[0,2,5]", "[-1]", "[1.5]", #"{"indexes":[{"location":0,"length":2}]}"#, #"{"indexes":[{"location":-1,"length":2}]}"#,
      #"{"indexes":[{"location":0,"length":100000}]}"#, #"{"indexes":{}}"#, #"{"nope":1}"#, "7", "null",
      #"{"indexes":[{"location":0,"length":10},{"location":0,"length":9223372036854775798}]}"#,
    ] {
      expectSameDecoding(IndexSet.self, text)
    }
    for text in ["[1,2,255]", "[256]", "[-1]", "\"AQI=\"", "{}"] {
      expectSameDecoding(Data.self, text)
    }
    for text in [#""https://example.com/a?b""#, #""""#, "1"] {
      expectSameDecoding(URL.self, text)
    }
    for text in ["0", "1e300", #""2001-01-01""#, #""2001-01-01T00:00:00.5Z""#, #""2001-02-29T00:00:00Z""#, "null"] {
      expectSameDecoding(Date.self, text)
    }
  }

  @Test("other Foundation types are refused, as by JSONValueDecoder")
  func otherFoundationTypesRefused() {
    expectSameDecoding(DateInterval.self, #"{"start":0,"duration":-1}"#)
    expectSameDecoding(Measurement<UnitLength>.self, #"{"value":1,"unit":{"symbol":"m","converter":{}}}"#)
    #expect(throws: DecodingError.self) {
      try JSONBytesDecoder().decode(DateInterval.self, from: #"{"start":0,"duration":-1}"#)
    }
  }

  @Test("JSONValue members are the parsed subtree")
  func jsonValueMembers() throws {
    struct Holder: Codable, Equatable { var payload: JSONValue; var rest: [JSONValue] }
    expectSameDecoding(Holder.self, #"{"payload":{"a":[1,2.5,"x",null,true,{"b":{}}]},"rest":[[],{},"é"]}"#)
    let holder = try JSONBytesDecoder().decode(Holder.self, from: #"{"payload":{"z":1,"a":2},"rest":[]}"#)
    #expect(holder.payload == ["z": 1, "a": 2])
  }

  @Test("a type may ask for the same object twice, and a superclass from \"super\"")
  func repeatedContainersAndSuper() throws {
    #expect(try JSONBytesDecoder().decode(BytesTwoContainers.self, from: #"{"a":1,"b":2}"#) == (try JSONValueDecoder().decode(BytesTwoContainers.self, from: ["a": 1, "b": 2])))
    #expect(unknownKeyPath(#"{"a":1,"b":2,"c":3}"#, as: BytesTwoContainers.self) == "c")
    let dog = try JSONBytesDecoder().decode(BytesDog.self, from: #"{"breed":"collie","super":{"name":"Lassie"}}"#)
    #expect(dog.animal.name == "Lassie")
    #expect(unknownKeyPath(#"{"breed":"collie","super":{"name":"Lassie","age":3}}"#, as: BytesDog.self) == "super.age")
    expectSameDecoding(BytesDog.self, #"{"breed":"collie"}"#)
  }

  @Test("userInfo reaches the values being decoded")
  func userInfo() throws {
    struct Reader: Decodable {
      var version: Int?
      init(from decoder: any Decoder) throws {
        version = decoder.userInfo[CodingUserInfoKey(rawValue: "version")!] as? Int
      }
    }
    let decoder = JSONBytesDecoder(userInfo: [CodingUserInfoKey(rawValue: "version")!: 2])
    #expect(try decoder.decode(Reader.self, from: "{}").version == 2)
  }

  @Test("decodes from a layout's inner value, with paths starting there")
  func fromLayout() throws {
    let text = Array(#"{"method":"x","parameters":{"action":{"counter":{"set":{"to":"x"}}}}}"#.utf8)
    try text.withUnsafeBytes { bytes in
      let layout = try JSONLayout(scanning: bytes)
      let parameters = try #require(layout.member("parameters", of: layout.root, in: bytes))
      let action = try #require(layout.member("action", of: parameters, in: bytes))
      #expect(layout.kind(of: action) == .object)
      #expect(layout.member("nope", of: parameters, in: bytes) == nil)
      let error = BytesDecodingOutcome { try JSONBytesDecoder().decode(BytesAppAction.self, from: bytes, layout: layout, at: action) }
      #expect(error.description.hasPrefix("typeMismatch(Int) at counter.set.to"))
      #expect(throws: JSONParseError.self) {
        try Array("{}".utf8).withUnsafeBytes { other in
          try JSONBytesDecoder().decode(JSONValue.self, from: other, layout: layout, at: action)
        }
      }
    }
  }
}

@Suite("JSONBytesDecoder unknown keys")
struct JSONBytesDecoderUnknownKeyTests {
  @Test(
    "a key the type never asked for is an error naming its path",
    arguments: [
      (#"{"counter":{"incrTapped":{}},"extra":1}"#, "extra"),
      (#"{"counter":{"incrTapped":{"x":1}}}"#, "counter.incrTapped.x"),
      (#"{"counter":{"set":{"to":1,"by":2}}}"#, "counter.set.by"),
      (#"{"counter":{"incrTapped":{},"bogus":{}}}"#, "counter.bogus"),
      (#"{"loaded":{"_0":[1],"x":1}}"#, "loaded.x"),
      (#"{"status":{"failed":{"code":1,"extra":[]}}}"#, "status.failed.extra"),
      (#"{"status":{"failed":{"_0":{"code":1,"extra":"x"}}}}"#, "status.failed.extra"),
      (#"{"status":{"loaded":{"_0":"s","count":2,"more":false}}}"#, "status.loaded.more"),
      (#"{"moved":{"from":1,"to":2,"via":3}}"#, "moved.via"),
    ] as [(String, String)]
  )
  func unknownKeysInActions(text: String, path: String) {
    #expect(unknownKeyPath(text, as: BytesAppAction.self) == path)
    // Without the check, the same text decodes.
    #expect(throws: Never.self) { try JSONBytesDecoder(refusesUnknownKeys: false).decode(BytesAppAction.self, from: text) }
  }

  @Test(
    "in arrays and dictionaries' values too; the first in the text is named",
    arguments: [
      (#"{"items":[{"name":"a"},{"name":"b","cnt":2}],"byName":{}}"#, "items[1].cnt"),
      (#"{"items":[],"byName":{"k":{"name":"c","x":{}}}}"#, "byName.k.x"),
      (#"{"items":[{"name":"a","y":1,"z":2}],"byName":{}}"#, "items[0].y"),
      (#"{"items":[],"byName":{},"action":{"counter":{"set":{"to":1,"x":0}}}}"#, "action.counter.set.x"),
      (#"{"items":[],"byName":{},"top":true}"#, "top"),
    ] as [(String, String)]
  )
  func unknownKeysInStructs(text: String, path: String) {
    #expect(unknownKeyPath(text, as: BytesEnvelope.self) == path)
  }

  @Test(
    "null-valued unknown keys, repeated known keys and both payload forms are accepted",
    arguments: [
      #"{"counter":{"incrTapped":{}},"extra":null}"#,
      #"{"counter":{"set":{"to":1,"by":null}}}"#,
      #"{"counter":{"incrTapped":{"ignored":null}}}"#,
      #"{"loaded":[2,3]}"#,
      #"{"loaded":{"_0":[2,3]}}"#,
      #"{"status":{"failed":{"code":1}}}"#,
      #"{"status":{"failed":{"_0":{"code":1}}}}"#,
      #"{"status":{"failed":{"code":1,"code":2}}}"#,
      #"{"moved":{"from":1}}"#,
    ]
  )
  func accepted(text: String) throws {
    #expect(unknownKeyPath(text, as: BytesAppAction.self) == nil)
    #expect(try JSONBytesDecoder().decode(BytesAppAction.self, from: text) == (try JSONValueDecoder().decode(BytesAppAction.self, from: JSONValue(parsing: text))))
  }

  @Test("members past the 64th are tracked too")
  func manyMembers() throws {
    var members = (0..<100).map { "\"k\($0)\":\($0)" }
    let text = "{" + members.joined(separator: ",") + "}"
    #expect(try JSONBytesDecoder().decode([String: Int].self, from: text).count == 100)
    struct Two: Decodable { var k3: Int; var k70: Int }
    #expect(unknownKeyPath(text, as: Two.self) == "k0")
    members = (0..<100).map { "\"k\($0)\":null" }
    members.append(#""k70":1,"k3":2"#)
    let two = try JSONBytesDecoder().decode(Two.self, from: "{" + members.joined(separator: ",") + "}")
    #expect(two.k3 == 2 && two.k70 == 1)
    // A large object is indexed once, not searched for each key.
    let large = "{" + (0..<50_000).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
    #expect(try JSONBytesDecoder().decode([String: Int].self, from: large)["k49999"] == 49_999)
    #expect(unknownKeyPath(large, as: Two.self) == "k0")
  }

  @Test("an enum meeting a key that is none of its cases says which key")
  func unknownCase() throws {
    for (text, name, path) in [
      (#"{"counter":{"bogus":{}}}"#, "bogus", "counter"),
      (#"{"nope":{}}"#, "nope", ""),
      (#"{"status":{"failed":{"_0":{"x":1}}}}"#, nil, "status.failed"),
      (#"{"status":{"zzz":{"_0":{}}}}"#, "zzz", "status"),
    ] as [(String, String?, String)] {
      do {
        _ = try JSONBytesDecoder().decode(BytesAppAction.self, from: text)
        Issue.record("decoded \(text)")
      } catch DecodingError.typeMismatch(_, let context) {
        #expect((context.underlyingError as? JSONUnknownCaseError)?.name == name, "\(text)")
        #expect(jsonPathDescription(context.codingPath) == path, "\(text)")
      } catch {
        if name != nil { Issue.record("\(text): \(error)") }
      }
    }
  }
}

@Suite("JSONBytesDecoder malformed input")
struct JSONBytesDecoderMalformedTests {
  @Test(
    "refused exactly where JSONValue(parsing:) refuses it",
    arguments: [
      "", " ", "{", "}", "[", "[1,]", #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, #"{a:1}"#, "01", "-", "1.", "1e", "-01",
      "1e400", "-1e400", "tru", "nul", "[1]x", "\u{FEFF}1", #""\ud800""#, #""\udc00""#, #""\ud800\u0041""#,
      #""\x""#, #""\u12G4""#, "\"a\u{1}\"", "\"abc", #""\"#, "'a'", "/* */1", #"{"a":1}}"#, "[[[]]", "NaN",
      "[\"\u{7F}\", \"é\"]",
    ]
  )
  func malformed(text: String) {
    expectSameDecoding(JSONValue.self, text)
    expectSameDecoding([String: Int].self, text)
  }

  @Test("invalid UTF-8 is refused at the same byte")
  func invalidUTF8() {
    for bytes: [UInt8] in [
      [0x22, 0xFF, 0x22], [0x22, 0x61, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22],
      [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x5C, 0x6E, 0x82, 0x22], [0x5B, 0x22, 0xF0, 0x9F, 0x98, 0x22, 0x5D],
      [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22],
    ] {
      let (tree, decoded) = decodedBothWays(JSONValue.self, bytes)
      #expect(tree == decoded, "\(bytes)")
    }
  }

  @Test("the same depth limit")
  func depth() {
    let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
    expectSameDecoding(JSONValue.self, deep)
    let limit = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    expectSameDecoding(JSONValue.self, limit)
    let tooDeep = BytesDecodingOutcome { try JSONBytesDecoder(maximumDepth: 3).decode([[[[Int]]]].self, from: "[[[[1]]]]") }
    #expect(tooDeep.description.contains("maximum nesting depth of 3"))
  }
}

@Suite("JSONBytesDecoder properties")
struct JSONBytesDecoderPropertyTests {
  @Test("random models encode and decode back, with no unknown keys")
  func modelsRoundTrip() async {
    await propertyCheck(count: 300, input: JSONGen.model) { model in
      let text = try JSONValueEncoder().encode(model).serializedBytes()
      let decoded = try JSONBytesDecoder().decode(JSONTestModel.self, from: text)
      #expect(decoded == model)
      let (tree, bytes) = decodedBothWays(JSONTestModel.self, text)
      #expect(tree == bytes)
    }
  }

  @Test("a key added anywhere in an encoded model is named with its path, unless its value is null")
  func addedKeysAreFound() async {
    /// The paths of the objects in `value` that are a struct's or an enum's (not a dictionary's).
    func objectPaths(_ value: JSONValue, at path: [String]) -> [[String]] {
      switch value {
      case .object(let object):
        if path.last == "scores" || path.last == "byIndex" { return [] }
        return [path] + object.flatMap { objectPaths($0.value, at: path + [$0.key]) }
      case .array(let array):
        return array.enumerated().flatMap { objectPaths($0.element, at: path + [String($0.offset)]) }
      default:
        return []
      }
    }
    func adding(_ value: JSONValue, at path: ArraySlice<String>, to tree: JSONValue) -> JSONValue {
      switch tree {
      case .object(var object):
        guard let first = path.first else {
          object["zzExtra"] = value
          return .object(object)
        }
        object[first] = adding(value, at: path.dropFirst(), to: object[first] ?? .null)
        return .object(object)
      case .array(var array):
        let index = Int(path.first!)!
        array[index] = adding(value, at: path.dropFirst(), to: array[index])
        return .array(array)
      default:
        return tree
      }
    }
    await propertyCheck(count: 300, input: JSONGen.model, Gen.int(in: 0...Int.max)) { model, seed in
      var rng = SplitMix64(seed: UInt64(seed))
      let encoded = try JSONValueEncoder().encode(model)
      let path = objectPaths(encoded, at: []).randomElement(using: &rng)!
      let isNull = Int.random(in: 0..<4, using: &rng) == 0
      let text = adding(isNull ? .null : ["x": [1]], at: path[...], to: encoded).serializedBytes()
      do {
        #expect(try JSONBytesDecoder().decode(JSONTestModel.self, from: text) == model)
        #expect(isNull, "\(path) not found")
      } catch let error as JSONUnknownKeyError {
        let tokens = error.codingPath.compactMap { key -> String? in
          key.stringValue == "_0" ? nil : key.intValue.map(String.init) ?? key.stringValue
        }
        #expect(!isNull && tokens == path + ["zzExtra"] && error.key == "zzExtra", "\(error)")
      }
    }
  }

  @Test("random JSON values decode as any of several types exactly as from the tree")
  func randomValuesSameAsTree() async {
    await propertyCheck(count: 400, input: JSONGen.value) { value in
      let text = value.serializedBytes()
      let (treeValue, bytesValue) = decodedBothWays(JSONValue.self, text)
      #expect(treeValue == bytesValue)
      #expect(treeValue == .value(value))
      let (treeModel, bytesModel) = decodedBothWays(JSONTestModel.self, text)
      #expect(treeModel == bytesModel)
      let (treeDictionary, bytesDictionary) = decodedBothWays([String: [Int?]].self, text)
      #expect(treeDictionary == bytesDictionary)
      let (treeAction, bytesAction) = decodedBothWays(BytesAppAction.self, text)
      #expect(treeAction == bytesAction, "\(value)")
      let (treeStatus, bytesStatus) = decodedBothWays([JSONTestStatus].self, text)
      #expect(treeStatus == bytesStatus, "\(value)")
      let (treeEnvelope, bytesEnvelope) = decodedBothWays(BytesEnvelope.self, text)
      #expect(treeEnvelope == bytesEnvelope, "\(value)")
    }
  }

  @Test("random edits of JSON texts are accepted or refused exactly as JSONValue(parsing:) does")
  func randomTextsSameAsParser() async {
    await propertyCheck(count: 1000, input: JSONGen.value, Gen.int(in: 0...Int.max)) { value, seed in
      var rng = SplitMix64(seed: UInt64(seed))
      var text = value.serializedBytes()
      let alphabet = Array(#"{}[]",:\ue0123456789.-+tfnrl"#.utf8) + [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xA9, 0xED, 0xF0, 0xFF, 0x20, 0x0A]
      for _ in 0..<Int.random(in: 1...3, using: &rng) {
        let offset = Int.random(in: 0...text.count, using: &rng)
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: text.insert(alphabet.randomElement(using: &rng)!, at: offset)
        case 1: if offset < text.count { text.remove(at: offset) }
        default: if offset < text.count { text[offset] = alphabet.randomElement(using: &rng)! }
        }
      }
      let (tree, bytes) = decodedBothWays(JSONValue.self, text)
      #expect(tree == bytes, "\(String(decoding: text, as: UTF8.self))")
    }
  }

  @Test("the UTF-8 check agrees with String(validating:)")
  func utf8Check() async {
    await propertyCheck(count: 2000, input: Gen.int(in: 0...Int.max)) { seed in
      var rng = SplitMix64(seed: UInt64(seed))
      let interesting: [UInt8] = [0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xA0, 0xED, 0x9F, 0xEF, 0xF0, 0x90, 0xF4, 0x8F, 0xF5, 0xFF]
      let bytes = (0..<Int.random(in: 0...6, using: &rng)).map { _ in
        Bool.random(using: &rng) ? interesting.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
      }
      let valid = bytes.withUnsafeBufferPointer { _firstInvalidUTF8Offset($0) == bytes.count }
      #expect(valid == (String(validating: bytes, as: UTF8.self) != nil), "\(bytes)")
    }
  }
}
