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
  ///
  /// What it carries is in a subclass of its own (``ActionEnvelope``, ``ReductionEnvelope``;
  /// this class alone is a health probe), which the store reads after a switch on ``content``:
  /// an `Emission<Action>?` field was two more look-ups to read it and two to free it.
  // Unchecked: a class that is not final cannot be checked; every field is a `let` of a
  // `Sendable` type, here and in the subclasses.
  class Envelope: @unchecked Sendable {
    /// Which subclass this is.
    let content: EnvelopeContent
    /// What the host says brought the action here (a client's request, say), handed to the
    /// observers of the change it makes; `nil` for an effect's action.
    let cause: (any Sendable)?
    let onReduced: (@Sendable (UInt64) -> Void)?

    /// A health probe, which only reports that the store got to it.
    convenience init(probe onReduced: @escaping @Sendable (UInt64) -> Void) {
      self.init(content: .probe, cause: nil, onReduced: onReduced)
    }

    fileprivate init(content: EnvelopeContent, cause: (any Sendable)?, onReduced: (@Sendable (UInt64) -> Void)?) {
      self.content = content
      self.cause = cause
      self.onReduced = onReduced
    }

    /// The envelope for what an effect sent.
    static func make(
      _ emission: Emission<Action>, cause: (any Sendable)?, onReduced: (@Sendable (UInt64) -> Void)?
    ) -> Envelope {
      switch emission {
      case let .action(action): ActionEnvelope(action: action, cause: cause, onReduced: onReduced)
      case let .reduction(reduction): ReductionEnvelope(reduction: reduction, cause: cause, onReduced: onReduced)
      }
    }
  }

  /// An action for the store's reducer.
  final class ActionEnvelope: Envelope, @unchecked Sendable {
    let action: Action

    init(action: Action, cause: (any Sendable)?, onReduced: (@Sendable (UInt64) -> Void)?) {
      self.action = action
      super.init(content: .action, cause: cause, onReduced: onReduced)
    }
  }

  /// A child's action on a read-only route, reduced in place (see ``_Reduction``).
  final class ReductionEnvelope: Envelope, @unchecked Sendable {
    let reduction: _Reduction<Action>

    init(reduction: _Reduction<Action>, cause: (any Sendable)?, onReduced: (@Sendable (UInt64) -> Void)?) {
      self.reduction = reduction
      super.init(content: .reduction, cause: cause, onReduced: onReduced)
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

/// Which kind of ``Mailbox/Envelope`` an envelope is. Not nested in the generic mailbox, so
/// that reading it asks the Swift runtime for nothing.
enum EnvelopeContent: UInt8, Sendable {
  case action
  case reduction
  case probe
}
