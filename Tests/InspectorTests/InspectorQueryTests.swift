import Testing

@testable import SwitchyardInspector

/// A query is read only while it stays small, and read as a browser encodes it.
struct InspectorQueryTests {
  @Test func readsPercentEncodedValuesAndSequenceNumbers() throws {
    let query = try InspectorQuery(parsing: "before=120&feature=sign%20Up&action=counter.incrTapped&path=%2Fprimes+x")
    #expect(try query.seq("before") == 120)
    #expect(query["feature"] == "sign Up")
    #expect(query["action"] == "counter.incrTapped")
    #expect(query["path"] == "/primes x")
    #expect(try query.seq("after") == nil)
  }

  @Test func refusesWhatIsMalformedOrTooLarge() {
    #expect(throws: InspectorQuery.Refusal.self) { try InspectorQuery(parsing: "feature=%ZZ") }
    #expect(throws: InspectorQuery.Refusal.self) { try InspectorQuery(parsing: "feature=%E2%82") }
    #expect(throws: InspectorQuery.Refusal.self) { try InspectorQuery(parsing: "feature=" + String(repeating: "a", count: 513)) }
    #expect(throws: InspectorQuery.Refusal.self) {
      try InspectorQuery(parsing: Substring((0..<17).map { "p\($0)=1" }.joined(separator: "&")))
    }
    #expect(throws: InspectorQuery.Refusal.self) { try InspectorQuery(parsing: "before=-1").seq("before") }
    #expect(throws: InspectorQuery.Refusal.self) { try InspectorQuery(parsing: "before=99999999999999999999").seq("before") }
    #expect(throws: InspectorQuery.Refusal.self) {
      try InspectorQuery(parsing: "limit=501").count("limit", in: 1...500, default: 100)
    }
  }
}
