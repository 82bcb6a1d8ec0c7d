import Foundation
import Testing

@testable import Flags
@testable import SwitchyardRuntime

@MainActor
@Suite struct AuditTests {
  let now = Date(timeIntervalSince1970: 1_700_000_000)

  @Test func eachEventIsRecordedWithTheTime() async {
    let store = TestStore(initialState: Audit.State()) {
      Audit()
    } withDependencies: { [now] in
      $0.date.now = now
    }
    await store.send(.flag(id: "beta", change: .created)) {
      $0 = [AuditRecord(at: self.now, event: .flag(id: "beta", change: .created))]
    }
    await store.send(.setting(key: "motd", value: nil)) {
      $0.append(AuditRecord(at: self.now, event: .setting(key: "motd", value: nil)))
    }
  }

  @Test func theFeedKeepsTheLatestRecordsUpToItsCapacity() async {
    let full = (0..<Audit.capacity).map { AuditRecord(at: self.now, event: .flag(id: "f\($0)", change: .created)) }
    let store = TestStore(initialState: full) {
      Audit()
    } withDependencies: { [now] in
      $0.date.now = now
    }
    await store.send(.flag(id: "latest", change: .deleted)) {
      $0.removeFirst()
      $0.append(AuditRecord(at: self.now, event: .flag(id: "latest", change: .deleted)))
    }
    #expect(store.state.count == Audit.capacity)
  }
}
