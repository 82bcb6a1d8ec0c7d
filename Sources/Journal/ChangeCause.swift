/// Why the state changed, as the journal keeps it with each change: the global action that was
/// reduced, where it came from, and who sent it.
///
/// ```swift
/// let cause = ChangeCause.request(Array(#"{"counter":{"incrTapped":{}}}"#.utf8), peer: .init(uid: 1000, pid: 4242))
/// router.route([action], causes: [cause])
/// // the journal's row for the change it makes: origin "request", the action, uid 1000, pid 4242
/// ```
///
/// A cause is made only while a journal is written: without one nothing asks why.
package struct ChangeCause: Sendable, Equatable {
  package enum Origin: String, Sendable {
    /// A client's `Send` or `SendBatch`.
    case request
    /// An action a feature's effect sent.
    case effect
    /// A feature's `afterRestart` action, routed when the daemon started again from its journal.
    case restart
    /// A durable timer's action (`Effect.schedule`), routed when it fell due.
    case timer
  }

  /// Who sent a request: the process, as the Unix socket's peer credentials tell it, or a
  /// remote client's certificate (its uid then `UInt32.max`, no user).
  package struct Peer: Sendable, Equatable {
    package let uid: UInt32
    package let pid: Int32
    /// The client certificate's name (its common name, else its first URI or DNS name), for a
    /// request that came over TLS.
    package let certificate: String?

    package init(uid: UInt32, pid: Int32, certificate: String? = nil) {
      self.uid = uid
      self.pid = pid
      self.certificate = certificate
    }
  }

  package let origin: Origin
  /// The global action, as JSON text; `nil` when it cannot be told: an effect's action that
  /// stays with its feature (a read-only route), or one that does not encode.
  package let action: [UInt8]?
  package let peer: Peer?
  /// What the reduction read of the date and UUIDs, for `Replay`; `nil` when it read neither.
  package var dependencies: DependencyReadings? = nil
  /// How long the feature's reducer took on the action, as the metrics measured it; `nil` when
  /// not measured (a journal written before it was kept, or a change no reduction made).
  package var reduceNanoseconds: UInt64? = nil

  package init(
    origin: Origin, action: [UInt8]?, peer: Peer?, dependencies: DependencyReadings? = nil, reduceNanoseconds: UInt64? = nil
  ) {
    self.origin = origin
    self.action = action
    self.peer = peer
    self.dependencies = dependencies
    self.reduceNanoseconds = reduceNanoseconds
  }

  /// The cause without who sent it: what a subscriber that may not read the journal is told.
  package var withoutSender: Self {
    Self(
      origin: self.origin, action: self.action, peer: nil, dependencies: self.dependencies, reduceNanoseconds: self.reduceNanoseconds
    )
  }

  package static func request(_ action: [UInt8], peer: Peer?) -> Self {
    Self(origin: .request, action: action, peer: peer)
  }

  package static func effect(_ action: [UInt8]?) -> Self {
    Self(origin: .effect, action: action, peer: nil)
  }

  package static func restart(_ action: [UInt8]?) -> Self {
    Self(origin: .restart, action: action, peer: nil)
  }

  package static func timer(_ action: [UInt8]) -> Self {
    Self(origin: .timer, action: action, peer: nil)
  }
}
