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
final class RouteTicket: Sendable {
  private struct Contents: ~Copyable {
    // One more than the reductions still pending, until routing is done.
    var pending = 1
    var seq: UInt64 = 0
    var isDone = false
    var refusal: RouterError?
    var waiter: CheckedContinuation<Void, Never>?
    var callback: (@Sendable (Result<UInt64, RouterError>) -> Void)?

    var outcome: Result<UInt64, RouterError> {
      if let refusal = self.refusal { return .failure(refusal) }
      return .success(self.seq)
    }
  }

  private let contents = Mutex(Contents())

  /// `count` more features will each report one reduction.
  func expect(_ count: Int = 1) { self.contents.withLock { $0.pending += count } }
  /// `count` features that were expected will not report after all.
  func unexpect(_ count: Int = 1) {
    guard count > 0 else { return }
    self.contents.withLock { $0.pending -= count }
  }
  func refuse(_ error: RouterError) { self.contents.withLock { $0.refusal = $0.refusal ?? error } }
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
    typealias Waiting = (
      CheckedContinuation<Void, Never>?, (@Sendable (Result<UInt64, RouterError>) -> Void)?, Result<UInt64, RouterError>?
    )
    let (waiter, callback, outcome) = self.contents.withLock { contents -> Waiting in
      contents.seq = max(contents.seq, seq)
      contents.pending -= 1
      guard contents.pending == 0 else { return (nil, nil, nil) }
      contents.isDone = true
      defer {
        contents.waiter = nil
        contents.callback = nil
      }
      return (contents.waiter, contents.callback, contents.outcome)
    }
    waiter?.resume()
    if let callback, let outcome { callback(outcome) }
  }

  /// What the request came to: its sequence number, or why it was refused.
  private var outcome: Result<UInt64, RouterError> {
    self.contents.withLock { $0.outcome }
  }

  /// What the request came to when every action is reduced already — as they are once routing
  /// returns when every feature that took one is an actor on the routing loop; `nil` otherwise.
  var outcomeIfDone: Result<UInt64, RouterError>? {
    self.contents.withLock { $0.isDone ? $0.outcome : nil }
  }

  /// Calls `body` with the outcome once every action is reduced: right away when they are, or
  /// else on the thread that reduces the last of them (a feature's event loop or its worker
  /// link's). Set it once, and not together with ``reduced()``.
  func whenReduced(_ body: @escaping @Sendable (Result<UInt64, RouterError>) -> Void) {
    let isDone = self.contents.withLock { contents in
      if !contents.isDone { contents.callback = body }
      return contents.isDone
    }
    if isDone { body(self.outcome) }
  }

  /// The sequence number of a state that includes every action, once all are reduced.
  func reduced() async throws(RouterError) -> UInt64 {
    await withCheckedContinuation { continuation in
      let isDone = self.contents.withLock { contents in
        if !contents.isDone { contents.waiter = continuation }
        return contents.isDone
      }
      if isDone { continuation.resume() }
    }
    return try self.outcome.get()
  }
}
