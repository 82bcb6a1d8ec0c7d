import NIOCore

/// The mailbox drains that stores on one event loop ask for while the loop routes a call, run as
/// soon as the routing is done: in the same pass as the read that brought the call, not in a
/// later turn of the loop.
///
/// ```swift
/// let ticket = drains.collecting { router.route(action) }  // reduced by the time this returns
/// ```
///
/// The router offers an action to every feature under its lock, and a feature's store only
/// queues it there; its reduction runs here, once the lock is free, so that what the reduction
/// does — an effect that routes an action of its own — takes the lock like anyone else. Outside
/// ``collecting(_:)``, or from another thread, a drain goes to the loop as before.
final class LoopDrains: Sendable {
  private struct Pending {
    /// How many ``collecting(_:)`` calls are open on the loop.
    var depth = 0
    var drains: [@Sendable () -> Void] = []
  }

  let loop: any EventLoop
  private let pending: NIOLoopBoundBox<Pending>

  init(loop: any EventLoop) {
    self.loop = loop
    self.pending = NIOLoopBoundBox.makeBoxSendingValue(Pending(), eventLoop: loop)
  }

  /// Runs `body` and then, on the loop, every drain asked for meanwhile before returning; off the
  /// loop, `body` alone.
  func collecting<Result>(_ body: () throws -> Result) rethrows -> Result {
    guard self.loop.inEventLoop else { return try body() }
    self.pending.value.depth += 1
    defer {
      self.pending.value.depth -= 1
      if self.pending.value.depth == 0 { self.runPending() }
    }
    return try body()
  }

  /// Runs `drain` when the open ``collecting(_:)`` on the loop ends; without one, or off the
  /// loop, on the loop soon (`EventLoop.execute`).
  func execute(_ drain: @escaping @Sendable () -> Void) {
    guard self.loop.inEventLoop, self.pending.value.depth > 0 else { return self.loop.execute(drain) }
    self.pending.value.drains.append(drain)
  }

  private func runPending() {
    guard !self.pending.value.drains.isEmpty else { return }
    // Taken out first: a drain that asks for another (an effect's action routed to another
    // store) sends it to the loop, as outside a routing.
    var drains: [@Sendable () -> Void] = []
    swap(&drains, &self.pending.value.drains)
    for drain in drains { drain() }
    drains.removeAll(keepingCapacity: true)
    if self.pending.value.drains.isEmpty { swap(&drains, &self.pending.value.drains) }
  }
}
