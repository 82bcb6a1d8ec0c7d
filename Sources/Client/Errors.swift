import SwitchyardJSON

/// Something went wrong with the connection itself, rather than with a call.
public enum SwitchyardConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The socket could not be connected to: it does not exist, nobody listens, or access is denied.
  case cannotConnect(path: String, reason: String)
  /// The connection closed before the call was answered.
  case connectionClosed
  /// A reply was larger than the client accepts.
  case messageTooLarge(limit: Int)
  /// A reply was not the JSON a Varlink reply is.
  case malformedReply(String)
  /// A subscription's daemon numbers its changes, in the same history, from below a change the
  /// subscription already delivered. (A daemon that restarted with a new history answers with a
  /// snapshot of it instead, which the subscription takes.)
  case sequenceWentBackwards(delivered: UInt64, received: UInt64)

  public var description: String {
    switch self {
    case let .cannotConnect(path, reason): "cannot connect to \(path): \(reason)"
    case .connectionClosed: "the connection closed"
    case let .messageTooLarge(limit): "a reply exceeds the limit of \(limit) bytes"
    case let .malformedReply(reason): "malformed reply: \(reason)"
    case let .sequenceWentBackwards(delivered, received):
      "the daemon's sequence went back from \(delivered) to \(received)"
    }
  }
}
