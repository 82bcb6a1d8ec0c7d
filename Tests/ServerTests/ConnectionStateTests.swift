import Foundation
import Testing

@testable import SwitchyardServer

/// A connection's state on its own, with no channel and no socket: the order calls are started
/// and answered in, what holds reads, a drain and the close — each step as the handler would be
/// told to do it.
@Suite struct ConnectionStateTests {
  struct Call: ConnectionCall, Equatable {
    var name: String
    var isBarrier = false
    var oneway = false
    var more = false
  }

  typealias State = ConnectionState<String, Call>

  /// What a driver does with the state, as the handler does it; the calls made of frames are
  /// named by `calls` (its barriers, one-way calls and subscriptions), plain calls otherwise.
  final class Driver {
    var state: State
    let calls: [String: Call]

    init(capacity: Int, calls: [String: Call] = [:]) {
      self.state = State(capacity: capacity)
      self.calls = calls
    }

    /// Carries out every step until the state says to wait, and returns the steps, written short.
    func run() -> [String] {
      var steps: [String] = []
      while true {
        switch self.state.next() {
        case let .startCall(frame):
          steps.append("start \(frame)")
          self.state.started(self.calls[frame] ?? Call(name: frame))
        case let .refuseCall(frame):
          steps.append("refuse \(frame)")
          self.state.started(Call(name: frame))
        case let .answer(call, number):
          steps.append("answer \(call.name) #\(number)")
        case .resumeReading:
          steps.append("read")
        case .close:
          steps.append("close")
          return steps
        case .handOver:
          steps.append("hand over")
          return steps
        case .wait:
          return steps
        }
      }
    }

    func read(_ frames: String...) { for frame in frames { self.state.read(frame) } }
    func finish(_ number: UInt64) -> Call? { self.state.finish(number) }
    func readRequested() -> State.ReadDecision { self.state.readRequested() }
    func readComplete() -> Bool { self.state.readComplete() }
    func wrote() -> Bool { self.state.wrote() }
    func scheduledFlushRuns() -> Bool { self.state.scheduledFlushRuns() }
    func flushed() { self.state.flushed() }
    func drain() { self.state.drain() }
    func startHandingOver() { self.state.startHandingOver() }
    func handedOver() -> [String] { Array(self.state.handedOver()) }
    func close() -> [Call] { Array(self.state.close()) }
    func writabilityChanged(_ isWritable: Bool) { self.state.writabilityChanged(isWritable) }
  }

  @Test func pipelinedCallsStartAsTheyAreReadAndAreAnsweredOneAtATimeInOrder() {
    let connection = Driver(capacity: 4)
    connection.read("a")
    connection.read("b")
    connection.read("c")
    #expect(connection.run() == ["start a", "start b", "start c", "answer a #0"])
    #expect(connection.run() == [], "b waits for a to finish")
    #expect(connection.finish(0) == Call(name: "a"))
    #expect(connection.run() == ["answer b #1"])
    #expect(connection.finish(1) == Call(name: "b"))
    #expect(connection.run() == ["answer c #2"])
    #expect(connection.finish(2) == Call(name: "c"))
    #expect(connection.run() == [])
    #expect(connection.state.callsInFlight == 0)
  }

  @Test func onlyTheCallBeingAnsweredCanWriteOrFinish() {
    let connection = Driver(capacity: 4)
    connection.read("a")
    connection.read("b")
    _ = connection.run()
    #expect(connection.state.isAnswering(0))
    #expect(!connection.state.isAnswering(1), "b's turn has not come")
    #expect(connection.finish(1) == nil)
    #expect(connection.state.callsInFlight == 2, "finishing a call out of turn changes nothing")
    _ = connection.finish(0)
    #expect(!connection.state.isAnswering(0), "an answer after the call finished is dropped")
    #expect(connection.finish(0) == nil)
    #expect(!connection.state.isAnswering(1), "b is not answered until the driver starts it")
    _ = connection.run()
    #expect(connection.state.isAnswering(1))
  }

  @Test func aOnewayCallIsAnsweredWithNothing() {
    let connection = Driver(capacity: 4, calls: ["quiet": Call(name: "quiet", oneway: true)])
    connection.read("quiet")
    _ = connection.run()
    #expect(!connection.state.isAnswering(0), "no reply is written for it")
    #expect(connection.finish(0) != nil, "yet it ends, and the next call's turn comes")
  }

  @Test func atCapacityFramesWaitAndTheSocketIsNotRead() {
    let connection = Driver(capacity: 2)
    connection.read("a")
    connection.read("b")
    connection.read("c")
    #expect(connection.run() == ["start a", "start b", "answer a #0"])
    #expect(connection.state.framesWaiting == 1, "c waits unread for room")
    #expect(connection.readRequested() == .hold)
    _ = connection.finish(0)
    #expect(connection.run() == ["start c", "answer b #1"], "room: c starts, and takes the room")
    #expect(connection.state.isReadHeld)
    _ = connection.finish(1)
    #expect(connection.run() == ["answer c #2", "read"], "room again: the held read goes on")
    #expect(connection.readRequested() == .read)
  }

  @Test func aBarrierHoldsWhatFollowsItUntilItIsAnswered() {
    let connection = Driver(capacity: 8, calls: ["lock": Call(name: "lock", isBarrier: true)])
    connection.read("lock")
    connection.read("after")
    #expect(connection.run() == ["start lock", "answer lock #0"])
    #expect(connection.state.framesWaiting == 1, "what follows a barrier is not started")
    #expect(connection.readRequested() == .hold, "nor is more read")
    _ = connection.finish(0)
    #expect(connection.run() == ["start after", "answer after #1", "read"])
  }

  @Test func noCallIsAnsweredWhileTheClientLeavesTooMuchUnread() {
    let connection = Driver(capacity: 4)
    connection.writabilityChanged(false)
    connection.read("a")
    #expect(connection.run() == ["start a"], "read and started, but not answered")
    connection.writabilityChanged(true)
    #expect(connection.run() == ["answer a #0"])
  }

  @Test func whatIsWrittenWhileReadingIsFlushedWhenTheReadIsComplete() {
    let connection = Driver(capacity: 4)
    connection.read("a")
    _ = connection.run()
    #expect(!connection.wrote(), "no flush is scheduled while reading")
    #expect(connection.readComplete(), "the read's end flushes")
    connection.flushed()
    #expect(!connection.readComplete(), "nothing left to flush")
  }

  @Test func whatIsWrittenLaterIsFlushedOnceAfterThisTurnOfTheLoop() {
    let connection = Driver(capacity: 4)
    #expect(connection.wrote(), "the first write schedules a flush")
    #expect(!connection.wrote(), "the next ones share it")
    #expect(connection.scheduledFlushRuns())
    connection.flushed()
    #expect(connection.wrote(), "a write after the flush schedules another")
    connection.flushed()
    #expect(!connection.scheduledFlushRuns(), "flushed meanwhile: nothing to do")
  }

  @Test func aDrainingConnectionStartsNothingRefusesWhatItReadAndClosesAfterItsLastAnswer() {
    let connection = Driver(capacity: 4)
    connection.read("a")
    connection.read("b")
    #expect(connection.run() == ["start a", "start b", "answer a #0"])
    connection.read("c")
    connection.drain()
    #expect(connection.state.phase == .draining)
    #expect(connection.run() == ["refuse c"], "read and not started: refused, so its client knows it did nothing")
    _ = connection.finish(0)
    #expect(connection.run() == ["answer b #1"], "calls already started are answered first, in order")
    connection.read("d")
    _ = connection.finish(1)
    #expect(connection.run() == ["refuse d", "answer c #2"], "what is read while draining is refused too")
    _ = connection.finish(2)
    #expect(connection.run() == ["answer d #3"])
    _ = connection.finish(3)
    #expect(connection.run() == ["close"])
    #expect(connection.state.phase == .closed)
  }

  @Test func aDrainingConnectionRefusesNoMoreAtOnceThanItsCapacity() {
    let connection = Driver(capacity: 2)
    connection.read("a", "b", "c")
    #expect(connection.run() == ["start a", "start b", "answer a #0"])
    connection.drain()
    #expect(connection.run() == [], "c waits for room, like a call")
    #expect(connection.readRequested() == .hold)
    _ = connection.finish(0)
    #expect(connection.run() == ["refuse c", "answer b #1"])
  }

  @Test func aConnectionHandedOverAnswersWhatItStartedAndKeepsWhatItReadForTheNextProcess() {
    let connection = Driver(capacity: 4)
    connection.read("a")
    #expect(connection.run() == ["start a", "answer a #0"])
    connection.startHandingOver()
    #expect(connection.state.phase == .handingOver)
    connection.read("b")
    #expect(connection.readRequested() == .hold, "nothing more is read: what is still unread is the next process's")
    #expect(connection.run() == [], "b does not start")
    _ = connection.finish(0)
    #expect(connection.run() == ["hand over"])
    #expect(connection.handedOver() == ["b"], "read and not started: the next process reads it first")
    #expect(connection.state.phase == .closed)
    #expect(connection.run() == [])
  }

  @Test func aConnectionHandedOverWithNothingInFlightGoesAtOnce() {
    let connection = Driver(capacity: 4)
    connection.startHandingOver()
    #expect(connection.run() == ["hand over"])
  }

  @Test func aConnectionDrainingWithNothingInFlightClosesAtOnce() {
    let connection = Driver(capacity: 4)
    connection.drain()
    #expect(connection.run() == ["close"])
  }

  @Test func aClosedConnectionTakesNoFrameAndNoAnswer() {
    let connection = Driver(capacity: 4, calls: ["b": Call(name: "b", more: true)])
    connection.read("a")
    connection.read("b")
    _ = connection.run()
    let unanswered = connection.close()
    #expect(unanswered.map(\.name) == ["a", "b"], "the calls that will never be answered")
    #expect(unanswered.count { !$0.more } == 1, "a subscription among them")
    #expect(!connection.state.isAnswering(0), "a late reply is dropped")
    #expect(connection.finish(0) == nil, "a late end is dropped")
    connection.read("c")
    #expect(connection.state.framesWaiting == 0)
    #expect(connection.readRequested() == .hold)
    #expect(!connection.wrote(), "no flush is scheduled for a closed connection")
    #expect(connection.run() == [])
  }

  @Test func callNumbersGoOnAcrossTheConnection() {
    let connection = Driver(capacity: 1)
    for (number, frame) in ["a", "b", "c"].enumerated() {
      connection.read(frame)
      #expect(connection.run() == ["start \(frame)", "answer \(frame) #\(number)"])
      _ = connection.finish(UInt64(number))
    }
    #expect(connection.state.firstCall == 3)
  }

  @Test func theStateIsPlainDataThatCanBeWrittenOutAndReadBack() throws {
    let connection = Driver(capacity: 2, calls: ["b": Call(name: "b", isBarrier: true)])
    connection.read("a")
    connection.read("b")
    connection.read("c")
    _ = connection.run()
    _ = connection.readRequested()
    let snapshot = connection.state.snapshot
    #expect(
      snapshot
        == ConnectionSnapshot(
          phase: .open, capacity: 2, framesWaiting: 1, firstCall: 0,
          calls: [
            .init(number: 0, isBarrier: false, oneway: false, more: false, isAnswering: true),
            .init(number: 1, isBarrier: true, oneway: false, more: false, isAnswering: false),
          ],
          isReadHeld: true, isWritable: true, isReading: true, isFlushDue: false
        )
    )
    let written = try JSONEncoder().encode(snapshot)
    #expect(try JSONDecoder().decode(ConnectionSnapshot.self, from: written) == snapshot)
  }
}
