import Foundation
import Testing

@testable import SwitchyardJSON

@Suite("JSON writer")
struct JSONWriterTests {
  @Test("compact output with sorted keys at every level")
  func sortedKeys() {
    var inner = JSONObject()
    inner["z"] = 1
    inner["a"] = [true, false, nil]
    var outer = JSONObject()
    outer["b"] = .object(inner)
    outer["a"] = "x"
    outer["B"] = []
    outer[""] = [:]
    #expect(JSONValue.object(outer).serialized() == #"{"":{},"B":[],"a":"x","b":{"a":[true,false,null],"z":1}}"#)
  }

  @Test(
    "numbers",
    arguments: [
      (JSONValue.int(0), "0"),
      (.int(-7), "-7"),
      (.int(Int64.max), "9223372036854775807"),
      (.int(Int64.min), "-9223372036854775808"),
      (.double(2.0), "2.0"),
      (.double(-0.0), "-0.0"),
      (.double(0.1), "0.1"),
      (.double(1e-05), "1e-05"),
      (.double(1.5e300), "1.5e+300"),
      (.double(1e21), "1e+21"),
      (.double(123456.789), "123456.789"),
      (.double(.leastNonzeroMagnitude), "5e-324"),
      (.double(.nan), "null"),
      (.double(.infinity), "null"),
    ]
  )
  func numbers(value: JSONValue, expected: String) {
    #expect(value.serialized() == expected)
  }

  @Test("string escaping follows RFC 8259")
  func escaping() {
    let value = JSONValue.string("quote\" backslash\\ slash/ newline\n tab\t nul\u{0} unit\u{1F} del\u{7F} é 😀 \u{2028}")
    let expected = #""quote\" backslash\\ slash/ newline\u000a tab\u0009 nul\u0000 unit\u001f del"# + "\u{7F} é 😀 \u{2028}\""
    #expect(value.serialized() == expected)
    #expect(JSONValue.object(["k\"ey": 1]).serialized() == #"{"k\"ey":1}"#)
  }

  @Test("serializedBytes is the UTF-8 of serialized")
  func bytes() {
    let value: JSONValue = ["name": "Zoë", "list": [1, 2.5, "😀"]]
    #expect(value.serializedBytes() == Array(value.serialized().utf8))
  }

  @Test("output is identical whatever the insertion order")
  func canonical() {
    let a: JSONValue = ["x": 1, "y": ["q": 1, "p": 2], "é": 0, "e": 0]
    let b: JSONValue = ["e": 0, "é": 0, "y": ["p": 2, "q": 1], "x": 1]
    #expect(a.serialized() == b.serialized())
  }

  @Test("large documents")
  func large() throws {
    let value = JSONValue.array((0..<10_000).map { ["id": .int(Int64($0)), "title": .string("Item \($0)")] })
    let text = value.serialized()
    #expect(text.hasPrefix(#"[{"id":0,"title":"Item 0"},{"id":1,"#))
    #expect(try JSONValue(parsing: text) == value)
  }
}

@Suite("JSON parser")
struct JSONParserTests {
  @Test("all value kinds, with whitespace")
  func kinds() throws {
    let value = try JSONValue(parsing: " \t\r\n{ \"a\" : [ 1 , -2.5e1 , \"s\" , true , false , null , { } , [ ] ] } \n")
    #expect(value == ["a": [1, -25.0, "s", true, false, nil, [:], []]])
    #expect(try JSONValue(parsing: "1") == 1)
    #expect(try JSONValue(parsing: "\"x\"") == "x")
    #expect(try JSONValue(parsing: "null") == nil)
  }

  @Test("integers that fit Int64 are ints; everything else is a double")
  func numbers() throws {
    func parse(_ text: String) throws -> JSONValue { try JSONValue(parsing: text) }
    guard case .int(let max) = try parse("9223372036854775807"),
      case .int(let min) = try parse("-9223372036854775808"),
      case .int(let zero) = try parse("-0"),
      case .double(let overflow) = try parse("9223372036854775808"),
      case .double(let underflow) = try parse("-9223372036854775809"),
      case .double(let one) = try parse("1.0"),
      case .double(let hundred) = try parse("1E2"),
      case .double(let negativeZero) = try parse("-0.0")
    else {
      Issue.record("wrong number kinds")
      return
    }
    #expect(max == .max)
    #expect(min == .min)
    #expect(zero == 0)
    #expect(overflow == 9223372036854775808.0)
    #expect(underflow == -9223372036854775809.0)
    #expect(one == 1)
    #expect(hundred == 100)
    #expect(negativeZero == 0 && negativeZero.sign == .minus)
  }

  @Test(
    "doubles are correctly rounded",
    arguments: [
      "0.1", "0.30000000000000004", "3.141592653589793", "2.2250738585072014e-308", "4.9e-324",
      "1.7976931348623157e308", "123456789012345678901234567890", "1e-7", "9007199254740993.0",
      "0.000001", "1e22", "1e23", "8.98846567431158e307", "-1.5e-10", "2.5E+3", "1.00000000000000011102230246251565404236316680908203126",
      "7.038531e-26", "12345678901234567890.123", "1e-400",
    ]
  )
  func doubles(text: String) throws {
    let value = try JSONValue(parsing: text)
    let expected = Double(text)!
    switch value {
    case .double(let double): #expect(double.bitPattern == expected.bitPattern)
    default: Issue.record("expected a double, got \(value)")
    }
  }

  @Test("unicode escapes, including surrogate pairs")
  func unicode() throws {
    #expect(try JSONValue(parsing: #""\u00e9\u00C9""#) == "éÉ")
    #expect(try JSONValue(parsing: #""\uD83D\uDE00""#) == "😀")
    #expect(try JSONValue(parsing: #""\ud83d\ude00x""#) == "😀x")
    #expect(try JSONValue(parsing: #""\u0000""#) == "\u{0}")
    #expect(try JSONValue(parsing: #""\"\\\/\b\f\n\r\t""#) == "\"\\/\u{8}\u{C}\n\r\t")
    #expect(try JSONValue(parsing: "\"raw é 😀 中\"") == "raw é 😀 中")
    #expect(try JSONValue(parsing: #""mixed é \u00e9 😀 \uD83D\uDE00""#) == "mixed é é 😀 😀")
    #expect(try JSONValue(parsing: #"{"\u0061":1}"#) == ["a": 1])
  }

  @Test("duplicate keys: the last one wins")
  func duplicateKeys() throws {
    #expect(try JSONValue(parsing: #"{"a":1,"b":2,"a":3}"#) == ["a": 3, "b": 2])
  }

  @Test(
    "malformed input is rejected with a position and a reason",
    arguments: [
      ("", 0, "unexpected end of input"),
      ("   ", 3, "unexpected end of input"),
      ("[1,]", 2, "trailing comma before ']'"),
      (#"{"a":1,}"#, 6, "trailing comma before '}'"),
      ("[1,,2]", 3, "unexpected character ','"),
      ("01", 0, "leading zeros are not allowed in numbers"),
      ("-01", 1, "leading zeros are not allowed in numbers"),
      ("00.5", 0, "leading zeros are not allowed in numbers"),
      ("-", 0, "invalid number"),
      ("1.", 1, "invalid number"),
      ("1.e5", 1, "invalid number"),
      ("1e", 1, "invalid number"),
      ("1e+", 1, "invalid number"),
      (".5", 0, "unexpected character '.'"),
      ("+1", 0, "unexpected character '+'"),
      ("[1 2]", 3, "unexpected character '2'"),
      (#"{"a" 1}"#, 5, "unexpected character '1'"),
      ("{a:1}", 1, "unexpected character 'a'"),
      (#"{"a":1 "b":2}"#, 7, "unexpected character '\"'"),
      (#""abc"#, 0, "unterminated string"),
      (#"["abc]"#, 1, "unterminated string"),
      (#""a\x""#, 2, "invalid escape sequence '\\x'"),
      (#""\u12""#, 1, "invalid \\u escape"),
      (#""\u12G4""#, 1, "invalid \\u escape"),
      (#""\uD800""#, 1, "unpaired high surrogate \\uD800"),
      (#""\uD800x""#, 1, "unpaired high surrogate \\uD800"),
      (#""\uDC00""#, 1, "unpaired low surrogate \\uDC00"),
      (#""\uD800\u0041""#, 1, "high surrogate \\uD800 followed by \\u0041 instead of a low surrogate"),
      ("\"a\tb\"", 2, "unescaped control character U+0009 in string"),
      ("\"a\nb\"", 2, "unescaped control character U+000A in string"),
      ("\"\\n\u{1}\"", 3, "unescaped control character U+0001 in string"),
      ("tru", 0, "invalid literal"),
      ("nul", 0, "invalid literal"),
      ("True", 0, "unexpected character 'T'"),
      ("NaN", 0, "unexpected character 'N'"),
      ("Infinity", 0, "unexpected character 'I'"),
      ("'a'", 0, "unexpected character '''"),
      ("/* c */ 1", 0, "unexpected character '/'"),
      ("[1] x", 4, "unexpected character 'x' after the JSON value"),
      ("{}{}", 2, "unexpected character '{' after the JSON value"),
      ("1 2", 2, "unexpected character '2' after the JSON value"),
      ("[1", 2, "unexpected end of input"),
      (#"{"a":"#, 5, "unexpected end of input"),
      ("1e400", 0, "number 1e400 is out of range"),
      ("-1e400", 0, "number -1e400 is out of range"),
      ("\u{FEFF}1", 0, "unexpected byte 0xEF"),
    ]
  )
  func malformed(input: String, offset: Int, reason: String) {
    let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: input) }
    #expect(error?.offset == offset)
    #expect(error?.reason == reason)
  }

  @Test("messages read naturally")
  func messages() {
    #expect(
      JSONParseError(offset: 12, reason: "unexpected character 'x'").description
        == "unexpected character 'x' at byte 12"
    )
    let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a": [1, 2, x]}"#) }
    #expect(error?.description == "unexpected character 'x' at byte 13 (expected a JSON value)")
    let missingColon = #expect(throws: JSONParseError.self) { try JSONValue(parsing: #"{"a" 1}"#) }
    #expect(missingColon?.description == "unexpected character '1' at byte 5 (expected ':')")
  }

  @Test("invalid UTF-8 is rejected at the offending byte")
  func invalidUTF8() {
    let cases: [([UInt8], Int)] = [
      ([0x22, 0x61, 0xFF, 0x22], 2),  // not a UTF-8 byte
      ([0x22, 0xC3, 0x22], 1),  // truncated sequence
      ([0x22, 0xC0, 0xAF, 0x22], 1),  // overlong encoding
      ([0x22, 0xED, 0xA0, 0x80, 0x22], 1),  // encoded surrogate
      ([0x22, 0x5C, 0x6E, 0xE9, 0x22], 3),  // after an escape
      ([0x22, 0x61, 0x22, 0xFF], 3),  // outside a string
    ]
    for (bytes, offset) in cases {
      let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: bytes) }
      #expect(error?.offset == offset, "\(bytes)")
    }
  }

  @Test("nesting deeper than the limit is rejected")
  func depthLimit() throws {
    let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
    #expect(throws: Never.self) { try JSONValue(parsing: ok) }

    let tooDeep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
    let error = #expect(throws: JSONParseError.self) { try JSONValue(parsing: tooDeep) }
    #expect(error?.offset == 512)
    #expect(error?.reason == "maximum nesting depth of 512 exceeded")

    #expect(try JSONValue(parsing: #"[{"a":[1]}]"#, maximumDepth: 3) == [["a": [1]]])
    let custom = #expect(throws: JSONParseError.self) {
      try JSONValue(parsing: #"[{"a":[1]}]"#, maximumDepth: 2)
    }
    #expect(custom?.offset == 6)
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: "[]", maximumDepth: 0) }
    #expect(try JSONValue(parsing: "7", maximumDepth: 0) == 7)

    // A hostile payload fails fast instead of overflowing the stack.
    let hostile = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: hostile) }
    let hostileObjects = String(repeating: #"{"a":"#, count: 100_000)
    #expect(throws: JSONParseError.self) { try JSONValue(parsing: hostileObjects) }
  }

  @Test("any collection of bytes can be parsed")
  func collections() throws {
    let text = #"{"a":[1,2]}"#
    #expect(try JSONValue(parsing: Array(text.utf8)) == ["a": [1, 2]])
    #expect(try JSONValue(parsing: Data(text.utf8)) == ["a": [1, 2]])
    #expect(try JSONValue(parsing: text.utf8) == ["a": [1, 2]])
    #expect(try JSONValue(parsing: ArraySlice(Array(("xx" + text).utf8)).dropFirst(2)) == ["a": [1, 2]])
    // Not contiguous: exercises the copying path.
    #expect(try JSONValue(parsing: text.utf8.lazy.map { $0 }) == ["a": [1, 2]])
  }

  @Test("agrees with Foundation's JSONSerialization on a realistic document")
  func agreesWithFoundation() throws {
    let text = #"""
      {"users":[{"id":1,"name":"Blob","tags":["a","b"],"score":98.5,"active":true,"manager":null},
      {"id":2,"name":"Blob Jr. \u00e9\ud83d\ude00","tags":[],"score":-1e-3,"active":false,"manager":1}],
      "meta":{"count":2,"next":null,"ratio":0.25}}
      """#
    let ours = try JSONValue(parsing: text)
    let theirs = try JSONSerialization.jsonObject(with: Data(text.utf8))
    let reencoded = try JSONSerialization.data(withJSONObject: theirs, options: [.sortedKeys])
    #expect(try JSONValue(parsing: reencoded) == ours)
  }
}
