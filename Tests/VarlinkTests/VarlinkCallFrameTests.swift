import NIOCore
import SwitchyardJSON
import SwitchyardVarlink
import Testing

/// What reading a frame gave: a call, or an error.
private enum FrameOutcome: Equatable {
  case call(VarlinkCall)
  case varlink(VarlinkError)
  case json(JSONParseError)
  case other(String)

  init(_ body: () throws -> VarlinkCall) {
    do {
      self = .call(try body())
    } catch let error as VarlinkError {
      self = .varlink(error)
    } catch let error as JSONParseError {
      self = .json(error)
    } catch {
      self = .other("\(error)")
    }
  }
}

/// The frame read as the daemon reads it today, and straight from its bytes.
private func readBothWays(_ frame: [UInt8]) -> (tree: FrameOutcome, bytes: FrameOutcome) {
  let tree = FrameOutcome { try VarlinkCall(parsing: JSONValue(parsing: frame)) }
  let bytes = FrameOutcome {
    try frame.withUnsafeBytes { bytes in
      let frame = try VarlinkCallFrame(parsing: bytes)
      let call = frame.tree()
      #expect(frame.interface == call.interface && frame.name == call.name)
      return call
    }
  }
  return (tree, bytes)
}

@Suite("VarlinkCallFrame")
struct VarlinkCallFrameTests {
  @Test(
    "reads what VarlinkCall(parsing:) reads, and refuses what it refuses, with the same error",
    arguments: [
      #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"incrTapped":{}}}}}"#,
      #"{"method":"io.switchyard.Store.Subscribe","parameters":{"path":"/a"},"more":true}"#,
      #"{"method":"io.switchyard.Store.Send","parameters":{},"oneway":true,"more":false}"#,
      #"{"method":"x","parameters":null,"more":null,"oneway":null}"#,
      #"{"method":"NoDot"}"#,
      #"{"parameters":{},"method":"a.B","method":"a.C"}"#,
      #"{"method":"a.B","extra":[1,2,{"x":null}]}"#,
      #" { "method" : "a.\u0042" , "parameters" : { "k\"" : [ 1e3 , -0.5 ] } } "#,
      #"{"method":"a.B","more":true,"oneway":true}"#,
      #"{"method":"a.B","more":1}"#,
      #"{"method":"a.B","oneway":"yes"}"#,
      #"{"method":"a.B","parameters":[]}"#,
      #"{"method":"a.B","parameters":"x"}"#,
      #"{"method":5}"#,
      #"{"method":null}"#,
      #"{}"#,
      #"[]"#,
      #""a.B""#,
      "null",
      "",
      "{",
      #"{"method":"a.B",}"#,
      #"{"method":"a.B"} x"#,
      #"{"method":"\ud800"}"#,
    ]
  )
  func sameAsVarlinkCall(text: String) {
    let (tree, bytes) = readBothWays(Array(text.utf8))
    #expect(tree == bytes)
  }

  @Test("random edits of a call are read exactly as VarlinkCall(parsing:) reads them")
  func randomEdits() {
    let seeds = [
      #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"set":{"to":3}}}},"more":false}"#,
      #"{"method":"a.B","oneway":true,"parameters":{"list":[1,"é",null,true]}}"#,
    ].map { Array($0.utf8) }
    let alphabet = Array(#"{}[]",:\u0123456789.-truefalsn"#.utf8) + [0x00, 0x20, 0xC3, 0xFF]
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    for round in 0..<3000 {
      var frame = seeds[round % seeds.count]
      for _ in 0...next(3) {
        let offset = next(frame.count + 1)
        switch next(3) {
        case 0: frame.insert(alphabet[next(alphabet.count)], at: offset)
        case 1: if offset < frame.count { frame.remove(at: offset) }
        default: if offset < frame.count { frame[offset] = alphabet[next(alphabet.count)] }
        }
      }
      let (tree, bytes) = readBothWays(frame)
      #expect(tree == bytes, "\(String(decoding: frame, as: UTF8.self))")
    }
  }

  @Test("a parameter decodes straight from the frame, its byte range is the parameters' text")
  func parameters() throws {
    enum Counter: Codable, Equatable { case incrTapped, set(to: Int) }
    enum Action: Codable, Equatable { case counter(Counter) }
    let text = #"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"set":{"to":3}}}}}"#
    try Array(text.utf8).withUnsafeBytes { bytes in
      let call = try VarlinkCallFrame(parsing: bytes)
      #expect(call.method == "io.switchyard.Store.Send" && call.interface == "io.switchyard.Store" && call.name == "Send")
      #expect(try call.decodeParameter(Action.self, named: "action") == .counter(.set(to: 3)))
      #expect(try call.decodeParameter(Action.self, named: "missing") == nil)
      let range = try #require(call.parametersRange)
      #expect(String(decoding: bytes[range], as: UTF8.self) == #"{"action":{"counter":{"set":{"to":3}}}}"#)
      #expect(try call.parametersObject() == ["action": ["counter": ["set": ["to": 3]]]])
    }
    let unknown = #"{"method":"a.B","parameters":{"action":{"counter":{"set":{"to":3,"by":1}}}}}"#
    #expect(throws: JSONUnknownKeyError.self) {
      try Array(unknown.utf8).withUnsafeBytes { bytes in
        try VarlinkCallFrame(parsing: bytes).decodeParameter(Action.self, named: "action")
      }
    }
    try Array(#"{"method":"a.B"}"#.utf8).withUnsafeBytes { bytes in
      let call = try VarlinkCallFrame(parsing: bytes)
      #expect(call.parameters == nil && call.parametersRange == nil)
      #expect(try call.parametersObject() == [:])
    }
  }

  @Test("replies and errors write the bytes their messages frame to")
  func framesWrittenStraight() {
    let parameterSets: [JSONObject] = [
      [:], ["seq": 3], ["z": [1, 2.5, "é\"\n", nil], "a": ["y": true, "b": [:]], "m": -0.0],
      ["patch": [["op": "replace", "path": "/a~1b", "value": ["k": "\u{0}😀"]]], "seq": 9_007_199_254_740_993],
    ]
    for parameters in parameterSets {
      for continues in [false, true] {
        let reply = VarlinkReply(parameters: parameters, continues: continues)
        #expect(reply.frame() == VarlinkMessageEncoder.frame(reply.message))
      }
      for name in ["org.varlink.service.MethodNotFound", "odd \"name\"\u{1}"] {
        let error = VarlinkError(name, parameters)
        #expect(error.frame() == VarlinkMessageEncoder.frame(error.message))
      }
    }
  }

  @Test("a Send's reply is written as its message frames, for every sequence number")
  func sequenceNumberWrittenStraight() {
    for seq: UInt64 in [0, 1, 9, 10, 99, 12_345, 9_007_199_254_740_993, UInt64(Int64.max)] {
      var buffer = ByteBufferAllocator().buffer(capacity: 0)
      VarlinkReply.writeIntegerParameter("seq", seq, to: &buffer)
      let expected = VarlinkMessageEncoder.frame(VarlinkReply(parameters: ["seq": .int(Int64(seq))]).message)
      #expect(Array(buffer.readableBytesView) == expected, "\(seq)")
    }
  }
}
