import Testing

@testable import SwitchyardInspector

struct InspectorTokenTests {
  @Test func aTokenIsSixtyFourHexadecimalDigitsAndNewEachTime() {
    let token = InspectorToken()
    #expect(token.description.count == 64)
    #expect(token.description.allSatisfy { $0.isHexDigit })
    #expect(InspectorToken().description != token.description)
  }

  @Test func admitsOnlyItself() {
    let token = InspectorToken("0123abcd")
    #expect(token.admits("0123abcd"))
    #expect(!token.admits("0123abce"))
    #expect(!token.admits("0123abc"))
    #expect(!token.admits("0123abcd0"))
    #expect(!token.admits(""))
  }
}
