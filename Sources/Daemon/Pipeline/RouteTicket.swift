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
  }

  private let contents = Mutex(Contents())

  func expect() { self.contents.withLock { $0.pending += 1 } }
  func unexpect() { self.contents.withLock { $0.pending -= 1 } }
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
    typealias Waiting = (CheckedContinuation<Void, Never>?, (@Sendable (Result<UInt64, RouterError>) -> Void)?)
    let (waiter, callback) = self.contents.withLock { contents -> Waiting in
      contents.seq = max(contents.seq, seq)
      contents.pending -= 1
      guard contents.pending == 0 else { return (nil, nil) }
      contents.isDone = true
      defer {
        contents.waiter = nil
        contents.callback = nil
      }
      return (contents.waiter, contents.callback)
    }
    waiter?.resume()
    callback?(self.outcome)
  }

  /// What the request came to: its sequence number, or why it was refused.
  private var outcome: Result<UInt64, RouterError> {
    self.contents.withLock { contents in
      if let refusal = contents.refusal { return .failure(refusal) }
      return .success(contents.seq)
    }
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
