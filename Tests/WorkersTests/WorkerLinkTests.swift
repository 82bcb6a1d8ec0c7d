import Foundation
import Glibc
import SwitchyardSynchronization
import Testing

@testable import SwitchyardWorkers
@testable import SwitchyardRuntime

/// The worker's end of its link: one thread that reads the daemon's frames from a real pipe,
/// runs what is queued for it, and writes the worker's frames to another.
@Suite(.timeLimit(.minutes(1))) struct WorkerLinkTests {
  @Test func everyFrameIsHandedOverInOrderAndTheLoopEndsWhenTheDaemonClosesTheLink() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    let received = Mutex<[WorkerMessage]>([])
    // Three frames in one write: one read, three hand-overs.
    pipes.daemonWrites([.probe(id: 1), .action(id: 2, action: ["increment": [:]]), .probe(id: 3)])
    pipes.daemonCloses()
    try await run(link) { frame in
      let message = try WorkerMessage(frame: frame)
      received.withLock { $0.append(message) }
    }
    #expect(received.withLock { $0 } == [.probe(id: 1), .action(id: 2, action: ["increment": [:]]), .probe(id: 3)])
  }

  @Test func whatTheWorkerSendsWhileItHandlesFramesReachesTheDaemonInOrder() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    pipes.daemonWrites((1...50).map { WorkerMessage.probe(id: $0) })
    async let running: Void = run(link) { frame in
      guard case let .probe(id) = try WorkerMessage(frame: frame) else { return }
      link.send(.probeAnswer(id: id))
    }
    let answers = try await pipes.daemonReads(50)
    pipes.daemonCloses()
    try await running
    #expect(answers == (1...50).map { WorkerMessage.probeAnswer(id: $0) })
  }

  @Test func workQueuedFromAnotherThreadRunsWhileTheLoopWaitsForTheDaemon() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    async let running: Void = run(link) { _ in }
    // Nothing for the loop to read: it is blocked in `read`, and the helper takes the turn.
    try await Task.sleep(for: .milliseconds(50))
    link.execute {
      #expect(link.isCurrent, "queued work runs holding the link's turn")
      link.send(.probeAnswer(id: 7))
    }
    link.send(.effect(action: ["increment": [:]]))
    #expect(try await pipes.daemonReads(2) == [.probeAnswer(id: 7), .effect(action: ["increment": [:]])])
    pipes.daemonCloses()
    try await running
  }

  @Test func queuedWorkNeverRunsWhileTheLoopHandsOverAFrame() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    let inside = Atomic<Int>(0)
    let overlaps = Atomic<Int>(0)
    let handedOver = Atomic<Int>(0)
    /// Notes that one holder of the turn is in, for `duration`, and whether another one was.
    @Sendable func occupy(for duration: Duration) {
      if inside.add(1, ordering: .sequentiallyConsistent).newValue > 1 { overlaps.add(1, ordering: .relaxed) }
      Thread.sleep(forTimeInterval: Double(duration / .microseconds(1)) / 1e6)
      inside.subtract(1, ordering: .sequentiallyConsistent)
    }
    async let running: Void = run(link) { _ in
      occupy(for: .microseconds(200))
      handedOver.add(1, ordering: .relaxed)
    }
    // Frames and work from other threads at once, for a while: the loop mostly waits to read,
    // so the helper runs the work, and frames keep arriving while it does.
    let writer = Thread {
      for id in 1...40 {
        pipes.daemonWrites([.probe(id: UInt64(id))])
        Thread.sleep(forTimeInterval: 0.0013)
      }
    }
    writer.start()
    for id in 1...40 {
      link.execute {
        occupy(for: .milliseconds(2))
        link.send(.probeAnswer(id: UInt64(id)))
      }
      try await Task.sleep(for: .milliseconds(1))
    }
    #expect(try await pipes.daemonReads(40) == (1...40).map { WorkerMessage.probeAnswer(id: $0) })
    while handedOver.load(ordering: .relaxed) < 40 { try await Task.sleep(for: .milliseconds(5)) }
    #expect(overlaps.load(ordering: .relaxed) == 0)
    pipes.daemonCloses()
    try await running
  }

  @Test func workThatKeepsQueueingMoreNeverKeepsTheLoopFromTheDaemonsFrames() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    let handedOver = Atomic<Int>(0)
    let stop = Atomic<Bool>(false)
    async let running: Void = run(link) { _ in handedOver.add(1, ordering: .relaxed) }
    /// Work that queues itself again as it runs, until told to stop.
    @Sendable func again() {
      if !stop.load(ordering: .relaxed) { link.execute(again) }
    }
    link.execute(again)
    pipes.daemonWrites([.probe(id: 1), .probe(id: 2), .probe(id: 3)])
    let deadline = ContinuousClock.now + .seconds(5)
    while handedOver.load(ordering: .relaxed) < 3, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(handedOver.load(ordering: .relaxed) == 3)
    stop.store(true, ordering: .relaxed)
    pipes.daemonCloses()
    try await running
  }

  @Test func aStoreOnTheLinkReducesOnItsThreadWhateverThreadSendsTheAction() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    let store = Store(initialState: 0, executor: link) {
      Reduce<Int, Int> { count, amount in
        count += amount
        return .none
      }
    }
    async let running: Void = run(link) { _ in }
    for amount in 1...10 {
      store.enqueue(amount) { _ in
        #expect(link.isCurrent)
        link.send(.probeAnswer(id: UInt64(amount)))
      }
    }
    #expect(try await pipes.daemonReads(10) == (1...10).map { WorkerMessage.probeAnswer(id: $0) })
    let total = Mutex(0)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      store.probe {
        total.withLock { $0 = store.assumeIsolated { $0.state } }
        done.resume()
      }
    }
    #expect(total.withLock { $0 } == 55)
    pipes.daemonCloses()
    try await running
  }

  @Test func aFrameLengthOutOfBoundsBreaksTheLinkOff() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    pipes.daemonWritesBytes([0, 0, 0, 3, 1, 2, 3])
    let error = await #expect(throws: WorkerError.self) { try await run(link) { _ in } }
    #expect(error?.code == .protocolViolation)
    pipes.daemonCloses()
  }

  @Test func aFrameTheWorkerCannotTakeEndsTheLoopWithItsError() async throws {
    let pipes = try LinkPipes()
    let link = try WorkerLink(pipes.workerEnds)
    pipes.daemonWrites([.ready])
    await #expect(throws: WorkerError.self) {
      try await run(link) { _ in throw WorkerError.protocolViolation("the daemon sent ready, which only a worker sends") }
    }
    pipes.daemonCloses()
  }
}

/// Runs the link's loop on a thread of its own, as the worker does, until it ends.
private func run(_ link: WorkerLink, received: @escaping @Sendable (UnsafeRawBufferPointer) throws -> Void) async throws {
  try await onAThreadOfItsOwn { try link.run(received: received) }
}

/// Two real pipes: the daemon's ends are the test's, the worker's go to the link.
private struct LinkPipes: Sendable {
  let workerEnds: WorkerLinkEnds
  let toWorker: CInt
  let fromWorker: CInt

  init() throws {
    var toWorker: [CInt] = [-1, -1]
    var fromWorker: [CInt] = [-1, -1]
    guard pipe(&toWorker) == 0, pipe(&fromWorker) == 0 else { throw POSIXError(.EMFILE) }
    self.workerEnds = WorkerLinkEnds(input: toWorker[0], output: fromWorker[1])
    self.toWorker = toWorker[1]
    self.fromWorker = fromWorker[0]
  }

  func daemonWrites(_ messages: [WorkerMessage]) {
    self.daemonWritesBytes(messages.flatMap { $0.encoded() })
  }

  func daemonWritesBytes(_ bytes: [UInt8]) {
    let written = bytes.withUnsafeBytes { write(self.toWorker, $0.baseAddress, $0.count) }
    precondition(written == bytes.count)
  }

  /// Ends the link from the daemon's side; the worker's ends are the link's to close.
  func daemonCloses() {
    close(self.toWorker)
    close(self.fromWorker)
  }

  /// Reads `count` frames, waiting at most five seconds for each read.
  func daemonReads(_ count: Int) async throws -> [WorkerMessage] {
    try await readFrames(from: self.fromWorker, count: count)
  }
}
