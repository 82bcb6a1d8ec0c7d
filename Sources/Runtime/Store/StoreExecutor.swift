/// A serial executor a host gives a ``Store`` to run on, instead of the store's own actor.
///
/// The store's isolation is then the executor's: its reducer, its observers and the callbacks
/// of ``Store/enqueue(_:cause:onReduced:)`` and ``Store/probe(_:)`` all run there. A host that reads
/// requests on an event loop and runs its stores on that loop answers a request on the thread
/// that read it, without a hop through the global pool.
///
/// An action enqueued from outside does not start a task: the store hands the executor a drain
/// of its mailbox through ``execute(_:)``, and that closure takes the store's isolation with
/// `assumeIsolated`. So while the executor runs such a closure it must count as the current
/// executor — implement `checkIsolated()` (or `isIsolatingCurrentContext()`), as NIO's event
/// loops do.
///
/// ```swift
/// final class QueueExecutor: StoreExecutor {
///   let queue = DispatchQueue(label: "counter")
///
///   func enqueue(_ job: consuming ExecutorJob) {
///     let job = UnownedJob(job)
///     self.queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
///   }
///
///   func execute(_ work: @escaping @Sendable () -> Void) {
///     self.queue.async(execute: work)
///   }
///
///   func checkIsolated() {
///     dispatchPrecondition(condition: .onQueue(self.queue))
///   }
/// }
///
/// let store = Store(initialState: Counter.State(), executor: QueueExecutor()) { Counter() }
/// store.enqueue(.incrTapped)  // reduced on the queue, soon
/// ```
///
/// The store keeps the executor alive, and with it whatever the executor's
/// `asUnownedSerialExecutor()` refers to.
public protocol StoreExecutor: SerialExecutor {
  /// Runs `work` on this executor, soon, after what is already queued; never before returning.
  func execute(_ work: @escaping @Sendable () -> Void)

  /// Whether the calling code runs on this executor now. When it does, an action enqueued there
  /// while the store has nothing queued skips the mailbox: the store keeps it as the head of its
  /// queue and hands ``execute(_:)`` a drain, with no lock taken. `false`, the default, keeps
  /// every action in the mailbox.
  var isCurrent: Bool { get }
}

extension StoreExecutor {
  public var isCurrent: Bool { false }
}
