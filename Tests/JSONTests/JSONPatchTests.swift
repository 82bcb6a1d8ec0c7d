import Foundation
import Testing

@testable import SwitchyardJSON

@Suite("JSONPatch")
struct JSONPatchTests {
  /// Applies a patch given as RFC 6902 text to a document given as JSON text.
  func apply(_ patch: String, to document: String) throws -> JSONValue {
    let patch = try JSONPatch(jsonValue: JSONValue(parsing: patch))
    return try patch.applied(to: JSONValue(parsing: document))
  }

  func json(_ text: String) throws -> JSONValue {
    try JSONValue(parsing: text)
  }

  // MARK: RFC 6902 Appendix A

  @Test("every kind of operation is written as its tree would be, escapes included")
  func everyOperationIsWrittenAsItsTree() {
    let value: JSONValue = ["name": "say \"hi\"\n", "list": [1, 2.5, nil, true], "": [:]]
    let patch = JSONPatch(operations: [
      .add(path: "/a~1b/0", value: value),
      .remove(path: "/m~0n"),
      .replace(path: "/\"quoted\"", value: "é"),
      .move(from: "/a", path: "/b"),
      .copy(from: "/x/-", path: ""),
      .test(path: "/t", value: nil),
    ])
    #expect(String(decoding: patch.serializedBytes(), as: UTF8.self) == patch.jsonValue.serialized())
    #expect(JSONPatch(operations: []).serializedBytes() == Array("[]".utf8))
  }

  @Test("A.1 adding an object member")
  func a1() throws {
    let result = try apply(#"[{"op":"add","path":"/baz","value":"qux"}]"#, to: #"{"foo":"bar"}"#)
    #expect(result == (try json(#"{"baz":"qux","foo":"bar"}"#)))
  }

  @Test("A.2 adding an array element")
  func a2() throws {
    let result = try apply(#"[{"op":"add","path":"/foo/1","value":"qux"}]"#, to: #"{"foo":["bar","baz"]}"#)
    #expect(result == (try json(#"{"foo":["bar","qux","baz"]}"#)))
  }

  @Test("A.3 removing an object member")
  func a3() throws {
    let result = try apply(#"[{"op":"remove","path":"/baz"}]"#, to: #"{"baz":"qux","foo":"bar"}"#)
    #expect(result == (try json(#"{"foo":"bar"}"#)))
  }

  @Test("A.4 removing an array element")
  func a4() throws {
    let result = try apply(#"[{"op":"remove","path":"/foo/1"}]"#, to: #"{"foo":["bar","qux","baz"]}"#)
    #expect(result == (try json(#"{"foo":["bar","baz"]}"#)))
  }

  @Test("A.5 replacing a value")
  func a5() throws {
    let result = try apply(#"[{"op":"replace","path":"/baz","value":"boo"}]"#, to: #"{"baz":"qux","foo":"bar"}"#)
    #expect(result == (try json(#"{"baz":"boo","foo":"bar"}"#)))
  }

  @Test("A.6 moving a value")
  func a6() throws {
    let result = try apply(
      #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
      to: #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#
    )
    #expect(result == (try json(#"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#)))
  }

  @Test("A.7 moving an array element")
  func a7() throws {
    let result = try apply(
      #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
      to: #"{"foo":["all","grass","cows","eat"]}"#
    )
    #expect(result == (try json(#"{"foo":["all","cows","eat","grass"]}"#)))
  }

  @Test("A.8 testing a value: success")
  func a8() throws {
    let document = #"{"baz":"qux","foo":["a",2,"c"]}"#
    let result = try apply(
      #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
      to: document
    )
    #expect(result == (try json(document)))
  }

  @Test("A.9 testing a value: error")
  func a9() throws {
    let error = #expect(throws: JSONPatchError.self) {
      try apply(#"[{"op":"test","path":"/baz","value":"bar"}]"#, to: #"{"baz":"qux"}"#)
    }
    #expect(error?.operationIndex == 0)
    #expect(error?.pointer == "/baz")
    #expect(error?.reason == #"test failed: expected "bar" but found "qux""#)
  }

  @Test("A.10 adding a nested member object")
  func a10() throws {
    let result = try apply(#"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#, to: #"{"foo":"bar"}"#)
    #expect(result == (try json(#"{"foo":"bar","child":{"grandchild":{}}}"#)))
  }

  @Test("A.11 ignoring unrecognized elements")
  func a11() throws {
    let result = try apply(#"[{"op":"add","path":"/baz","value":"qux","xyz":123}]"#, to: #"{"foo":"bar"}"#)
    #expect(result == (try json(#"{"foo":"bar","baz":"qux"}"#)))
  }

  @Test("A.12 adding to a nonexistent target")
  func a12() throws {
    let error = #expect(throws: JSONPatchError.self) {
      try apply(#"[{"op":"add","path":"/baz/bat","value":"qux"}]"#, to: #"{"foo":"bar"}"#)
    }
    #expect(error?.operationIndex == 0)
    #expect(error?.pointer == "/baz/bat")
    #expect(error?.description == "operation 0 (add /baz/bat) failed: no value at /baz")
  }

  @Test("A.13 invalid JSON Patch document: a repeated op member fails")
  func a13() throws {
    // The parser keeps the last "op", so this is a remove of a missing member.
    #expect(throws: (any Error).self) {
      try apply(#"[{"op":"add","path":"/baz","value":"qux","op":"remove"}]"#, to: #"{"foo":"bar"}"#)
    }
  }

  @Test("A.14 ~ escape ordering")
  func a14() throws {
    let document = #"{"/":9,"~1":10}"#
    let result = try apply(#"[{"op":"test","path":"/~01","value":10}]"#, to: document)
    #expect(result == (try json(document)))
  }

  @Test("A.15 comparing strings and numbers")
  func a15() throws {
    let error = #expect(throws: JSONPatchError.self) {
      try apply(#"[{"op":"test","path":"/~01","value":"10"}]"#, to: #"{"/":9,"~1":10}"#)
    }
    #expect(error?.pointer == JSONPointer(tokens: ["~1"]))
  }

  @Test("A.16 adding an array value")
  func a16() throws {
    let result = try apply(#"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#, to: #"{"foo":["bar"]}"#)
    #expect(result == (try json(#"{"foo":["bar",["abc","def"]]}"#)))
  }

  // MARK: Semantics

  @Test("add: index == count appends, - appends, beyond count fails, root replaces")
  func addSemantics() throws {
    let document: JSONValue = ["list": [1, 2]]
    #expect(try JSONPatch(operations: [.add(path: "/list/2", value: 3)]).applied(to: document) == ["list": [1, 2, 3]])
    #expect(try JSONPatch(operations: [.add(path: "/list/-", value: 3)]).applied(to: document) == ["list": [1, 2, 3]])
    #expect(try JSONPatch(operations: [.add(path: "/list/0", value: 0)]).applied(to: document) == ["list": [0, 1, 2]])
    #expect(try JSONPatch(operations: [.add(path: "", value: [1])]).applied(to: document) == [1])
    #expect(try JSONPatch(operations: [.add(path: "/list", value: nil)]).applied(to: document) == ["list": nil])

    let beyond = #expect(throws: JSONPatchError.self) {
      try JSONPatch(operations: [.add(path: "/list/3", value: 3)]).applied(to: document)
    }
    #expect(beyond?.reason == "cannot add at /list/3: index 3 is out of bounds (count 2)")
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.add(path: "/list/01", value: 3)]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.add(path: "/list/x", value: 3)]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.add(path: "/list/0/x", value: 3)]).applied(to: document) }
  }

  @Test("remove and replace require an existing target")
  func removeReplaceSemantics() throws {
    let document: JSONValue = ["a": 1, "list": [1, 2]]
    #expect(try JSONPatch(operations: [.remove(path: "/list/1")]).applied(to: document) == ["a": 1, "list": [1]])
    #expect(try JSONPatch(operations: [.replace(path: "/list/1", value: "x")]).applied(to: document) == ["a": 1, "list": [1, "x"]])
    #expect(try JSONPatch(operations: [.replace(path: "", value: 5)]).applied(to: document) == 5)
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.remove(path: "/list/2")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.remove(path: "/list/-")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.remove(path: "/b")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.remove(path: "")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.replace(path: "/b", value: 1)]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.replace(path: "/list/2", value: 1)]).applied(to: document) }
  }

  @Test("move and copy")
  func moveCopySemantics() throws {
    let document: JSONValue = ["a": ["b": 1], "list": [1, 2, 3]]
    #expect(try JSONPatch(operations: [.move(from: "/a/b", path: "/c")]).applied(to: document) == ["a": [:], "c": 1, "list": [1, 2, 3]])
    #expect(try JSONPatch(operations: [.move(from: "/list/0", path: "/list/-")]).applied(to: document) == ["a": ["b": 1], "list": [2, 3, 1]])
    #expect(try JSONPatch(operations: [.move(from: "/a", path: "/a")]).applied(to: document) == document)
    #expect(try JSONPatch(operations: [.copy(from: "/a", path: "/list/1")]).applied(to: document) == ["a": ["b": 1], "list": [1, ["b": 1], 2, 3]])
    #expect(try JSONPatch(operations: [.copy(from: "", path: "/self")]).applied(to: document)["self"] == document)

    let intoChild = #expect(throws: JSONPatchError.self) {
      try JSONPatch(operations: [.move(from: "/a", path: "/a/b/c")]).applied(to: document)
    }
    #expect(intoChild?.pointer == "/a")
    #expect(intoChild?.reason == "cannot move /a into its own descendant /a/b/c")
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.move(from: "/x", path: "/y")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.move(from: "/x", path: "/x")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.copy(from: "/x", path: "/y")]).applied(to: document) }
  }

  @Test("test uses JSON equality")
  func testSemantics() throws {
    let document: JSONValue = ["n": 1, "o": ["a": 1, "b": [1.5, nil]]]
    var copy = document
    #expect(throws: Never.self) {
      try JSONPatch(operations: [
        .test(path: "/n", value: 1.0),
        .test(path: "/o", value: ["b": [1.5, nil], "a": 1]),
        .test(path: "", value: document),
      ]).apply(to: &copy)
    }
    #expect(copy == document)
    #expect(try JSONPatch(operations: [.test(path: "/n", value: 1.0)]).applied(to: document) == document)
    #expect(try JSONPatch(operations: [.test(path: "/o", value: ["b": [1.5, nil], "a": 1])]).applied(to: document) == document)
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.test(path: "/n", value: "1")]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.test(path: "/o/b", value: [nil, 1.5])]).applied(to: document) }
    #expect(throws: JSONPatchError.self) { try JSONPatch(operations: [.test(path: "/missing", value: nil)]).applied(to: document) }
  }

  @Test("a failing patch leaves the document unchanged and names the operation")
  func atomicity() throws {
    let original: JSONValue = ["a": 1, "list": [1, 2], "nested": ["x": ["y": 1]]]
    var document = original
    let patch: JSONPatch = [
      .replace(path: "/a", value: 2),
      .add(path: "/list/-", value: 3),
      .remove(path: "/nested/x/y"),
      .add(path: "/new", value: true),
      .remove(path: "/nope"),
      .add(path: "/never", value: 1),
    ]
    let error = #expect(throws: JSONPatchError.self) { try patch.apply(to: &document) }
    #expect(error?.operationIndex == 4)
    #expect(error?.operation == .remove(path: "/nope"))
    #expect(error?.pointer == "/nope")
    #expect(error?.description == "operation 4 (remove /nope) failed: no value at /nope")
    #expect(document == original)
    #expect(document.serialized() == original.serialized())

    // A successful application mutates in place.
    try JSONPatch(operations: Array(patch.operations.prefix(4))).apply(to: &document)
    #expect(document == ["a": 2, "list": [1, 2, 3], "nested": ["x": [:]], "new": true])
  }

  @Test(
    "a patch that fails at its last operation leaves the document unchanged, a move that removed before it failed included",
    arguments: [
      [JSONPatch.Operation.replace(path: "/a", value: 2), .replace(path: "/nope", value: 1)],
      [.add(path: "/list/0", value: 0), .move(from: "/list/1", path: "/nope/x")],
      [.move(from: "/list/0", path: "/nope/x")],
      [.copy(from: "/a", path: "/list/9")],
    ]
  )
  func atomicityAtTheLastOperation(operations: [JSONPatch.Operation]) {
    let original: JSONValue = ["a": 1, "list": [1, 2]]
    var document = original
    let error = #expect(throws: JSONPatchError.self) { try JSONPatch(operations: operations).apply(to: &document) }
    #expect(error?.operationIndex == operations.count - 1)
    #expect(document == original)
  }

  // MARK: Representation

  @Test("wire format")
  func wireFormat() throws {
    let patch: JSONPatch = [
      .add(path: "/a/0", value: ["x": nil]),
      .remove(path: "/b"),
      .replace(path: "", value: 1),
      .move(from: "/c", path: "/d~1e"),
      .copy(from: "/f", path: "/g"),
      .test(path: "/h", value: nil),
    ]
    let expected = #"[{"op":"add","path":"/a/0","value":{"x":null}},{"op":"remove","path":"/b"},{"op":"replace","path":"","value":1},{"from":"/c","op":"move","path":"/d~1e"},{"from":"/f","op":"copy","path":"/g"},{"op":"test","path":"/h","value":null}]"#
    #expect(patch.jsonValue.serialized() == expected)
    #expect(patch.description == expected)
    #expect(try JSONValueEncoder().encode(patch) == patch.jsonValue)
    #expect(try JSONPatch(jsonValue: JSONValue(parsing: expected)) == patch)
    #expect(try JSONValueDecoder().decode(JSONPatch.self, from: JSONValue(parsing: expected)) == patch)
    let foundation = try JSONDecoder().decode(JSONPatch.self, from: Data(expected.utf8))
    #expect(foundation == patch)
    #expect(patch.count == 6)
    #expect(!patch.isEmpty)
    #expect(JSONPatch().isEmpty)
  }

  @Test(
    "a document read from its tree reads as the decoder reads it, extra members ignored",
    arguments: [
      #"[{"op":"remove","path":"/a","from":1,"extra":true}]"#,
      #"[{"op":"add","path":"/a","value":null}]"#,
      #"[{"op":"copy","from":"/x","path":"/y","value":3},{"op":"test","path":"","value":[1]}]"#,
      #"[]"#,
    ]
  )
  func readsLikeTheDecoder(text: String) throws {
    let value = try JSONValue(parsing: text)
    #expect(try JSONPatch(jsonValue: value) == JSONValueDecoder().decode(JSONPatch.self, from: value))
  }

  @Test(
    "a patch read straight from its text is the one read from its tree",
    arguments: [
      #"[{"op":"remove","path":"/a","from":1,"extra":true}]"#,
      #"[{"op":"add","path":"/a","value":null}]"#,
      #"[{"op":"copy","from":"/x","path":"/y","value":3},{"op":"test","path":"","value":[1]}]"#,
      #"[{"op":"replace","path":"/a~1b/0","value":{"c":[true,"d"]}},{"op":"move","from":"/x","path":"/z"}]"#,
      #"[{"op":"remove","path":"/a","op":"add","value":2}]"#,
      #"[{"op":"re\u0070lace","path":"/\u00e9","value":"\n"}]"#,
      #"[]"#,
    ]
  )
  func readsTextLikeItsTree(text: String) throws {
    let fromText = try Array(text.utf8).withUnsafeBytes { try JSONPatch(parsing: $0) }
    #expect(try fromText == JSONPatch(jsonValue: JSONValue(parsing: text)))
    // Read under a feature's pointer, as the daemon reads a worker's change: the same patch,
    // every path (and `from`) moved under it, however the text was read.
    let prefix = JSONPointer(tokens: ["primes", "a/b"])
    let underPrefix = try Array(text.utf8).withUnsafeBytes { try JSONPatch(parsing: $0, under: prefix) }
    #expect(try underPrefix == JSONPatch(jsonValue: JSONValue(parsing: text)).prefixed(by: prefix))
  }

  @Test(
    "a text that is no patch fails as its tree does, naming the member",
    arguments: [
      (#"[{"op":"add","path":"/a"}]"#, "[0].value"),
      (#"[{"op":"remove","path":"/a"},{"op":"remove","path":"a"}]"#, "[1].path"),
      (#"[{"op":"move","path":"/a","from":7}]"#, "[0].from"),
      (#"[{"op":1,"path":"/a"}]"#, "[0].op"),
      (#"{"op":"remove","path":"/a"}"#, ""),
    ]
  )
  func textThatIsNoPatch(text: String, path: String) throws {
    let error = #expect(throws: DecodingError.self) {
      try Array(text.utf8).withUnsafeBytes { try JSONPatch(parsing: $0) }
    }
    #expect(memberPath(of: error) == path)
  }

  @Test("a text that is no JSON fails where the parser stops")
  func textThatIsNoJSON() {
    #expect(throws: JSONParseError.self) {
      try Array(#"[{"op":"remove","path":"/a"}"#.utf8).withUnsafeBytes { try JSONPatch(parsing: $0) }
    }
  }

  @Test(
    "invalid patch documents fail with the path of the problem",
    arguments: [
      (#"[{"op":"add","path":"/a"}]"#, "[0].value"),
      (#"[{"op":"remove"}]"#, "[0].path"),
      (#"[{"op":"remove","path":"/a"},{"op":"remove","path":"a"}]"#, "[1].path"),
      (#"[{"op":"frobnicate","path":"/a"}]"#, "[0].op"),
      (#"[{"path":"/a"}]"#, "[0].op"),
      (#"[{"op":"move","path":"/a"}]"#, "[0].from"),
      (#"{"op":"remove","path":"/a"}"#, ""),
      (#"[{"op":1,"path":"/a"}]"#, "[0].op"),
    ]
  )
  func invalidDocuments(text: String, path: String) throws {
    let value = try JSONValue(parsing: text)
    let error = #expect(throws: DecodingError.self) { try JSONPatch(jsonValue: value) }
    #expect(memberPath(of: error) == path)
  }
}

/// The member a decoding error names, as `[0].path`.
private func memberPath(of error: DecodingError?) -> String? {
  switch error {
  case .keyNotFound(let key, let context)?: jsonPathDescription(context.codingPath + [key])
  case .typeMismatch(_, let context)?, .dataCorrupted(let context)?, .valueNotFound(_, let context)?:
    jsonPathDescription(context.codingPath)
  default: nil
  }
}
