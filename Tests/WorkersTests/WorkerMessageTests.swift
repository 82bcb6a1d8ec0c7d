import NIOCore
import NIOEmbedded
import SwitchyardVarlink
import Testing

@testable import SwitchyardWorkers
@testable import SwitchyardRuntime

/// The daemon↔worker link's framing: a length prefix, a kind, a number and a JSON body.
@Suite struct WorkerMessageTests {
  static let messages: [WorkerMessage] = [
    .start(state: ["count": 1, "log": [1, 2]], restarted: true),
    .start(state: [:], restarted: false),
    .action(id: 42, action: ["append": [7]]),
    .globalAction(id: 43, text: Array(#"{"primes":{"append":[7]}}"#.utf8)),
    .probe(id: .max),
    .ready,
    .reduced(id: 42, patch: JSONPatch(operations: [.add(path: "/log/-", value: 7)])),
    .reduced(id: 43, patch: nil),
    .change(JSONPatch(operations: [.replace(path: "/count", value: 2)])),
    .effect(action: ["increment": [:]]),
    .probeAnswer(id: 9),
    .schedule(action: ["due": "tea"], deadline: 1_795_000_000.25, ids: ["row1", "tea"]),
    .cancelTimers(id: "tea"),
  ]

  @Test(arguments: messages)
  func everyMessageSurvivesItsFrame(_ message: WorkerMessage) throws {
    let frame = message.encoded()
    let prefix = frame.prefix(4).reduce(0) { $0 << 8 | Int($1) }
    #expect(try WorkerMessage.frameLength(prefix) == frame.count - 4, "the prefix counts what follows it")
    let decoded = try frame.dropFirst(4).withUnsafeBytes { try WorkerMessage(frame: $0) }
    #expect(decoded == message)
    var gathered = ByteBuffer()
    var scratch: [UInt8] = [1, 2, 3]
    message.write(into: &gathered, scratch: &scratch)
    #expect(Array(gathered.readableBytesView) == frame, "written with a scratch buffer, the same frame")
  }

  @Test func theDaemonReadsAWorkersPatchesUnderTheFeaturesPointer() throws {
    let feature = JSONPointer(tokens: ["primes"])
    let reduced = WorkerMessage.reduced(id: 42, patch: JSONPatch(operations: [.add(path: "/log/-", value: 7)]), nanoseconds: 5)
    let change = WorkerMessage.change(JSONPatch(operations: [.move(from: "/a", path: "/b")]))
    #expect(
      try reduced.encoded().dropFirst(4).withUnsafeBytes { try WorkerMessage(frame: $0, patchesUnder: feature) }
        == .reduced(id: 42, patch: JSONPatch(operations: [.add(path: "/primes/log/-", value: 7)]), nanoseconds: 5)
    )
    #expect(
      try change.encoded().dropFirst(4).withUnsafeBytes { try WorkerMessage(frame: $0, patchesUnder: feature) }
        == .change(JSONPatch(operations: [.move(from: "/primes/a", path: "/primes/b")]))
    )
  }

  @Test func aFrameIsCompact() {
    // 4 bytes of length, 1 of kind, 8 of id, then the action's JSON as is: no Varlink envelope.
    #expect(WorkerMessage.action(id: 1, action: ["increment": [:]]).encoded().count == 13 + #"{"increment":{}}"#.utf8.count)
  }

  @Test func anActionFrameHandsOverItsBodyUnparsed() throws {
    let frame = WorkerMessage.action(id: 42, action: ["append": [7]]).encoded()
    try frame.dropFirst(4).withUnsafeBytes { bytes in
      let action = try #require(WorkerMessage.action(inFrame: bytes))
      #expect(action.id == 42)
      #expect(!action.isGlobal, "the local action, encoded by the daemon")
      #expect(String(decoding: action.body, as: UTF8.self) == #"{"append":[7]}"#)
    }
    WorkerMessage.probe(id: 1).encoded().dropFirst(4).withUnsafeBytes { bytes in
      #expect(WorkerMessage.action(inFrame: bytes) == nil, "only an action frame")
    }
  }

  @Test func aGlobalActionFrameCarriesTheClientsTextByteForByte() throws {
    // Spacing and key order as the client wrote them: the daemon passes the text on untouched.
    let text = Array(#"{ "primes" : {"append":[7]} }"#.utf8)
    let frame = WorkerMessage.globalAction(id: 7, text: text).encoded()
    #expect(frame.count == 13 + text.count)
    try frame.dropFirst(4).withUnsafeBytes { bytes in
      let action = try #require(WorkerMessage.action(inFrame: bytes))
      #expect(action.id == 7)
      #expect(action.isGlobal)
      #expect(Array(action.body) == text)
    }
    let buffer = WorkerMessage.globalAction(id: 7, text: text).frame()
    #expect(Array(buffer.readableBytesView) == frame, "the buffer a link writes holds the same frame")
    let framedInPlace = text.withUnsafeBytes { WorkerMessage.globalActionFrame(id: 7, text: $0) }
    #expect(Array(framedInPlace.readableBytesView) == frame, "framed from the call's bytes, the same frame")
    #expect(WorkerMessage.actionText(ofEncoded: buffer) == #"{ "primes" : {"append":[7]} }"#)
  }

  @Test func theDecoderWaitsForAWholeFrame() throws {
    let channel = EmbeddedChannel(handler: FrameReader(WorkerFrameDecoder()))
    let frame = WorkerMessage.probe(id: 7).encoded() + WorkerMessage.ready.encoded()
    try channel.writeInbound(ByteBuffer(bytes: frame.prefix(3)))
    #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "an incomplete prefix waits for more")
    try channel.writeInbound(ByteBuffer(bytes: frame.dropFirst(3).prefix(6)))
    #expect(try channel.readInbound(as: ByteBuffer.self) == nil, "an incomplete frame waits for more")
    try channel.writeInbound(ByteBuffer(bytes: frame.dropFirst(9)))
    let first = try #require(try channel.readInbound(as: ByteBuffer.self))
    #expect(try first.withUnsafeReadableBytes { try WorkerMessage(frame: $0) } == .probe(id: 7))
    let second = try #require(try channel.readInbound(as: ByteBuffer.self))
    #expect(try second.withUnsafeReadableBytes { try WorkerMessage(frame: $0) } == .ready)
    #expect(try channel.finish().isClean)
  }

  @Test func impossibleLengthsAndKindsAreRefused() throws {
    let refusals: [WorkerError?] = [
      #expect(throws: WorkerError.self) { try WorkerMessage.frameLength(3) },
      #expect(throws: WorkerError.self) { try WorkerMessage.frameLength(0xffff_ffff) },
      #expect(throws: WorkerError.self) {
        try [0x7f, 0, 0, 0, 0, 0, 0, 0, 0].withUnsafeBytes { try WorkerMessage(frame: $0) }
      },
      #expect(throws: WorkerError.self) {
        try ([0x02, 0, 0, 0, 0, 0, 0, 0, 1] + Array("{nope".utf8)).withUnsafeBytes { try WorkerMessage(frame: $0) }
      },
    ]
    #expect(refusals.map(\.?.code) == Array(repeating: .protocolViolation, count: 4))
    #expect(refusals.first??.description == "worker link: a frame length of 3 bytes")
    let channel = EmbeddedChannel(handler: FrameReader(WorkerFrameDecoder()))
    #expect(throws: WorkerError.self, "the decoder refuses the length before its frame arrives") {
      try channel.writeInbound(ByteBuffer(bytes: [0xff, 0xff, 0xff, 0xff]))
    }
  }
}

extension WorkerMessage: CustomTestStringConvertible {
  public var testDescription: String { "\(self)" }
}
