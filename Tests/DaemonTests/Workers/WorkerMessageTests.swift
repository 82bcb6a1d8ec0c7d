import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime

/// The daemon↔worker link's framing: a length prefix, a kind, a number and a JSON body.
@Suite struct WorkerMessageTests {
  static let messages: [WorkerMessage] = [
    .start(state: ["count": 1, "log": [1, 2]], restarted: true),
    .start(state: [:], restarted: false),
    .action(id: 42, action: ["append": [7]]),
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
    #expect(try WorkerMessage.frameLength(prefix: frame) == frame.count - 4, "the prefix counts what follows it")
    let decoded = try frame.dropFirst(4).withUnsafeBytes { try WorkerMessage(frame: $0) }
    #expect(decoded == message)
  }

  @Test func aFrameIsCompact() {
    // 4 bytes of length, 1 of kind, 8 of id, then the action's JSON as is: no Varlink envelope.
    #expect(WorkerMessage.action(id: 1, action: ["increment": [:]]).encoded().count == 13 + #"{"increment":{}}"#.utf8.count)
  }

  @Test func anIncompletePrefixWaitsForMore() throws {
    #expect(try WorkerMessage.frameLength(prefix: [0, 0, 0]) == nil)
  }

  @Test func impossibleLengthsAndKindsAreRefused() {
    #expect(throws: WorkerProtocolError.self) { try WorkerMessage.frameLength(prefix: [0, 0, 0, 3]) }
    #expect(throws: WorkerProtocolError.self) { try WorkerMessage.frameLength(prefix: [0xff, 0xff, 0xff, 0xff]) }
    #expect(throws: WorkerProtocolError.self) {
      try [0x7f, 0, 0, 0, 0, 0, 0, 0, 0].withUnsafeBytes { try WorkerMessage(frame: $0) }
    }
    #expect(throws: WorkerProtocolError.self) {
      try ([0x02, 0, 0, 0, 0, 0, 0, 0, 1] + Array("{nope".utf8)).withUnsafeBytes { try WorkerMessage(frame: $0) }
    }
  }
}

extension WorkerMessage: CustomTestStringConvertible {
  public var testDescription: String { "\(self)" }
}
