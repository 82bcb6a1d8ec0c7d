import Clocks
import Foundation
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct EditSessionTests {
  let clock = TestClock()
  let session = EditSession.State(
    id: UUID(0), author: "ada", description: "Beta search", owner: "search-team"
  )

  func makeStore() -> TestStore<EditSession.State, EditSession.Action> {
    TestStore(initialState: self.session) {
      EditSession()
    } withDependencies: { [clock] in
      $0.continuousClock = clock
      $0.date.now = Date(timeIntervalSince1970: 1_700_000_000)
    }
  }

  @Test func aSessionLeftAloneExpiresAfterItsIdleTimeout() async {
    let store = self.makeStore()
    await store.send(.opened)
    await self.clock.advance(by: EditSession.idleTimeout - .seconds(1))
    await self.clock.advance(by: .seconds(1))
    await store.receive(.expired)
  }

  @Test func everyEditRestartsTheIdleTimer() async {
    let store = self.makeStore()
    await store.send(.opened)
    await self.clock.advance(by: .seconds(10 * 60))
    await store.send(.setDescription("Search, rewritten")) { $0.description = "Search, rewritten" }
    await self.clock.advance(by: .seconds(10 * 60))
    await store.send(.setOwner("ada")) { $0.owner = "ada" }
    await self.clock.advance(by: EditSession.idleTimeout)
    await store.receive(.expired)
  }

  @Test func tagsAreFewDistinctNames() async {
    let store = self.makeStore()
    await store.send(.setTags(["search", "team.web"])) { $0.tags = ["search", "team.web"] }
    await store.send(.setTags(["a tag"]))
    await store.send(.setTags(["search", "search"]))
    await store.send(.setTags((0...Flag.maximumTags).map { "tag\($0)" }))
    await store.send(.setTags([])) { $0.tags = [] }
    await self.clock.advance(by: EditSession.idleTimeout)
    await store.receive(.expired)
  }

  @Test func textOverTheLimitChangesNothing() async {
    let store = self.makeStore()
    let long = String(repeating: "x", count: Flag.maximumTextLength + 1)
    await store.send(.setDescription(long))
    await store.send(.setOwner(long))
  }
}
