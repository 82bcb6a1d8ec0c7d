import SwitchyardSynchronization

/// A routed request: done once every feature that took one of its actions has reduced it, with
/// the sequence number of a state that includes all of them.
///
/// ```swift
/// let ticket = router.route([action])
/// let seq = try await ticket.reduced()
/// ```
final class RouteTicket: Sendable {
  private struct Contents: ~Copyable {
    // One more than the reductions still pending, until routing is done.
    var pending = 1
    var seq: UInt64 = 0
    var isDone = false
    var refusal: RouterError?
    var waiter: CheckedContinuation<Void, Never>?
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
    let waiter = self.contents.withLock { contents -> CheckedContinuation<Void, Never>? in
      contents.seq = max(contents.seq, seq)
      contents.pending -= 1
      guard contents.pending == 0 else { return nil }
      contents.isDone = true
      defer { contents.waiter = nil }
      return contents.waiter
    }
    waiter?.resume()
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
    let (seq, refusal) = self.contents.withLock { ($0.seq, $0.refusal) }
    if let refusal { throw refusal }
    return seq
  }
}
