import Dependencies
import Foundation
import Testing

@testable import Flags
@testable import SwitchyardRuntime

/// The whole service in one store: what the daemon does across its features, without it.
@MainActor
@Suite struct FlagsTests {
  let now = Date(timeIntervalSince1970: 1_700_000_000)

  func makeStore(_ state: Flags.State = Flags.State()) -> TestStore<Flags.State, Flags.Action> {
    TestStore(initialState: state) {
      Flags()
    } withDependencies: { [now] in
      $0.date.now = now
      $0.withRandomNumberGenerator = WithRandomNumberGenerator(Xorshift(seed: 7))
    }
  }

  @Test func theAuditFeedHearsTheCatalogAndTheSettingsThroughOneReadOnlyRoute() async {
    let store = self.makeStore()
    var generator = Xorshift(seed: 7)
    await store.send(.flags(.create(id: "beta", description: "Beta search"))) {
      $0.flags.flags = [Flag.State(id: "beta", description: "Beta search", salt: String(generator.next(), radix: 16))]
    }
    await store.receive(.flags(.audited(.flag(id: "beta", change: .created)))) {
      $0.audit = [AuditRecord(at: self.now, event: .flag(id: "beta", change: .created))]
    }
    await store.send(.settings(.set(key: "search.timeoutMs", value: 250))) { $0.settings["search.timeoutMs"] = 250 }
    await store.receive(.settings(.audited(.setting(key: "search.timeoutMs", value: 250)))) {
      $0.audit.append(AuditRecord(at: self.now, event: .setting(key: "search.timeoutMs", value: 250)))
    }
  }

  @Test func aFlagSwitchedOffIsAuditedThroughItsCatalog() async {
    let store = self.makeStore(Flags.State(flags: Catalog.State(flags: [Flag.State(id: "beta", salt: "1")])))
    await store.send(.flags(.flag(.element(id: "beta", action: .setEnabled(false))))) {
      $0.flags.flags[id: "beta"]?.isEnabled = false
    }
    await store.receive(.flags(.flag(.element(id: "beta", action: .delegate(.switched(on: false))))))
    await store.receive(.flags(.audited(.flag(id: "beta", change: .switched(on: false))))) {
      $0.audit = [AuditRecord(at: self.now, event: .flag(id: "beta", change: .switched(on: false)))]
    }
  }

  @Test func theAuditRouteOnlyExtracts() {
    let event = AuditEvent.flag(id: "beta", change: .created)
    #expect(Flags.auditRoute.isReadOnly)
    #expect(Flags.auditRoute.extract(from: .flags(.audited(event))) == event)
    #expect(Flags.auditRoute.extract(from: .settings(.audited(event))) == event)
    #expect(Flags.auditRoute.extract(from: .flags(.create(id: "beta", description: ""))) == nil)
  }

  @Test func theStateReadsAsTheDaemonServesIt() throws {
    let state = Flags.State(
      flags: Catalog.State(flags: [Flag.State(id: "beta", release: .production(Rollout.State(percent: 20)), salt: "1")]),
      settings: ["motd": "hello"]
    )
    let json = try JSONValueEncoder().encode(state)
    #expect(json.value(at: "/flags/beta/release/production/percent") == 20)
    #expect(json.value(at: "/settings/motd") == "hello")
    #expect(json.value(at: "/audit") == [])
  }
}
