import SwitchyardJSON
import Testing

/// Reading an enum case's shape from a layout: an object's one member, its count, and a key
/// compared without making a `String`.
@Suite struct JSONLayoutTests {
  func withLayout(_ text: String, _ body: (UnsafeRawBufferPointer, JSONLayout) throws -> Void) throws {
    try Array(text.utf8).withUnsafeBytes { bytes in try body(bytes, try JSONLayout(scanning: bytes)) }
  }

  @Test func anObjectOfOneMemberGivesItsKeyAndValue() throws {
    try self.withLayout(#"{"counter":{"incrTapped":{}}}"#) { bytes, layout in
      let (key, value) = try #require(layout.onlyMember(of: layout.root))
      #expect(layout.string(key, is: "counter", in: bytes))
      #expect(!layout.string(key, is: "counte", in: bytes))
      #expect(!layout.string(value, is: "counter", in: bytes), "a value that is no string is no key")
      let (inner, payload) = try #require(layout.onlyMember(of: value))
      #expect(layout.string(inner, is: "incrTapped", in: bytes))
      #expect(layout.memberCount(of: payload) == 0)
    }
  }

  @Test func anythingButOneMemberGivesNone() throws {
    for text in [#"{}"#, #"{"a":1,"b":2}"#, #"[{"a":1}]"#, #""a""#, "null"] {
      try self.withLayout(text) { _, layout in
        #expect(layout.onlyMember(of: layout.root) == nil, "\(text)")
      }
    }
    try self.withLayout(#"[1]"#) { _, layout in #expect(layout.memberCount(of: layout.root) == nil) }
    try self.withLayout(#"{"a":1,"a":2}"#) { _, layout in #expect(layout.memberCount(of: layout.root) == 2) }
  }

  @Test func aStringAmongCandidatesIsTheCandidateItSpells() throws {
    let methods = ["io.switchyard.Store.Send", "io.switchyard.Store.SendBatch"]
    let text = #"["io.switchyard.Store.SendBatch","io.switchyard.Store.Se\u006ed","x.Y",1]"#
    try self.withLayout(text) { bytes, layout in
      let values = layout.elements(of: layout.root)
      #expect(layout.string(of: values[0], among: methods, in: bytes) == methods[1])
      #expect(layout.string(of: values[1], among: methods, in: bytes) == methods[0], "escapes are decoded")
      #expect(layout.string(of: values[2], among: methods, in: bytes) == nil, "none of them")
      #expect(layout.string(of: values[3], among: ["1"], in: bytes) == nil, "no string")
    }
  }

  @Test func aKeyWrittenWithEscapeSequencesIsTheTextItSpells() throws {
    try self.withLayout(#"{"\u0069ncr\"Tapped":{}}"#) { bytes, layout in
      let (key, _) = try #require(layout.onlyMember(of: layout.root))
      #expect(layout.string(key, is: "incr\"Tapped", in: bytes))
      #expect(!layout.string(key, is: "incrTapped", in: bytes))
    }
    // The bytes of another text are not the text the layout was made from.
    try self.withLayout(#"{"a":1}"#) { _, layout in
      let (key, _) = try #require(layout.onlyMember(of: layout.root))
      Array(#"{"a":1,"b":2}"#.utf8).withUnsafeBytes { other in
        #expect(!layout.string(key, is: "a", in: other))
      }
    }
  }
}
