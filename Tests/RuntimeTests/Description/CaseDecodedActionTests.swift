import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// `@DescribedAction(decoding: .fromCases)`: an action read case by case straight from the bytes
/// is the action `Codable` reads from them — whenever it reads one at all, and it reads the plain
/// form of nested cases; everything else is left to `Codable`.
@Suite struct CaseDecodedActionTests {
  @DescribedAction(decoding: .fromCases)
  enum Leaf: Equatable, Codable, Sendable {
    case ping
    case pong
  }

  @DescribedAction(decoding: .fromCases)
  indirect enum Node: Equatable, Codable, Sendable {
    case leaf
    case `default`
    case inner(Leaf)
    case nested(Node)
    case labeled(to: Int)
    case value(Int)
    case optional(Leaf?)
    #if DEBUG
      case debugOnly
    #else
      case releaseOnly
    #endif
  }

  func fromCases(_ text: String) throws -> Node? {
    try Array(text.utf8).withUnsafeBytes { bytes in
      let layout = try JSONLayout(scanning: bytes)
      return Node.decodeCases(from: ActionBytes(bytes: bytes, layout: layout, value: layout.root))
    }
  }

  func fromCodable(_ text: String) -> Node? {
    try? JSONBytesDecoder().decode(Node.self, from: text)
  }

  @Test func thePlainFormOfNestedCasesIsReadFromTheBytes() throws {
    #expect(try self.fromCases(#"{"leaf":{}}"#) == .leaf)
    #expect(try self.fromCases(#"{"default":{}}"#) == .default)
    #expect(try self.fromCases(#"{"inner":{"pong":{}}}"#) == .inner(.pong))
    #expect(try self.fromCases(#" { "nested" : { "nested" : { "inner" : { "ping" : { } } } } } "#) == .nested(.nested(.inner(.ping))))
    #if DEBUG
      #expect(try self.fromCases(#"{"debugOnly":{}}"#) == .debugOnly)
    #endif
  }

  @Test func aDecoderOfAGenericActionTypeReadsTheCasesOnlyOfCaseDecodedOnes() throws {
    #expect(caseDecoder(of: String.self) == nil, "a type without cases is Codable's to decode")
    let decodeCases = try #require(caseDecoder(of: Node.self))
    let decoded = try Array(#"{"inner":{"pong":{}}}"#.utf8).withUnsafeBytes { bytes in
      let layout = try JSONLayout(scanning: bytes)
      return decodeCases(ActionBytes(bytes: bytes, layout: layout, value: layout.root))
    }
    #expect(decoded == .inner(.pong))
  }

  @Test func aPayloadWrappedAsTheSynthesizedConformanceWritesItIsReadToo() throws {
    #expect(try self.fromCases(#"{"inner":{"_0":{"pong":{}}}}"#) == .inner(.pong))
    #expect(try self.fromCases(#"{"nested":{"_0":{"inner":{"ping":{}}}}}"#) == .nested(.inner(.ping)))
    // What the daemon hands a worker: the local action as `Encodable` writes it.
    let encoded = try JSONValueEncoder().encode(Node.nested(.nested(.inner(.ping)))).serializedBytes()
    #expect(try self.fromCases(String(decoding: encoded, as: UTF8.self)) == .nested(.nested(.inner(.ping))))
    #expect(try self.fromCases(#"{"inner":{"_0":{"_0":{"ping":{}}}}}"#) == nil, "wrapped once, not twice")
    #expect(try self.fromCases(#"{"inner":{"_0":{"ping":{}},"extra":null}}"#) == nil)
  }

  @Test func everythingElseIsLeftToCodable() throws {
    let leftToCodable = [
      #"{"labeled":{"to":3}}"#,  // labels
      #"{"value":5}"#,  // a payload that is no action
      #"{"optional":{"ping":{}}}"#,
      #"{"leaf":{},"extra":null}"#,  // more members than the case
      #"{"leaf":{"extra":null}}"#,
      #"{"leaf":[]}"#, #"{"leaf":null}"#, #"{"lea":{}}"#, #"[]"#, #""leaf""#, #"{}"#,
    ]
    for text in leftToCodable {
      #expect(try self.fromCases(text) == nil, "\(text)")
    }
    // A key written with an escape sequence is the key it spells.
    #expect(try self.fromCases(#"{"\u006ceaf":{}}"#) == .leaf)
    #expect(self.fromCodable(#"{"\u006ceaf":{}}"#) == .leaf)
    // Codable takes some of them, and is what decodes them.
    #expect(self.fromCodable(#"{"leaf":{},"extra":null}"#) == .leaf)
  }

  /// Random actions, written in the plain form and then bent — a payload wrapped, members
  /// added, keys escaped or misspelled, values of the wrong kind, whitespace — agree with
  /// `Codable` on every text the cases read.
  @Test func whateverItReadsIsWhatCodableReads() throws {
    var random = SplitMix64(seed: 0x5EED_CA5E)
    var read = 0
    var plainRead = 0
    var plainReadable = 0
    for _ in 0..<3000 {
      let node = Self.node(depth: 4, &random)
      let plain = Self.text(of: node)
      if Self.isReadable(node) {
        plainReadable += 1
        if try self.fromCases(plain) == node { plainRead += 1 }
      }
      for text in [plain, Self.bent(plain, &random), Self.bent(Self.bent(plain, &random), &random)] {
        guard let fromCases = try? self.fromCases(text) else { continue }
        read += 1
        #expect(fromCases == self.fromCodable(text), "\(text)")
      }
    }
    #expect(plainRead == plainReadable, "the plain form of every action made of cases is read from the bytes")
    #expect(read > 1000)
  }

  // MARK: Random actions and texts

  static func node(depth: Int, _ random: inout SplitMix64) -> Node {
    let leaf: Leaf = random.next() % 2 == 0 ? .ping : .pong
    switch random.next() % (depth > 0 ? 8 : 6) {
    case 0: return .leaf
    case 1: return .default
    case 2: return .inner(leaf)
    case 3: return .labeled(to: Int(random.next() % 10))
    case 4: return .value(Int(random.next() % 10))
    case 5: return .optional(random.next() % 2 == 0 ? nil : leaf)
    default: return .nested(self.node(depth: depth - 1, &random))
    }
  }

  static func isReadable(_ node: Node) -> Bool {
    switch node {
    case .leaf, .default, .inner: true
    case let .nested(node): self.isReadable(node)
    default: false
    }
  }

  /// The form a client writes: payloads unwrapped, cases without one as `{}`.
  static func text(of node: Node) -> String {
    switch node {
    case .leaf: #"{"leaf":{}}"#
    case .default: #"{"default":{}}"#
    case let .inner(leaf): #"{"inner":{"\#(leaf)":{}}}"#
    case let .nested(node): #"{"nested":\#(self.text(of: node))}"#
    case let .labeled(to): #"{"labeled":{"to":\#(to)}}"#
    case let .value(value): #"{"value":\#(value)}"#
    case let .optional(leaf): #"{"optional":\#(leaf.map { #"{"\#($0)":{}}"# } ?? "null")}"#
    #if DEBUG
      case .debugOnly: #"{"debugOnly":{}}"#
    #else
      case .releaseOnly: #"{"releaseOnly":{}}"#
    #endif
    }
  }

  /// `text` with one thing changed at a random object.
  static func bent(_ text: String, _ random: inout SplitMix64) -> String {
    var characters = Array(text)
    let opens = characters.indices.filter { characters[$0] == "{" }
    guard let at = opens.isEmpty ? nil : opens[Int(random.next() % UInt64(opens.count))] else { return text }
    let closing = Self.matchingBrace(characters, from: at)
    switch random.next() % 7 {
    case 0:  // the value wrapped as a payload
      characters.insert(contentsOf: "}", at: closing + 1)
      characters.insert(contentsOf: #"{"_0":"#, at: at)
    case 1:  // a member added
      characters.insert(contentsOf: #","extra":null"#, at: closing)
    case 2:  // a member with a value added
      characters.insert(contentsOf: (closing == at + 1 ? "" : ",") + #""extra":1"#, at: closing)
    case 3:  // the first key's first letter escaped
      if characters[at + 1] == "\"", let letter = characters[at + 2].asciiValue {
        characters.replaceSubrange((at + 2)...(at + 2), with: String(format: "\\u%04x", letter))
      }
    case 4:  // the first key misspelled
      if characters[at + 1] == "\"" { characters.insert("x", at: at + 2) }
    case 5:  // the object replaced by an array
      characters.replaceSubrange(at...closing, with: "[]")
    default:  // whitespace
      characters.insert(contentsOf: " \n", at: at)
    }
    return String(characters)
  }

  static func matchingBrace(_ characters: [Character], from open: Int) -> Int {
    var depth = 0
    var inString = false
    for index in open..<characters.count {
      switch characters[index] {
      case "\"" where index == 0 || characters[index - 1] != "\\": inString.toggle()
      case "{" where !inString: depth += 1
      case "}" where !inString:
        depth -= 1
        if depth == 0 { return index }
      default: break
      }
    }
    return characters.count - 1
  }
}
