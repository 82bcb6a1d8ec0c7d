import SwitchyardJSON

/// One reply of a subscription: the state at the subscribed path, or a change to it.
///
/// ```swift
/// for try await event in client.changes(at: "/primes") {
///   switch event {
///   case let .snapshot(seq, state): print("\(seq): \(state)")
///   case let .patch(seq, patch): print("\(seq): \(patch.count) operations")
///   }
/// }
/// ```
public enum SubscriptionEvent: Sendable, Equatable {
  /// The whole state at the path, as of `seq`.
  case snapshot(seq: UInt64, state: JSONValue)
  /// The change numbered `seq`, as an RFC 6902 patch relative to the path.
  case patch(seq: UInt64, patch: JSONPatch)

  /// The sequence number of the state the event brings the subscriber to.
  public var seq: UInt64 {
    switch self {
    case let .snapshot(seq, _), let .patch(seq, _): seq
    }
  }

  /// Reads the parameters of a `Subscribe` reply: `{"seq": …, "state": …}` or `{"seq": …, "patch": […]}`.
  public init(parameters: JSONValue) throws {
    guard case let .int(seq)? = parameters["seq"], seq >= 0 else {
      throw SwitchyardConnectionError.malformedReply("a subscription reply needs \"seq\": \(parameters.serialized())")
    }
    if let state = parameters["state"], !state.isNull {
      self = .snapshot(seq: UInt64(seq), state: state)
    } else if let patch = parameters["patch"], !patch.isNull {
      do {
        self = .patch(seq: UInt64(seq), patch: try JSONPatch(jsonValue: patch))
      } catch {
        throw SwitchyardConnectionError.malformedReply("invalid patch: \(error)")
      }
    } else {
      throw SwitchyardConnectionError.malformedReply("a subscription reply needs \"state\" or \"patch\"")
    }
  }

  /// The event as the JSON the daemon sent: `{"seq": …, "state": …}` or `{"seq": …, "patch": […]}`.
  public var jsonValue: JSONValue {
    switch self {
    case let .snapshot(seq, state): ["seq": .int(Int64(seq)), "state": state]
    case let .patch(seq, patch): ["seq": .int(Int64(seq)), "patch": patch.jsonValue]
    }
  }
}

/// A subscription's event with what made its change, from
/// ``SwitchyardClient/changesWithCauses(at:)``.
public struct CausedEvent: Sendable, Equatable {
  public var event: SubscriptionEvent
  /// What made the change, as the daemon tells it: `{"feature": …, "origin": …, "action": …,
  /// "uid": …, "pid": …}`, each but `feature` only when the daemon keeps a journal; `nil` for a
  /// snapshot and for changes replayed after a reconnection.
  public var cause: JSONValue?

  public init(event: SubscriptionEvent, cause: JSONValue?) {
    self.event = event
    self.cause = cause
  }
}

/// A subscriber's copy of (part of) the daemon's state, kept up to date by applying a
/// subscription's snapshots and patches, and decoded into `Value` on demand.
///
/// ```swift
/// var replica = Replica<App.State>()
/// for try await event in client.changes() {
///   try replica.apply(event)
///   print(replica.seq, try replica.state.primes.count)
/// }
/// ```
///
/// ``SwitchyardClient/subscribe()`` does this for you; use a replica directly to see the patches
/// as well as the state.
public struct Replica<Value: Decodable>: Sendable {
  /// The sequence number of the state the replica holds; 0 before the first snapshot.
  public private(set) var seq: UInt64 = 0
  /// The state as JSON; `null` before the first snapshot.
  public private(set) var json: JSONValue = .null
  /// How many snapshots the replica has taken; more than one means it fell behind or resumed
  /// beyond the daemon's history.
  public private(set) var snapshots = 0
  /// Whether the replica follows the whole state, every change of which it must then see.
  private let followsWholeState: Bool

  /// An empty replica of the state at `path`, waiting for its first snapshot.
  ///
  /// Every change is numbered, but a subscriber to a path below the root is only sent the
  /// changes that touch it: its replica takes any later number, where a replica of the whole
  /// state takes only the next one.
  public init(path: JSONPointer = .root) {
    self.followsWholeState = path.isRoot
  }

  /// Applies a snapshot (replacing the state) or a patch (which must be the next change to the
  /// replica's path).
  ///
  /// - Throws: ``ReplicaError`` when a patch comes before any snapshot or skips a change, and
  ///   `JSONPatchError` when it does not apply.
  public mutating func apply(_ event: SubscriptionEvent) throws {
    switch event {
    case let .snapshot(seq, state):
      self.json = state
      self.snapshots += 1
      self.seq = seq
    case let .patch(seq, patch):
      guard self.snapshots > 0 else { throw ReplicaError.patchBeforeSnapshot(seq: seq) }
      guard self.followsWholeState ? seq == self.seq + 1 : seq > self.seq else {
        throw ReplicaError.gap(expected: self.seq + 1, received: seq)
      }
      try patch.apply(to: &self.json)
      self.seq = seq
    }
  }

  /// The state, decoded from ``json``.
  public var state: Value {
    get throws { try JSONValueDecoder.daemonOutput.decode(Value.self, from: self.json) }
  }
}

/// A subscription's replies did not fit together.
public enum ReplicaError: Error, Sendable, Equatable {
  /// A patch arrived before the first snapshot.
  case patchBeforeSnapshot(seq: UInt64)
  /// A patch skipped changes: it was not the one after the replica's state.
  case gap(expected: UInt64, received: UInt64)
}
