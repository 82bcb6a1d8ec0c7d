import SwitchyardJSON

/// What a subscription tells ``SwitchyardClient/Configuration/onReconnection`` of its connection:
/// that it is cut off from the daemon and reconnecting, then that it is back, so that a program
/// can say so to its user (`switchyard watch` does, on stderr).
///
/// ```swift
/// var configuration = SwitchyardClient<JSONValue, JSONValue>.Configuration()
/// configuration.onReconnection = { event in
///   switch event {
///   case let .reconnecting(_, reason): print("reconnecting: \(reason)")  // reconnecting: the connection closed
///   case let .reconnected(_, seq): print("reconnected at seq \(seq)")
///   }
/// }
/// ```
public enum ReconnectionEvent: Sendable, Equatable {
  /// The subscription to `path` lost its connection and reconnects; `reason` says why, such as
  /// "the connection closed" or "the daemon is shutting down". Told once as the connection drops,
  /// however many attempts the reconnection then takes.
  case reconnecting(path: JSONPointer, reason: String)
  /// The subscription to `path` is connected again, to a daemon at `seq`, and subscribes: what it
  /// yields next are the changes it missed, or a fresh snapshot when the daemon's history is
  /// another (it restarted without its journal, say).
  case reconnected(path: JSONPointer, seq: UInt64)
}
