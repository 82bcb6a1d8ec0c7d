import SwitchyardSynchronization

/// How many calls the server has read and not answered yet, subscriptions left out: the one
/// figure that tells a lone request (ping-pong) from a client or several keeping the loop busy.
/// The batched journal commits a lone request's change on the loop, and leaves the changes of a
/// busy loop to its own thread, which writes them on the other CPU meanwhile.
package final class RequestsInFlight: Sendable {
  private let calls = Atomic<Int>(0)

  package init() {}

  package func started() { self.calls.add(1, ordering: .relaxed) }
  package func answered(_ calls: Int = 1) { if calls > 0 { self.calls.subtract(calls, ordering: .relaxed) } }

  /// Calls read and not answered.
  package var count: Int { self.calls.load(ordering: .relaxed) }

  /// Whether another call than the one at hand waits for its answer.
  package var othersWaiting: Bool { self.count > 1 }
}
