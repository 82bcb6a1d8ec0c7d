import SwitchyardJSON
import SwitchyardVarlink
import Testing

/// Calls and answers as each end reads them: what is well formed, and what is wrong with what
/// is not.
@Suite struct VarlinkMessageTests {
  @Test func aCallNamesItsInterfaceAndMethod() throws {
    let call = try VarlinkCall(parsing: ["method": "io.switchyard.Store.Send", "parameters": ["action": [:]]])
    #expect(call.interface == "io.switchyard.Store")
    #expect(call.name == "Send")
    #expect(call.parameters == ["action": [:]])
    #expect(!call.more && !call.oneway)
    #expect(try VarlinkCall(parsing: call.message) == call)
  }

  @Test("what a call cannot be", arguments: [
    ("[]", "a call must be a JSON object"),
    (#"{"parameters":{}}"#, "a call needs \"method\", a string"),
    (#"{"method":1}"#, "a call needs \"method\", a string"),
    (#"{"method":"a.B","parameters":[]}"#, "\"parameters\" must be an object"),
    (#"{"method":"a.B","more":"yes"}"#, "\"more\" must be a boolean"),
    (#"{"method":"a.B","more":true,"oneway":true}"#, "a call cannot be both \"more\" and \"oneway\""),
  ])
  func malformedCalls(_ text: String, _ reason: String) throws {
    #expect(throws: VarlinkError.invalidRequest(reason)) {
      try VarlinkCall(parsing: try JSONValue(parsing: Array(text.utf8)))
    }
  }

  @Test func anAnswerIsAReplyOrAnError() throws {
    #expect(try VarlinkAnswer(parsing: ["parameters": ["seq": 1]]) == .reply(VarlinkReply(parameters: ["seq": 1])))
    #expect(
      try VarlinkAnswer(parsing: ["parameters": [:], "continues": true])
        == .reply(VarlinkReply(parameters: [:], continues: true))
    )
    #expect(
      try VarlinkAnswer(parsing: ["error": "io.switchyard.Store.ShuttingDown"])
        == .error(VarlinkError("io.switchyard.Store.ShuttingDown"))
    )
    #expect(throws: VarlinkMalformedAnswer.self) { try VarlinkAnswer(parsing: []) }
    #expect(throws: VarlinkMalformedAnswer.self) { try VarlinkAnswer(parsing: ["error": 1]) }
    #expect(throws: VarlinkMalformedAnswer.self) { try VarlinkAnswer(parsing: ["parameters": [], "continues": 1]) }
  }
}
