import PrimeTime
import SwitchyardServer
import SwitchyardVarlink
import Testing

@testable import SwitchyardDaemon

/// A `Send`'s action, decoded from its call's bytes: PrimeTime's actions read their cases, and
/// what they do not take goes through `Codable` — the same actions, the same errors.
@Suite struct ActionDecoderTests {
  func result(_ action: String) throws -> Result<App.Action, VarlinkError> {
    let frame = Array(#"{"method":"io.switchyard.Store.Send","parameters":{"action":\#(action)}}"#.utf8)
    return try frame.withUnsafeBytes { bytes in
      let call = try VarlinkCallFrame(parsing: bytes)
      let action = try #require(call.parameterLayout("action"))
      return Result { () throws(VarlinkError) in
        try ActionDecoder(App.Action.self).decode(action, of: call) { $0.read(as: App.Action.self) }
      }
    }
  }

  func decode(_ action: String) throws -> App.Action {
    try self.result(action).get()
  }

  func error(_ action: String) throws -> VarlinkError? {
    guard case let .failure(error) = try self.result(action) else { return nil }
    return error
  }

  @Test func thePlainFormAndTheWrappedOneAreTheSameAction() throws {
    #expect(try self.decode(#"{"counter":{"incrTapped":{}}}"#) == .counter(.incrTapped))
    // The synthesized encoding wraps a payload under "_0": Codable reads it.
    #expect(try self.decode(#"{"counter":{"_0":{"incrTapped":{}}}}"#) == .counter(.incrTapped))
    #expect(try self.decode(#"{"counter":{"incrTapped":{}},"note":null}"#) == .counter(.incrTapped))
    #expect(try self.decode(#"{"favoritePrimes":{"loaded":[2,3]}}"#) == .favoritePrimes(.loaded([2, 3])))
  }

  @Test func whatTheCasesDoNotTakeIsRefusedAsCodableRefusesIt() throws {
    #expect(
      try self.error(#"{"counter":{"incrTapped":{"by":1}}}"#)
        == VarlinkError(SwitchyardError.invalidAction(reason: "unknown key \"by\"", path: "counter.incrTapped.by"))
    )
    #expect(
      try self.error(#"{"counter":{"nope":{}}}"#)
        == VarlinkError(SwitchyardError.invalidAction(reason: "unknown case \"nope\"", path: "counter.nope"))
    )
    #expect(try self.error(#"{"counter":{"incrTapped":[]}}"#) != nil)
    #expect(try self.error(#"{"counter":{"incrTapped":{}},"primeModal":{"saveFavoritePrimeTapped":{}}}"#) != nil)
  }
}
