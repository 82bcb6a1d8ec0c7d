import Foundation
import Logging
import NIOCore
import SwitchyardChangeFeed
import SwitchyardCluster
import SwitchyardJSON
import SwitchyardJournal
import Testing

/// A standby applies the leader's journaled changes to its change log, in order and once,
/// under the leader's seqs, and its subscribers see them as the leader's would.
@Suite struct StandbyApplierTests {
  let view = ClusterView(holder: "b", address: "tcp:b:1", role: .standby)
  let subscriptions = Subscriptions(encode: { _, patch in ByteBuffer(bytes: patch.jsonValue.serializedBytes()) })

  func changeLog(at seq: UInt64 = 2) -> ChangeLog {
    ChangeLog(
      initialState: ["n": .int(Int64(seq))], seq: seq, historyLimit: 16, historyID: "journal", subscriptions: self.subscriptions,
      logger: Logger(label: "test")
    )
  }

  static func change(_ seq: UInt64, time: Double = 0) -> JournaledChange {
    JournaledChange(seq: seq, feature: "counter", patch: Array(#"[{"op":"replace","path":"/n","value":\#(seq)}]"#.utf8), time: time)
  }

  @Test func eachChangeIsAppliedUnderTheLeadersSeqAndPassedOverWhenReadAgain() throws {
    let log = self.changeLog()
    let subscriber = try log.subscribe(to: .root, since: nil, queueLimit: 16)
    let applier = StandbyApplier(changeLog: log, view: self.view)
    try applier.apply([Self.change(1), Self.change(2), Self.change(3), Self.change(4)])
    try applier.apply([Self.change(4), Self.change(5)])
    #expect(log.get()?.seq == 5)
    #expect(log.get()?.value == ["n": 5])
    let seqs = subscriber.take(limit: 16).compactMap { item -> UInt64? in
      switch item {
      case let .snapshot(seq, _), let .encoded(seq, _): seq
      case .end, .overflow: nil
      }
    }
    #expect(seqs == [2, 3, 4, 5], "the snapshot, then each change once")
  }

  @Test func aGapIsRefusedAndChangesNothing() throws {
    let log = self.changeLog()
    let applier = StandbyApplier(changeLog: log, view: self.view)
    #expect(throws: StandbyError.gap(after: 2, next: 4)) { try applier.apply([Self.change(4)]) }
    #expect(log.get()?.seq == 2)
  }

  @Test func theViewTellsTheLeaderAndHowLateTheLastChangeWasApplied() throws {
    let applier = StandbyApplier(changeLog: self.changeLog(), view: self.view)
    try applier.apply([Self.change(3, time: Date().timeIntervalSince1970 - 0.25)])
    #expect(self.view.lagMilliseconds >= 250)
    #expect(self.view.role == .standby)
    #expect(self.view.json["role"] == "standby")
    #expect(self.view.json["holder"] == "b")
  }
}
