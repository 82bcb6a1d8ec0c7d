import SwitchyardSynchronization

/// A routed request: done once every feature that took one of its actions has reduced it, with
/// the sequence number of a state that includes all of them.
///
/// ```swift
/// let ticket = router.route([action])
/// let seq = try await ticket.reduced()
/// ```
///
/// A connection that answers on its event loop takes the outcome as a callback instead
/// (``whenReduced(_:)``): no task waits for it.
///
/// Reductions report from the routing loop and from worker links' threads, so the count and the
/// number are atomics; the lock is taken only by a refusal and by a listener that comes before
/// the last reduction, never by a request its actor features reduce while it is routed.
final class RouteTicket: Sendable {
  /// Who calls the listener: nobody yet, the last reduction (a listener came first), or the
  /// listener's own caller (the reductions were done first).
  private enum Listening: UInt8, AtomicRepresentable {
    case none
    case waiting
    case done
  }

  /// What only a refusal and a late outcome need.
  private struct Rare: ~Copyable {
    var refusal: RouterError?
    var waiter: CheckedContinuation<Void, Never>?
    var callback: (@Sendable (Result<UInt64, RouterError>) -> Void)?
  }

  // One more than the reductions still pending, until routing is done.
  private let pending = Atomic<Int>(1)
  private let latestSeq = Atomic<UInt64>(0)
  private let isRefused = Atomic<Bool>(false)
  private let listening = Atomic<Listening>(.none)
  private let rare = Mutex(Rare())

  /// `count` more features will each report one reduction.
  func expect(_ count: Int = 1) { self.pending.add(count, ordering: .relaxed) }
  /// `count` features that were expected will not report after all.
  func unexpect(_ count: Int = 1) {
    guard count > 0 else { return }
    self.pending.subtract(count, ordering: .relaxed)
  }
  func refuse(_ error: RouterError) {
    self.rare.withLock { $0.refusal = $0.refusal ?? error }
    self.isRefused.store(true, ordering: .releasing)
  }
  func routed() { self.finishOne(seq: 0) }

  /// One feature that took an action will not reduce it: the request fails with `error`.
  func fail(_ error: RouterError) {
    self.refuse(error)
    self.finishOne(seq: 0)
  }

  /// One reduction is done; the state at `seq` includes it.
  @Sendable func done(_ seq: UInt64) {
    self.finishOne(seq: seq)
  }

  private func finishOne(seq: UInt64) {
    var latest = self.latestSeq.load(ordering: .relaxed)
    while seq > latest {
      let (exchanged, original) = self.latestSeq.weakCompareExchange(
        expected: latest, desired: seq, successOrdering: .relaxed, failureOrdering: .relaxed
      )
      if exchanged { break }
      latest = original
    }
    // Acquiring and releasing: whoever brings the count to zero sees every reduction's number.
    guard self.pending.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
    guard self.listening.exchange(.done, ordering: .acquiringAndReleasing) == .waiting else { return }
    let (waiter, callback) = self.takeListeners()
    waiter?.resume()
    callback?(self.outcome)
  }

  private func takeListeners() -> (CheckedContinuation<Void, Never>?, (@Sendable (Result<UInt64, RouterError>) -> Void)?) {
    self.rare.withLock { rare in
      defer {
        rare.waiter = nil
        rare.callback = nil
      }
      return (rare.waiter, rare.callback)
    }
  }

  /// What the request came to, once every reduction is done: its sequence number, or why it was
  /// refused.
  private var outcome: Result<UInt64, RouterError> {
    if self.isRefused.load(ordering: .acquiring), let refusal = self.rare.withLock({ $0.refusal }) {
      return .failure(refusal)
    }
    return .success(self.latestSeq.load(ordering: .relaxed))
  }

  private var isDone: Bool {
    self.pending.load(ordering: .acquiring) == 0
  }

  /// What the request came to when every action is reduced already — as they are once routing
  /// returns when every feature that took one is an actor on the routing loop; `nil` otherwise.
  var outcomeIfDone: Result<UInt64, RouterError>? {
    self.isDone ? self.outcome : nil
  }

  /// Calls `body` with the outcome once every action is reduced: right away when they are, or
  /// else on the thread that reduces the last of them (a feature's event loop or its worker
  /// link's). Set it once, and not together with ``reduced()``.
  func whenReduced(_ body: @escaping @Sendable (Result<UInt64, RouterError>) -> Void) {
    guard !self.isDone else { return body(self.outcome) }
    self.rare.withLock { $0.callback = body }
    guard !self.listen() else { return }
    _ = self.takeListeners()
    body(self.outcome)
  }

  /// The sequence number of a state that includes every action, once all are reduced.
  func reduced() async throws(RouterError) -> UInt64 {
    if !self.isDone {
      await withCheckedContinuation { continuation in
        self.rare.withLock { $0.waiter = continuation }
        guard !self.listen() else { return }
        _ = self.takeListeners()
        continuation.resume()
      }
    }
    return try self.outcome.get()
  }

  /// Leaves the listener set to the last reduction; `false` when that reduction is done already
  /// and the caller is to take the listener back and call it.
  private func listen() -> Bool {
    self.listening.compareExchange(expected: .none, desired: .waiting, ordering: .acquiringAndReleasing).exchanged
  }
}
