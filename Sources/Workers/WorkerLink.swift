import Foundation
import Glibc
import NIOCore
import SwitchyardRuntime
import SwitchyardSynchronization

/// The worker's end of its link to the daemon, and the executor the worker's store runs on:
/// a loop that reads the daemon's frames from one pipe, hands each to the worker, runs what the
/// store has queued, and writes the answers to the other pipe.
///
/// ```swift
/// let link = try WorkerLink(WorkerLinkEnds.worker)
/// let store = Store(initialState: state, executor: link) { Primes() }
/// try link.run { frame in try worker.received(frame: frame) }  // until the daemon closes the link
/// ```
///
/// A worker has one link and nothing else to read, so its loop is plain blocking reads and
/// writes: none of an event loop's channels, pipelines, promises and tasks between the pipe and
/// the store, and no `epoll_wait` before each read either. Its write of the answers is the last
/// thing it does before it reads again, so the daemon that the write wakes does not have to be
/// switched away from to let the worker finish a turn of its loop. (The round trips of the three
/// designs measured are in docs/engineering-notes.md.)
///
/// The link is the store's ``StoreExecutor``, and whoever runs the store's work holds the
/// link's *turn*: the loop while it hands over frames and runs what they queued, or — while the
/// loop is blocked reading — a helper thread that runs what other threads queued (an effect's
/// action to send, a job of the store's) and writes what that sent. So an action read from the
/// link is reduced after its frame is handed over and before the next frame is; frames written
/// during one turn (the answers to a burst of pipelined actions) go out in one write at its
/// end; frames from one thread keep their order. The helper wakes only for work queued while
/// the loop reads, or left over when the loop goes back to reading: the daemon's round trip
/// never waits for it, and neither side keeps the other from its work for more than a pass.
package final class WorkerLink: StoreExecutor, @unchecked Sendable {
  private enum Work {
    case job(UnownedJob)
    case closure(@Sendable () -> Void)
  }

  private struct Queue {
    var work: [Work] = []
    /// The loop holds the turn, or is about to take it: it runs what is queued itself.
    var loopRuns = true
    /// The helper was woken to run what is queued, and runs until nothing is or the loop
    /// wants the turn back.
    var helperRuns = false
    /// The loop ended: the helper stops.
    var isClosed = false
  }

  private let input: CInt
  private let output: CInt
  private let queue = Mutex(Queue())
  /// Held by the thread that runs the store's work: the loop's, or the helper's.
  private let turn = Mutex(())
  /// The thread that holds the turn (`pthread_self()`), 0 when none does.
  private let holder = Atomic<UInt>(0)
  /// Posted to wake the helper: work was queued while the loop reads, or the loop ended.
  private let helperWakeUp: UnsafeMutablePointer<sem_t>
  /// Posted by the helper when it stopped.
  private let helperStopped: UnsafeMutablePointer<sem_t>

  // Touched by the loop's thread only.
  private var inbox: ByteBuffer
  private var frames = WorkerFrameDecoder()
  private var isOpen = true

  // Touched by the thread that holds the turn only.
  private var outbox: ByteBuffer
  /// Where an answer's patch is written before it goes into ``outbox``.
  private var scratch: [UInt8] = []
  private var running: [Work] = []
  /// A write the helper could not make: the loop throws it when it takes the turn next.
  private var writeError: WorkerError?

  /// Takes over the worker's ends of the link, in blocking mode: the loop waits in `read` only.
  package init(_ ends: WorkerLinkEnds) throws(WorkerError) {
    for fd in [ends.input, ends.output] {
      let flags = fcntl(fd, F_GETFL)
      guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw WorkerError.link("fcntl", errno) }
    }
    (self.input, self.output) = (ends.input, ends.output)
    self.inbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    self.outbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    self.helperWakeUp = .allocate(capacity: 1)
    self.helperStopped = .allocate(capacity: 1)
    sem_init(self.helperWakeUp, 0, 0)
    sem_init(self.helperStopped, 0, 0)
  }

  deinit {
    close(self.input)
    close(self.output)
    for semaphore in [self.helperWakeUp, self.helperStopped] {
      sem_destroy(semaphore)
      semaphore.deallocate()
    }
  }

  /// What one read asks the pipe for at most (a pipe holds 64 KiB by default).
  private static let readSize = 64 << 10

  // MARK: The loop

  /// Runs the loop on the calling thread, handing `received` each frame's content (what follows
  /// its length prefix), until the daemon closes the link.
  ///
  /// - Throws: What `received` throws, a frame length out of bounds, or a read or write that
  ///   failed: the worker breaks off.
  package func run(received: (UnsafeRawBufferPointer) throws -> Void) throws {
    // A daemon that is gone fails the next write with EPIPE, which ends the loop.
    signal(SIGPIPE, SIG_IGN)
    self.startHelper()
    defer { self.stopHelper() }
    while self.isOpen {
      try self.takeTurn { () throws in
        if let error = self.writeError { throw error }
        while let frame = try self.frames.decode(buffer: &self.inbox) {
          try frame.withUnsafeReadableBytes(received)
          self.runQueued()
        }
        try self.flush()
        self.handOverTheQueue()
      }
      try self.read()
      self.queue.withLock { $0.loopRuns = true }
    }
  }

  /// Reads what the pipe holds, blocking until it holds something; at the end of the link,
  /// the loop ends.
  private func read() throws(WorkerError) {
    if self.inbox.readableBytes == 0 {
      // A start frame can be large; the buffer it grew is not kept for the rest of the run.
      if self.inbox.capacity > 4 * Self.readSize {
        self.inbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
      } else {
        self.inbox.clear()
      }
    } else if self.inbox.readerIndex >= Self.readSize {
      self.inbox.discardReadBytes()
    }
    let input = self.input
    let count = try self.inbox.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) {
      bytes throws(WorkerError) in
      while true {
        let count = Glibc.read(input, bytes.baseAddress, bytes.count)
        if count >= 0 { return count }
        if errno != EINTR { throw WorkerError.link("read", errno) }
      }
    }
    if count == 0 { self.isOpen = false }
  }

  /// Runs `body` holding the turn.
  private func takeTurn(_ body: () throws -> Void) throws {
    try self.turn.withLock { _ in
      self.holder.store(UInt(pthread_self()), ordering: .releasing)
      defer { self.holder.store(0, ordering: .releasing) }
      try body()
    }
  }

  /// The loop is done with the turn and goes to read: what is still queued (work that the work
  /// it ran queued, or another thread's) is the helper's to run, so that a stream of such work
  /// never keeps the loop from the daemon's frames.
  private func handOverTheQueue() {
    let wakeHelper = self.queue.withLock { queue in
      queue.loopRuns = false
      guard !queue.work.isEmpty, !queue.helperRuns else { return false }
      queue.helperRuns = true
      return true
    }
    if wakeHelper { sem_post(self.helperWakeUp) }
  }

  /// The helper's turn: runs what is queued and writes what it sent, again until nothing is
  /// or the loop read a frame and waits for the turn; then, in the same look at the queue, says
  /// it is done, so that work queued after it wakes it again (or the loop hands it back).
  private func runWhileQueuedAndTheLoopReads() throws(WorkerError) {
    while true {
      self.runQueued()
      try self.flush()
      let isDone = self.queue.withLock { queue in
        let isDone = queue.work.isEmpty || queue.loopRuns
        if isDone { queue.helperRuns = false }
        return isDone
      }
      if isDone { return }
    }
  }

  /// Runs the work queued so far; work it queues runs in the next pass.
  private func runQueued() {
    self.queue.withLock { swap(&$0.work, &self.running) }
    guard !self.running.isEmpty else { return }
    for work in self.running {
      switch work {
      case let .job(job): job.runSynchronously(on: self.asUnownedSerialExecutor())
      case let .closure(closure): closure()
      }
    }
    self.running.removeAll(keepingCapacity: true)
  }

  /// Writes every frame sent during the turn, in one write when the pipe takes it whole.
  private func flush() throws(WorkerError) {
    while self.outbox.readableBytes > 0 {
      let output = self.output
      let written = self.outbox.withUnsafeReadableBytes { Glibc.write(output, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        throw WorkerError.link("write", errno)
      }
      self.outbox.moveReaderIndex(forwardBy: written)
    }
    if self.outbox.capacity > 4 * Self.readSize {
      self.outbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    } else {
      self.outbox.clear()
    }
  }

  // MARK: The helper

  private func startHelper() {
    let thread = Thread { [self] in
      nameCurrentThread("link-helper")
      while true {
        Self.wait(for: self.helperWakeUp)
        if self.queue.withLock({ $0.isClosed }) { break }
        try? self.takeTurn {
          do throws(WorkerError) {
            try self.runWhileQueuedAndTheLoopReads()
          } catch {
            // The daemon is gone, or the pipe broke: the loop's read ends the worker.
            self.writeError = self.writeError ?? error
            self.outbox.clear()
            self.queue.withLock { $0.helperRuns = false }
          }
        }
      }
      sem_post(self.helperStopped)
    }
    // It runs the store's jobs: as deep a stack as the loop's.
    thread.stackSize = 8 << 20
    thread.start()
  }

  private func stopHelper() {
    self.queue.withLock { $0.isClosed = true }
    sem_post(self.helperWakeUp)
    Self.wait(for: self.helperStopped)
  }

  private static func wait(for semaphore: UnsafeMutablePointer<sem_t>) {
    while sem_wait(semaphore) != 0, errno == EINTR {}
  }

  // MARK: Sending

  /// Writes one message at the end of the turn; from a thread without the turn, queued.
  package func send(_ message: WorkerMessage) {
    if self.isCurrent {
      message.write(into: &self.outbox, scratch: &self.scratch)
    } else {
      let frame = message.frame()
      self.execute { self.outbox.writeImmutableBuffer(frame) }
    }
  }

  // MARK: StoreExecutor

  package func enqueue(_ job: consuming ExecutorJob) {
    self.submit(.job(UnownedJob(job)))
  }

  package func execute(_ work: @escaping @Sendable () -> Void) {
    self.submit(.closure(work))
  }

  private func submit(_ work: Work) {
    let wakeHelper = self.queue.withLock { queue in
      queue.work.append(work)
      guard !queue.loopRuns, !queue.helperRuns else { return false }
      queue.helperRuns = true
      return true
    }
    if wakeHelper { sem_post(self.helperWakeUp) }
  }

  package var isCurrent: Bool {
    self.holder.load(ordering: .acquiring) == UInt(pthread_self())
  }

  package func checkIsolated() {
    precondition(self.isCurrent, "a worker's store is used without its link's turn")
  }
}
