import NIOCore
import SwitchyardRuntime

/// A NIO event loop as the executor of a feature's ``Store``: the store's reductions, its
/// observers and the callbacks of its mailbox run on the loop's thread, so a call read on that
/// loop is reduced and answered there, without a hop through the global pool.
///
/// ```swift
/// let executor = EventLoopStoreExecutor(channel.eventLoop)
/// let store = Store(initialState: Primes.State(), executor: executor) { Primes() }
/// store.enqueue(.incrTapped)  // reduced on the loop, after what the loop already has queued
/// ```
///
/// The store's isolation is the loop's own serial executor: jobs go straight to the loop, and
/// NIO's isolation check (`preconditionInEventLoop`) counts code the loop runs — a channel
/// handler, or a drain of the store's mailbox given to ``execute(_:)`` — as isolated to the store.
/// With ``LoopDrains``, a drain asked for while the loop routes a call runs right after the
/// routing, in the same pass.
final class EventLoopStoreExecutor: StoreExecutor {
  let loop: any EventLoop
  /// The loop's serial executor, kept: the store's unowned reference to it must not outlive it,
  /// and a loop without one of its own makes a new one each time it is asked.
  private let serial: any SerialExecutor
  /// Where the store's drains go while the loop routes a call: run as soon as the routing is
  /// done. `nil`: to the loop.
  private let drains: LoopDrains?

  init(_ loop: any EventLoop, drains: LoopDrains? = nil) {
    self.loop = loop
    self.serial = loop.executor
    self.drains = drains
  }

  func enqueue(_ job: consuming ExecutorJob) {
    self.serial.enqueue(job)
  }

  func asUnownedSerialExecutor() -> UnownedSerialExecutor {
    self.serial.asUnownedSerialExecutor()
  }

  func checkIsolated() {
    self.serial.checkIsolated()
  }

  func execute(_ work: @escaping @Sendable () -> Void) {
    if let drains { drains.execute(work) } else { self.loop.execute(work) }
  }

  var isCurrent: Bool {
    self.loop.inEventLoop
  }
}
