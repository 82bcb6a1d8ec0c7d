import Dependencies
import Foundation
import SwitchyardJSON
import Testing

@testable import SwitchyardFeatureStore
@testable import SwitchyardJournal
@testable import SwitchyardRuntime

/// What a reduction read of the date and UUIDs: recorded while it reduces (``DependencyRecorder``),
/// kept as JSON in the journal (``DependencyReadings``), and read again by `Replay`
/// (``DependencyReplay``).
@Suite struct DependencyReadingsTests {
  /// A reducer that stamps each action with the date and a new id.
  struct Stamper: Reducer {
    @Dependency(\.date.now) var now
    @Dependency(\.uuid) var uuid

    func reduce(into state: inout [String], action: Int) -> Effect<Int> {
      for _ in 0..<action { state.append("\(self.now.timeIntervalSinceReferenceDate) \(self.uuid())") }
      return .none
    }
  }

  @Test func readingsComeBackFromTheirJSONExactly() throws {
    var readings = DependencyReadings()
    readings.dates = [Date(), Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_789)]
    readings.uuids = [UUID()]
    let text = readings.json.serializedBytes()
    #expect(DependencyReadings(json: try JSONValue(parsing: text)) == readings)
    #expect(DependencyReadings().json == [:], "nothing read, nothing written")
  }

  /// The bounds on what a journal read holds at once count what a change's reduction read: a
  /// change with the most readings a reduction keeps weighs at least their text.
  @Test func aChangeWeighsWhatItsReductionRead() {
    var readings = DependencyReadings()
    readings.dates = Array(repeating: Date(), count: DependencyRecorder.limit)
    readings.uuids = (0..<DependencyRecorder.limit).map { _ in UUID() }
    let cause = ChangeCause(origin: .request, action: [0x7B, 0x7D], peer: nil, dependencies: readings)
    let change = JournaledChange(seq: 1, feature: "f", cause: cause, patch: [0x5B, 0x5D], time: 0)
    #expect(change.byteCount >= readings.json.serializedBytes().count + 4)
  }

  @Test func aReductionsReadingsAreRecordedAndWhatNobodyTookIsForgotten() {
    let recorder = DependencyRecorder()
    let reducer = withDependencies(recorder.install) { _RecordingReducer(base: Stamper(), recorder: recorder) }
    var state: [String] = []
    _ = reducer.reduce(into: &state, action: 2)
    let readings = recorder.take()
    #expect(readings?.dates.count == 2 && readings?.uuids.count == 2)
    #expect(state.first?.hasPrefix("\(readings!.dates[0].timeIntervalSinceReferenceDate) \(readings!.uuids[0])") == true)
    #expect(recorder.take() == nil, "taken once")

    _ = reducer.reduce(into: &state, action: 1)
    _ = reducer.reduce(into: &state, action: 0)
    #expect(recorder.take() == nil, "the second reduction read nothing; the first's readings were not its")
  }

  /// A store made as the hosts make theirs records each reading once, whether the feature sets
  /// dependencies of its own (the store then sets them for each reduction) or not; and it
  /// records what the feature's own generator gives.
  @Test(arguments: [false, true])
  func aHostsStoreRecordsEachReadingOnce(_ featureSetsTheDate: Bool) async {
    let pinned = Date(timeIntervalSinceReferenceDate: 42)
    let recorder = DependencyRecorder()
    let pinDate: @Sendable (inout DependencyValues) -> Void = { $0.date = .constant(pinned) }
    let makeReducer: @Sendable () -> _RecordingReducer<Stamper> = { _RecordingReducer(base: Stamper(), recorder: recorder) }
    let store = DependencyRecorder.recording(recorder, featureSetsTheDate ? pinDate : nil) { dependencies in
      Store<[String], Int>(initialState: [], reducer: makeReducer, withDependencies: dependencies)
    }
    let readings = await store.assumeIsolatedSend(1) { recorder.take() }
    #expect(readings?.dates.count == 1 && readings?.uuids.count == 1, "\(String(describing: readings))")
    if featureSetsTheDate { #expect(readings?.dates == [pinned]) }
  }

  @Test func readsOutsideAReductionOrOnAnotherThreadAreNotRecorded() async {
    let recorder = DependencyRecorder()
    let stamper = withDependencies(recorder.install) { Stamper() }
    _ = stamper.now
    #expect(recorder.take() == nil, "between reductions")
    let reducing = recorder.reducing {
      // An effect of the feature, on another thread, while the feature reduces.
      let thread = Thread { _ = stamper.now }
      thread.start()
      while !thread.isFinished { usleep(1_000) }
      return recorder.take()
    }
    #expect(reducing == nil)
  }

  @Test func aReductionKeepsItsFirstReadingsOnly() {
    let recorder = DependencyRecorder()
    let reducer = withDependencies(recorder.install) { _RecordingReducer(base: Stamper(), recorder: recorder) }
    var state: [String] = []
    _ = reducer.reduce(into: &state, action: DependencyRecorder.limit + 10)
    #expect(recorder.take()?.dates.count == DependencyRecorder.limit)
  }

  @Test func aReplayReadsWhatWasRecordedAndSaysWhatItReadOtherwise() {
    var recorded = DependencyReadings()
    recorded.dates = [Date(timeIntervalSinceReferenceDate: 1)]
    recorded.uuids = [UUID(uuidString: "00000000-0000-0000-0000-000000000001")!]
    let replay = DependencyReplay(recorded: recorded, time: Date(timeIntervalSinceReferenceDate: 99))
    var state: [String] = []
    _ = withDependencies(replay.install) { Stamper().reduce(into: &state, action: 1) }
    #expect(state == ["1.0 00000000-0000-0000-0000-000000000001"])
    #expect(replay.mismatch == nil)

    let again = DependencyReplay(recorded: recorded, time: Date(timeIntervalSinceReferenceDate: 99))
    state = []
    _ = withDependencies(again.install) { Stamper().reduce(into: &state, action: 2) }
    #expect(state.last?.hasPrefix("99.0 ") == true, "past the readings, the change's time")
    #expect(again.mismatch == "it read the date (date.now) 2 times where it read it once, and UUIDs (uuid()) 2 times where it read them once when the change was made")

    let unrecorded = DependencyReplay(recorded: nil, time: Date(timeIntervalSinceReferenceDate: 99))
    _ = withDependencies(unrecorded.install) { Stamper().reduce(into: &state, action: 1) }
    #expect(unrecorded.mismatch?.hasPrefix("it read the date (date.now) once and UUIDs (uuid()) once, and the journal kept none") == true)
  }
}

extension Store {
  /// Sends `action` on the store's isolation and runs `after` there once it is reduced.
  fileprivate func assumeIsolatedSend<T: Sendable>(_ action: Action, after: @Sendable () -> T) -> T {
    self.send(action)
    return after()
  }
}

