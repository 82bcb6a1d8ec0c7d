import Logging
import NIOCore
import SwitchyardVarlink

/// A call read from a connection, waiting for its turn to be answered.
struct ReadCall: ConnectionCall {
  let method: String
  let oneway: Bool
  /// A `more` call: it lasts as long as its client wants, so its length is not timed.
  var more = false
  /// When the read that completed the call happened.
  let readAt: NIODeadline
  let prepared: PreparedCall
  /// The call's frame, a view of the read buffer that costs nothing to keep: the log line of a
  /// call that failed shows what the responder picks from it.
  var frame: ByteBuffer? = nil
  /// The call could not be read, which was logged then: its error reply is not logged again.
  var errorIsLogged = false

  var isBarrier: Bool { self.prepared.isBarrier }

  /// What `responder` adds to the log line of the call's error reply, read again from the frame.
  func failureMetadata(from responder: any VarlinkResponder) -> Logger.Metadata {
    self.frame?.withUnsafeReadableBytes { bytes in
      guard let call = try? VarlinkCallFrame(parsing: bytes) else { return [:] }
      return responder.logMetadata(ofFailed: IncomingCall(frame: call, bytes: bytes))
    } ?? [:]
  }
}
