import Foundation
import IdentifiedCollections
import PrimeTime
import SwitchyardClient
import Testing

/// How a key path of the state becomes what the daemon is asked for, and what the client takes
/// itself.
@Suite struct StatePathTests {
  typealias Flag = FixtureFlags.Flag

  @Test func storedPropertiesAreJSONPointerTokens() {
    #expect(StatePath<App.State>.at(\.primes.count).pointer == "/primes/count")
    #expect(StatePath<App.State>.at(\.primes.count).selection.isEmpty)
    #expect(StatePath<App.State>.at(\.activityFeed[2].timestamp).pointer == "/activityFeed/2/timestamp")
    #expect(StatePath<App.State>.at(\.self).pointer == .root)
  }

  @Test func aLookupByIdEndsThePointerAndTheClientTakesTheRest() {
    let beta = StatePath<FixtureFlags.State>.at(\.flags[id: "beta"].isOn)
    #expect(beta.pointer == "/flags")
    #expect(!beta.selection.isEmpty)
    #expect(beta.description == #"/flags[id="beta"]/isOn"#)
    #expect(StatePath<FixtureFlags.State>.at(\.flags[id: "beta"]) == StatePath<FixtureFlags.State>.at(\.flags[id: "beta"]))
    #expect(StatePath<FixtureFlags.State>.at(\.flags[id: "beta"]) != StatePath<FixtureFlags.State>.at(\.flags[id: "gamma"]))
  }

  @Test func theSelectionFollowsTheElementWhereverItIs() throws {
    var selection = StatePath<FixtureFlags.State>.at(\.flags[id: "beta"].isOn).selection
    let alpha: JSONValue = ["id": "alpha", "isOn": false, "changed": "2024-05-01T12:00:00Z"]
    let beta: JSONValue = ["id": "beta", "isOn": true, "changed": "2024-05-01T12:00:00Z"]
    #expect(selection.select(in: [alpha, beta]) == true)
    #expect(selection.select(in: [beta, alpha]) == true)
    #expect(selection.select(in: [alpha]) == .null, "no such flag: nil")
    #expect(selection.select(in: []) == .null)
  }

  /// An element whose id is not kept under "id" is found by decoding the elements.
  @Test func anIdThatIsNotAMemberIsFoundByDecoding() {
    struct Named: Decodable, Identifiable, Sendable {
      var name: String
      var id: String { self.name.lowercased() }
    }
    struct State: Decodable, Sendable { var people: [Named] }
    var selection = StatePath<State>.at(\.people[id: "ann"].name).selection
    #expect(selection.select(in: [["name": "Bob"], ["name": "Ann"]]) == "Ann")
  }

  @Test func aComputedPropertyCannotBeAPath() async throws {
    let path = StatePath<FixtureFlags.State>.at(\.tally.computed)
    #expect(path.description.contains("computed"))
    let client = FixtureFlags.Client(socketPath: "/nonexistent")
    await #expect(throws: StatePathError.self) {
      for try await _ in client.subscribe(\.tally.computed) {}
    }
    await #expect(throws: StatePathError.self) { try await client.get(\.tally.computed) }
  }
}
