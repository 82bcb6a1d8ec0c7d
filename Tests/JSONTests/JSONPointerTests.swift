import Testing

@testable import SwitchyardJSON

@Suite("JSONPointer")
struct JSONPointerTests {
  @Test(
    "parsing unescapes ~1 then ~0",
    arguments: [
      ("", [String]()),
      ("/", [""]),
      ("//", ["", ""]),
      ("/foo", ["foo"]),
      ("/foo/0", ["foo", "0"]),
      ("/a~1b", ["a/b"]),
      ("/m~0n", ["m~n"]),
      ("/~01", ["~1"]),
      ("/~10", ["/0"]),
      ("/ ", [" "]),
      ("/é/😀", ["é", "😀"]),
      ("/a/", ["a", ""]),
    ]
  )
  func parsing(text: String, tokens: [String]) throws {
    let pointer = try JSONPointer(parsing: text)
    #expect(pointer.tokens == tokens)
    #expect(pointer.description == text)
  }

  @Test(
    "a pointer without escapes is read straight from its bytes, as the parser reads it; any other is left to the parser",
    arguments: ["", "/", "//", "/foo", "/foo/0", "/ ", "/é/😀", "/a/", "/a~1b", "/m~0n", "a", "#/a", "/a~2"]
  )
  func plainBytes(text: String) throws {
    var utf8 = text
    let plain = utf8.withUTF8 { JSONPointer(plainUTF8: $0) }
    let underFeature = utf8.withUTF8 { JSONPointer(plainUTF8: $0, under: JSONPointer(tokens: ["primes"])) }
    if text.contains("~") || !(text.isEmpty || text.hasPrefix("/")) {
      #expect(plain == nil)
      #expect(underFeature == nil)
    } else {
      #expect(plain == (try JSONPointer(parsing: text)))
      #expect(plain?.description == text)
      #expect(underFeature?.description == "/primes" + text)
    }
  }

  @Test(
    "invalid pointers are rejected",
    arguments: ["a", "foo/bar", "/a~", "/a~2", "/~a", "/~~", "#/a"]
  )
  func invalid(text: String) {
    let error = #expect(throws: JSONPointer.ParseError.self) { try JSONPointer(parsing: text) }
    #expect(error?.pointer == text)
    #expect(error?.description.hasPrefix("invalid JSON pointer") == true)
  }

  @Test("description escapes ~ before /")
  func escaping() {
    #expect(JSONPointer(tokens: ["a/b", "c~d", "", "~1"]).description == "/a~1b/c~0d//~01")
    #expect(JSONPointer.root.description == "")
  }

  @Test("literals, appending, parent, isPrefix")
  func navigation() {
    let pointer: JSONPointer = "/users/3"
    #expect(pointer.appending("name") == "/users/3/name")
    #expect(pointer.appending("a/b").description == "/users/3/a~1b")
    #expect(JSONPointer.root.appending(index: 7) == "/7")
    #expect(pointer.parent == "/users")
    #expect(pointer.parent?.parent == .root)
    #expect(JSONPointer.root.parent == nil)
    #expect(pointer.lastToken == "3")
    #expect(JSONPointer.root.isRoot)
    #expect(JSONPointer.root.isPrefix(of: pointer))
    #expect(pointer.isPrefix(of: pointer))
    #expect(pointer.isPrefix(of: "/users/3/name"))
    #expect(!pointer.isPrefix(of: "/users/33"))
    #expect(!pointer.isPrefix(of: "/users"))
  }

  /// The document from RFC 6901 §5.
  static let rfcDocument: JSONValue = [
    "foo": ["bar", "baz"],
    "": 0,
    "a/b": 1,
    "c%d": 2,
    "e^f": 3,
    "g|h": 4,
    "i\\j": 5,
    "k\"l": 6,
    " ": 7,
    "m~n": 8,
  ]

  @Test(
    "RFC 6901 examples resolve",
    arguments: [
      ("/foo", JSONValue.array(["bar", "baz"])),
      ("/foo/0", "bar"),
      ("/", 0),
      ("/a~1b", 1),
      ("/c%d", 2),
      ("/e^f", 3),
      ("/g|h", 4),
      ("/i\\j", 5),
      ("/k\"l", 6),
      ("/ ", 7),
      ("/m~0n", 8),
    ]
  )
  func rfcExamples(text: String, expected: JSONValue) throws {
    #expect(Self.rfcDocument.value(at: try JSONPointer(parsing: text)) == expected)
  }

  @Test("resolution")
  func resolution() {
    let document = Self.rfcDocument
    #expect(document.value(at: .root) == document)
    #expect(document.value(at: "/foo/1") == "baz")
    #expect(document.value(at: "/foo/2") == nil)
    #expect(document.value(at: "/foo/-") == nil)
    #expect(document.value(at: "/foo/01") == nil)
    #expect(document.value(at: "/foo/+1") == nil)
    #expect(document.value(at: "/foo/-1") == nil)
    #expect(document.value(at: "/foo/1.0") == nil)
    #expect(document.value(at: "/foo/") == nil)
    #expect(document.value(at: "/foo/99999999999999999999999") == nil)
    #expect(document.value(at: "/foo/0/x") == nil)
    #expect(document.value(at: "/missing") == nil)
    #expect(document.value(at: "/foo~1") == nil)
    let nested: JSONValue = ["0": ["1": [["x": nil]]]]
    #expect(nested.value(at: "/0/1/0/x") == .null)
  }

  @Test("Codable as a string")
  func codable() throws {
    #expect(try JSONValueEncoder().encode(JSONPointer("/a~1b/0")) == "/a~1b/0")
    #expect(try JSONValueDecoder().decode(JSONPointer.self, from: "/a~1b/0") == JSONPointer(tokens: ["a/b", "0"]))
    #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(JSONPointer.self, from: "a") }
  }
}
