import SwitchyardJSON
import SwitchyardJournal
import Testing

@testable import SwitchyardInspector

/// A change as the timeline shows it: the action's case path, and the journal's entry as JSON.
struct TimelineEntryTests {
  @Test func theCasePathEndsAtThePayload() throws {
    #expect(TimelineEntry.casePath(of: try JSONValue(parsing: #"{"counter":{"incrTapped":{}}}"#)) == ["counter", "incrTapped"])
    #expect(
      TimelineEntry.casePath(of: try JSONValue(parsing: #"{"favoritePrimes":{"deleteFavoritePrimes":{"_0":[0]}}}"#))
        == ["favoritePrimes", "deleteFavoritePrimes"]
    )
    #expect(TimelineEntry.casePath(of: try JSONValue(parsing: #"{"signUp":{"submit":{"a":1,"b":2}}}"#)) == ["signUp", "submit"])
    #expect(TimelineEntry.casePath(of: .string("x")) == [])
  }

  @Test func anEntryIsTheJournalsChangeWithItsCase() throws {
    let change = JournaledChange(
      seq: 7, feature: "primes",
      cause: ChangeCause(
        origin: .request, action: Array(#"{"counter":{"incrTapped":{}}}"#.utf8), peer: .init(uid: 1000, pid: 42), reduceNanoseconds: 1_800
      ),
      patch: Array(#"[{"op":"replace","path":"/primes/count","value":3}]"#.utf8), time: 1.5
    )
    let entry = TimelineEntry(change)
    #expect(entry.isOfCase(["counter"]))
    #expect(entry.isOfCase(["counter", "incrTapped"]))
    #expect(!entry.isOfCase(["counter", "incr"]))
    var bytes: [UInt8] = []
    entry.write(into: &bytes)
    let json = try JSONValue(parsing: bytes)
    #expect(json["seq"] == 7)
    #expect(json["case"] == "counter.incrTapped")
    #expect(json["feature"] == "primes")
    #expect(json["uid"] == 1000)
    #expect(json["pid"] == 42)
    #expect(json["origin"] == "request")
    #expect(json["reduceNanoseconds"] == 1_800)
    #expect(json["patch"] == [["op": "replace", "path": "/primes/count", "value": 3]])
  }
}
