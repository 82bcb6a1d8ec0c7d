import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct SettingsTests {
  @Test func aSettingIsSetChangedAndRemovedAndEachChangeAudited() async {
    let store = TestStore(initialState: Settings.State()) { Settings() }
    await store.send(.set(key: "search.timeoutMs", value: 250)) { $0["search.timeoutMs"] = 250 }
    await store.receive(.audited(.setting(key: "search.timeoutMs", value: 250)))
    await store.send(.set(key: "search.timeoutMs", value: ["p50": 120, "p99": 400])) {
      $0["search.timeoutMs"] = ["p50": 120, "p99": 400]
    }
    await store.receive(.audited(.setting(key: "search.timeoutMs", value: ["p50": 120, "p99": 400])))
    await store.send(.remove(key: "search.timeoutMs")) { $0 = [:] }
    await store.receive(.audited(.setting(key: "search.timeoutMs", value: nil)))
  }

  @Test func settingTheSameValueAgainChangesNothing() async {
    let store = TestStore(initialState: ["motd": "hello"]) { Settings() }
    await store.send(.set(key: "motd", value: "hello"))
    await store.send(.remove(key: "nothing-here"))
  }

  @Test func invalidKeysLargeValuesAndOneSettingTooManyChangeNothing() async {
    var full = Settings.State()
    for index in 0..<Settings.maximumSettings { full["key\(index)"] = .int(Int64(index)) }
    let store = TestStore(initialState: full) { Settings() }
    await store.send(.set(key: "one-more", value: true))
    await store.send(.set(key: "with space", value: true))
    await store.send(.set(key: "key0", value: .string(String(repeating: "x", count: Settings.maximumValueBytes))))
    // A setting that exists can still change when the service is full.
    await store.send(.set(key: "key0", value: "changed")) { $0["key0"] = "changed" }
    await store.receive(.audited(.setting(key: "key0", value: "changed")))
  }
}
