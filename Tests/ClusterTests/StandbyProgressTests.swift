import SwitchyardCluster
import SwitchyardSynchronization
import Testing

/// A standby's reads of the journal wait for its applier as the leader's wait for its writer:
/// a read of a seq not yet applied goes once it is, and every wait ends when the standby stops.
@Suite struct StandbyProgressTests {
  @Test func aWaitForALaterChangeGoesOnceTheApplierReachesIt() {
    let progress = StandbyProgress(seq: 2)
    let woken = Mutex<[Bool]>([])
    progress.whenCommitted(after: 1) { isClosed in woken.withLock { $0.append(isClosed) } }
    #expect(woken.withLock { $0 } == [false], "the journal holds 2 already: at once")
    progress.whenCommitted(after: 3) { isClosed in woken.withLock { $0.append(isClosed) } }
    progress.applied(through: 3)
    #expect(woken.withLock { $0 } == [false], "3 is not after 3")
    progress.applied(through: 4)
    #expect(woken.withLock { $0 } == [false, false])
    #expect(progress.committedSeq == 4)
    #expect(progress.keptSeq == 4)
    #expect(progress.unavailable == nil)
  }

  @Test func theStandbysStopEndsEveryWaitAndThoseToCome() {
    let progress = StandbyProgress(seq: 2)
    let woken = Mutex<[Bool]>([])
    progress.whenCommitted(after: 2) { isClosed in woken.withLock { $0.append(isClosed) } }
    progress.endFollowing()
    progress.whenCommitted(after: 5) { isClosed in woken.withLock { $0.append(isClosed) } }
    #expect(woken.withLock { $0 } == [true, true])
  }
}
