import CWorkerSpawn
import Glibc
import NIOCore
import SwitchyardRuntime
import SwitchyardSynchronization

/// The worker's end of its link to the daemon, and the one thread the worker's store runs on:
/// a loop that reads the daemon's frames from one pipe, hands each to the worker, runs what the
/// store has queued, and writes the answers to the other pipe.
///
/// ```swift
/// let link = try WorkerLink(WorkerLinkEnds.worker)
/// let store = Store(initialState: state, executor: link) { Primes() }
/// try link.run { frame in try worker.received(frame: frame) }  // until the daemon closes the link
/// ```
///
/// A worker has one link and nothing else to read, so its loop is an `epoll_wait` on the link
/// and on a wake-up for work from other threads, and plain blocking reads and writes: none of an
/// event loop's channels, pipelines, promises and tasks between the pipe and the store. Its write
/// of the answers is the last thing it does before it waits again, so the daemon that the write
/// wakes does not have to be switched away from to let the worker finish a turn of its loop. A
/// pinned worker round trip took 46.8 µs with a NIO event loop here and 37.2 µs with this one
/// (1.47 context switches of the worker per round trip, then 1.05).
///
/// The link is the store's ``StoreExecutor``: an action read from the link is reduced after its
/// frame is handed over and before the next frame is, on the thread that read it. Frames
/// written during a pass of the loop (the answers to a burst of pipelined actions) go out in
/// one write at its end. A frame sent from another thread (an effect's action, a durable timer)
/// is queued to the loop first; frames from one thread keep their order.
final class WorkerLink: StoreExecutor, @unchecked Sendable {
  private enum Work {
    case job(UnownedJob)
    case closure(@Sendable () -> Void)
  }

  private struct Queue {
    var work: [Work] = []
    /// The loop is about to wait in `epoll_wait`, or waits there: work queued must wake it.
    var isWaiting = false
  }

  private let input: CInt
  private let output: CInt
  /// A pipe that work queued from another thread writes a byte to, to end the loop's wait:
  /// the loop reads `wakeUp.read`, others write `wakeUp.write`.
  private let wakeUp: (read: CInt, write: CInt)
  private let queue = Mutex(Queue())
  /// The loop's thread (`pthread_self()`), once it runs.
  private let thread = Atomic<UInt>(0)

  // Touched on the loop's thread only.
  private var inbox: ByteBuffer
  private var outbox: ByteBuffer
  private var frames = WorkerFrameDecoder()
  private var running: [Work] = []
  /// The epoll instance watching the link and the wake-up pipe: registered once, unlike
  /// `poll`'s list, which the kernel walks and hooks into both pipes' wait queues on every call.
  private let epoll: CInt
  private var events = [epoll_event](repeating: epoll_event(), count: 2)
  private var isOpen = true

  /// Takes over the worker's ends of the link, in blocking mode: the loop waits in `epoll_wait` only.
  init(_ ends: WorkerLinkEnds) throws(WorkerLinkError) {
    for fd in [ends.input, ends.output] {
      let flags = fcntl(fd, F_GETFL)
      guard flags >= 0, fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 else { throw WorkerLinkError("fcntl", errno) }
    }
    var wakeUp: [CInt] = [-1, -1]
    guard switchyard_pipe(&wakeUp) == 0 else { throw WorkerLinkError("pipe2", errno) }
    for fd in wakeUp {
      guard fcntl(fd, F_SETFL, O_NONBLOCK) == 0 else { throw WorkerLinkError("fcntl", errno) }
    }
    (self.input, self.output, self.wakeUp) = (ends.input, ends.output, (wakeUp[0], wakeUp[1]))
    self.inbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    self.outbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    self.epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard self.epoll >= 0 else { throw WorkerLinkError("epoll_create1", errno) }
    for fd in [ends.input, wakeUp[0]] {
      var event = epoll_event()
      event.events = EPOLLIN.rawValue
      event.data.fd = fd
      guard epoll_ctl(self.epoll, EPOLL_CTL_ADD, fd, &event) == 0 else { throw WorkerLinkError("epoll_ctl", errno) }
    }
  }

  deinit {
    close(self.input)
    close(self.output)
    close(self.wakeUp.read)
    close(self.wakeUp.write)
    close(self.epoll)
  }

  /// What one read asks the pipe for at most (a pipe holds 64 KiB by default).
  private static let readSize = 64 << 10

  // MARK: The loop

  /// Runs the loop on the calling thread, handing `received` each frame's content (what follows
  /// its length prefix), until the daemon closes the link.
  ///
  /// - Throws: What `received` throws, a frame length out of bounds, or a read or write that
  ///   failed: the worker breaks off.
  func run(received: (UnsafeRawBufferPointer) throws -> Void) throws {
    // A daemon that is gone fails the next write with EPIPE, which ends the loop.
    signal(SIGPIPE, SIG_IGN)
    self.thread.store(UInt(pthread_self()), ordering: .releasing)
    while self.isOpen {
      self.runQueued()
      try self.flush()
      if try self.waitForInput() { try self.read(received) }
    }
  }

  /// Waits until the daemon wrote or another thread queued work; `true` when there is input.
  private func waitForInput() throws(WorkerLinkError) -> Bool {
    let mayWait = self.queue.withLock { queue in
      queue.isWaiting = queue.work.isEmpty
      return queue.isWaiting
    }
    let ready = self.events.withUnsafeMutableBufferPointer { events in
      while true {
        let ready = epoll_wait(self.epoll, events.baseAddress, 2, mayWait ? -1 : 0)
        if ready >= 0 || errno != EINTR { return ready }
      }
    }
    guard ready >= 0 else { throw WorkerLinkError("epoll_wait", errno) }
    if mayWait { self.queue.withLock { $0.isWaiting = false } }
    var hasInput = false
    for event in self.events.prefix(Int(ready)) {
      if event.data.fd == self.input {
        hasInput = true
      } else {
        var bytes: (UInt64, UInt64) = (0, 0)
        _ = Glibc.read(self.wakeUp.read, &bytes, 16)
      }
    }
    return hasInput
  }

  /// Reads what the pipe holds and hands over every whole frame in it, running what each queued.
  private func read(_ received: (UnsafeRawBufferPointer) throws -> Void) throws {
    let input = self.input
    let count = try self.inbox.writeWithUnsafeMutableBytes(minimumWritableBytes: Self.readSize) {
      bytes throws(WorkerLinkError) in
      while true {
        let count = Glibc.read(input, bytes.baseAddress, bytes.count)
        if count >= 0 { return count }
        if errno != EINTR { throw WorkerLinkError("read", errno) }
      }
    }
    guard count > 0 else {
      self.isOpen = false
      return
    }
    while let frame = try self.frames.decode(buffer: &self.inbox) {
      try frame.withUnsafeReadableBytes(received)
      self.runQueued()
    }
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

  /// Writes every frame sent during the pass, in one write when the pipe takes it whole.
  private func flush() throws(WorkerLinkError) {
    while self.outbox.readableBytes > 0 {
      let output = self.output
      let written = self.outbox.withUnsafeReadableBytes { Glibc.write(output, $0.baseAddress, $0.count) }
      if written < 0 {
        if errno == EINTR { continue }
        throw WorkerLinkError("write", errno)
      }
      self.outbox.moveReaderIndex(forwardBy: written)
    }
    if self.outbox.capacity > 4 * Self.readSize {
      self.outbox = ByteBufferAllocator().buffer(capacity: Self.readSize)
    } else {
      self.outbox.clear()
    }
  }

  // MARK: Sending

  /// Writes one message at the end of the loop's pass; from another thread, queued to the loop.
  func send(_ message: WorkerMessage) {
    if self.isCurrent {
      message.write(into: &self.outbox)
    } else {
      let frame = message.frame()
      self.execute { self.outbox.writeImmutableBuffer(frame) }
    }
  }

  // MARK: StoreExecutor

  func enqueue(_ job: consuming ExecutorJob) {
    self.submit(.job(UnownedJob(job)))
  }

  func execute(_ work: @escaping @Sendable () -> Void) {
    self.submit(.closure(work))
  }

  private func submit(_ work: Work) {
    let wakeUp = self.queue.withLock { queue in
      queue.work.append(work)
      defer { queue.isWaiting = false }
      return queue.isWaiting
    }
    if wakeUp {
      var byte: UInt8 = 1
      _ = Glibc.write(self.wakeUp.write, &byte, 1)
    }
  }

  var isCurrent: Bool {
    self.thread.load(ordering: .acquiring) == UInt(pthread_self())
  }

  func checkIsolated() {
    precondition(self.isCurrent, "a worker's store is used off its link's thread")
  }
}

/// A system call on the worker's link failed: the worker cannot go on.
struct WorkerLinkError: Error, CustomStringConvertible {
  let description: String

  init(_ call: String, _ code: CInt) {
    self.description = "worker link: \(call) failed: \(String(cString: strerror(code)))"
  }
}
