import NIOCore
import SwitchyardVarlink

/// A call read from a connection, waiting for its turn to be answered.
struct ReadCall {
  let method: String
  let oneway: Bool
  /// A `more` call: it lasts as long as its client wants, so its length is not timed.
  var more = false
  /// When the read that completed the call happened.
  let readAt: NIODeadline
  let prepared: PreparedCall
  /// The call's frame, a view of the read buffer that costs nothing to keep: a failed `Send`'s
  /// log line shows its action.
  var frame: ByteBuffer? = nil
  /// The call could not be read, which was logged then: its error reply is not logged again.
  var errorIsLogged = false

  /// The action of a `Send`, as text, read again from the frame: only for a log line.
  var action: String? {
    self.frame?.withUnsafeReadableBytes { bytes in
      guard let call = try? VarlinkCallFrame(parsing: bytes) else { return nil }
      return IncomingCall(frame: call, bytes: bytes).parameter("action")?.serialized()
    }
  }
}
