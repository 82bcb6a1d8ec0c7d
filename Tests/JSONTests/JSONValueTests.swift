import Foundation
import Testing

@testable import SwitchyardJSON

@Suite("JSONValue")
struct JSONValueTests {
  @Test("literals build the expected cases")
  func literals() {
    let value: JSONValue = [
      "null": nil,
      "bool": true,
      "int": 42,
      "double": 2.5,
      "string": "Blob",
      "array": [1, "two"],
      "object": ["nested": false],
    ]
    guard case .object(let object) = value else {
      Issue.record("expected an object")
      return
    }
    #expect(Array(object.keys) == ["null", "bool", "int", "double", "string", "array", "object"])
    #expect(object["null"] == .null)
    #expect(object["bool"] == .bool(true))
    #expect(object["int"] == .int(42))
    #expect(object["double"] == .double(2.5))
    #expect(object["string"] == .string("Blob"))
    #expect(object["array"] == .array([.int(1), .string("two")]))
    #expect(object["object"] == .object(["nested": .bool(false)]))
  }

  @Test("a repeated key in a dictionary literal keeps the last value")
  func dictionaryLiteralDuplicateKeys() {
    let value: JSONValue = ["a": 1, "a": 2]
    #expect(value == ["a": 2])
  }

  @Test("numbers compare by value")
  func numericEquality() {
    #expect(JSONValue.int(1) == .double(1.0))
    #expect(JSONValue.double(1.0) == .int(1))
    #expect(JSONValue.int(0) == .double(-0.0))
    #expect(JSONValue.int(1) != .double(1.5))
    #expect(JSONValue.int(Int64.max) != .double(9.223372036854775807e18))
    #expect(JSONValue.int(1 << 53 + 1) != .double(Double(1 << 53)))
    #expect(JSONValue.int(1) != .string("1"))
    #expect(JSONValue.int(1) != .bool(true))
    #expect(JSONValue.null != .int(0))
    #expect(JSONValue.double(.nan) == .double(.nan))
  }

  @Test("objects compare ignoring member order, arrays do not")
  func orderInsensitiveObjects() {
    let a: JSONValue = ["x": 1, "y": [1, 2], "z": ["p": nil, "q": true]]
    let b: JSONValue = ["z": ["q": true, "p": nil], "y": [1, 2], "x": 1.0]
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(JSONValue.array([1, 2]) != [2, 1])
    #expect(JSONValue.object(["x": 1]) != ["x": 1, "y": 2])
    #expect(JSONValue.object(["x": 1, "y": 2]) != ["x": 1, "z": 2])
  }

  @Test("hashing is consistent with equality")
  func hashing() {
    let values: Set<JSONValue> = [1, 1.0, -0.0, 0, ["a": 1, "b": 2], ["b": 2.0, "a": 1], [1, 2], [2, 1], "1"]
    #expect(values.count == 6)
    #expect(values.contains([2.0, 1]))
    #expect(values.contains(["a": 1.0, "b": 2]))
    #expect(JSONValue.double(.nan).hashValue == JSONValue.double(.nan).hashValue)
  }

  @Test("description is the compact, key-sorted serialization")
  func description() {
    let value: JSONValue = ["b": [true, nil], "a": 1.5]
    #expect(value.description == #"{"a":1.5,"b":[true,null]}"#)
    #expect("\(value)" == #"{"a":1.5,"b":[true,null]}"#)
  }

  @Test("convenience accessors")
  func accessors() {
    let value: JSONValue = ["list": [10, 20], "name": "Blob"]
    #expect(value["name"] == "Blob")
    #expect(value["missing"] == nil)
    #expect(value["list"]?[1] == 20)
    #expect(value["list"]?[2] == nil)
    #expect(value[0] == nil)
    #expect(JSONValue.null.isNull)
    #expect(!JSONValue.int(0).isNull)
  }

  @Test("JSONValue is Codable through Foundation as the JSON it represents")
  func codableThroughFoundation() throws {
    let value: JSONValue = ["a": [1, 2.5, "x", nil, true], "b": ["c": [:]], "big": 1e300]
    let data = try JSONEncoder().encode(value)
    let text = String(decoding: data, as: UTF8.self)
    #expect(try JSONValue(parsing: text) == value)
    #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    #expect(try JSONDecoder().decode(JSONValue.self, from: Data("18446744073709551615".utf8)) == .double(1.8446744073709552e19))
  }

  @Test("JSONValue passes through JSONValueEncoder/JSONValueDecoder untouched")
  func codableThroughTreeCoders() throws {
    struct Envelope: Codable, Equatable {
      var kind: String
      var payload: JSONValue
    }
    let envelope = Envelope(kind: "state", payload: ["count": 1, "items": [["id": 1]]])
    let encoded = try JSONValueEncoder().encode(envelope)
    #expect(encoded == ["kind": "state", "payload": ["count": 1, "items": [["id": 1]]]])
    #expect(try JSONValueDecoder().decode(Envelope.self, from: encoded) == envelope)
    #expect(try JSONValueEncoder().encode(JSONValue.null) == .null)
  }
}
