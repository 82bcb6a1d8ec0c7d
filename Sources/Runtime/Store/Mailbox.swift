import DequeModule
import SwitchyardSynchronization

/// The FIFO queue in front of a store.
///
/// Swift actors do not order calls made from different tasks, so a store takes its actions from
/// this queue instead: the order of `push` calls, from any thread, is the order of reduction.
@usableFromInline
final class Mailbox<Action: Sendable>: Sendable {
  /// A class, not a struct: the store's generic code handles it as a reference, whose layout it
  /// knows, and asks the Swift runtime for its metadata once, when it is made — a struct of the
  /// application's action type was looked up at each copy, in each closure that captured it, in
  /// each optional that held it.
  final class Envelope: Sendable {
    /// What to reduce; `nil` for a health probe, which only reports that the store got to it.
    let emission: Emission<Action>?
    /// What the host says brought the action here (a client's request, say), handed to the
    /// observers of the change it makes; `nil` for an effect's action.
    let cause: (any Sendable)?
    let onReduced: (@Sendable (UInt64) -> Void)?

    init(emission: Emission<Action>?, cause: (any Sendable)? = nil, onReduced: (@Sendable (UInt64) -> Void)?) {
      self.emission = emission
      self.cause = cause
      self.onReduced = onReduced
    }

    /// An envelope for an action, made in one step: wrapping the action in an `Emission` first
    /// and handing that over is a copy, and a metadata look-up, more.
    init(action: Action, cause: (any Sendable)?, onReduced: (@Sendable (UInt64) -> Void)?) {
      self.emission = .action(action)
      self.cause = cause
      self.onReduced = onReduced
    }
  }

  private struct Contents: ~Copyable {
    var queue = Deque<Envelope>()
    var isDrainScheduled = false
  }

  private let contents = Mutex(Contents())

  /// How many envelopes are queued, readable without the lock: the store's fast path skips the
  /// queue entirely while it is zero.
  @usableFromInline let count = Atomic<Int>(0)

  @usableFromInline init() {}

  /// Whether anything is queued.
  @inlinable
  var hasPending: Bool {
    self.count.load(ordering: .acquiring) > 0
  }

  /// Appends `envelope`; `true` when nobody is due to drain the queue yet and the caller must
  /// schedule a drain.
  func push(_ envelope: Envelope) -> Bool {
    self.contents.withLock { contents in
      contents.queue.append(envelope)
      self.count.add(1, ordering: .releasing)
      if contents.isDrainScheduled { return false }
      contents.isDrainScheduled = true
      return true
    }
  }

  /// Takes everything queued into `taken`, which must be empty, leaving its buffer to the queue:
  /// a drain and the queue trade two buffers back and forth, and neither allocates. When the
  /// queue is empty, also clears the drain flag, so the next `push` schedules a new drain.
  func takeAll(into taken: inout Deque<Envelope>) {
    self.contents.withLock { contents in
      if contents.queue.isEmpty {
        contents.isDrainScheduled = false
        return
      }
      self.count.store(0, ordering: .releasing)
      swap(&taken, &contents.queue)
    }
  }
}
