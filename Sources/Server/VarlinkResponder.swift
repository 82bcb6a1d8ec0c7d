import Logging
import NIOCore
import SwitchyardSynchronization
import SwitchyardVarlink

/// What a ``VarlinkServer`` serves. The server reads calls and writes what they answer, in call
/// order; what a call means is the responder's alone.
///
/// ```swift
/// struct Echo: VarlinkResponder {
///   func prepare(_ call: VarlinkCallFrame, caller: Caller?, whenClosed: …) -> PreparedCall {
///     let call = call.tree()
///     return .answering { call.parameters }
///   }
///   func error(for refusal: ServerRefusal) -> VarlinkError { … }
/// }
/// ```
package protocol VarlinkResponder: Sendable {
  /// Starts `call` as it is read, and returns what answers it when its turn comes. The call
  /// lives only while this runs (it points into the connection's read buffer): take from it
  /// what the answer needs. Whether `caller` may make the call is the responder's to decide.
  ///
  /// - Parameters:
  ///   - caller: Who sent the call (`SO_PEERCRED`), or `nil` when the kernel did not say.
  ///   - whenClosed: Registers work to do when the connection closes, so that a long call (a
  ///     subscription) notices a client that hung up even while it has nothing to write.
  func prepare(
    _ call: VarlinkCallFrame,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) -> PreparedCall

  /// The error the server sends when it refuses on its own: named in the responder's
  /// interface, as every other error a client gets.
  func error(for refusal: ServerRefusal) -> VarlinkError

  /// What the log line of a failed call shows besides its method and error, taken from the call
  /// as it was read (such as the action a refused `Send` carried); the values are the
  /// responder's to keep short. Asked only when the line is written.
  func logMetadata(ofFailed call: VarlinkCallFrame) -> Logger.Metadata
}

extension VarlinkResponder {
  package func logMetadata(ofFailed call: VarlinkCallFrame) -> Logger.Metadata { [:] }
}

/// Why the server refuses, before or around any call.
package enum ServerRefusal: Sendable {
  /// `limit` connections are open already: told to the connection, which then closes.
  case tooManyConnections(limit: Int)
  /// A call was not finished within the frame timeout of `seconds`: told when nothing else is
  /// being answered, and the connection closes.
  case timeout(seconds: Double)
  /// The server drains and starts no call any more: told to each call read and not started,
  /// which it did not carry out.
  case shuttingDown
}

/// What a call writes back: a reply the server encodes, or bytes already encoded (a change that
/// was encoded once for every subscriber of its path).
package enum VarlinkOutgoing: Sendable {
  case reply(VarlinkReply)
  /// The reply `{"parameters":{"name":N}}`, written straight into the outgoing buffer with no
  /// parameters object made for it: a reply whose one parameter is a number is the most common
  /// there is. `name` is written as it is, so it must need no escaping in JSON.
  case integerParameter(StaticString, UInt64)
  case encoded(ByteBuffer)
  /// Several encoded messages, written together and flushed once.
  case encodedBatch([ByteBuffer])
}

/// Which method a call was, as the responder counts calls: an index into a table of method
/// names that is the responder's own. The server hands it to the ``CallRecorder`` unread.
package struct CountedMethod: Hashable, Sendable {
  package let index: Int

  package init(index: Int) {
    self.index = index
  }
}

/// Where the server counts each call it answered. Called on the connection's event loop for
/// every call: it must not block, and should neither allocate nor lock.
package protocol CallRecorder: AnyObject, Sendable {
  /// Counts a call of `kind` (`nil`: one the server could not read) that ended with `error`
  /// (`nil`: answered) after `nanoseconds`; `nil` for a call whose length says nothing (a
  /// subscription lasts as long as its client wants).
  func recordCall(kind: CountedMethod?, error: VarlinkError?, nanoseconds: UInt64?)
}

/// Counts what the server serves, for `Status`, the status line and the metrics.
package final class ServerCounters: Sendable {
  /// Open connections.
  package let connections = Atomic<Int>(0)
  /// Open connections by listener.
  package let byListener = ListenerConnections()
  /// Calls by method and result, and how long they took; `nil` keeps no metrics.
  package let calls: (any CallRecorder)?
  /// Calls read and not answered yet, subscriptions left out.
  package let requests: RequestsInFlight

  package init(calls: (any CallRecorder)? = nil, requests: RequestsInFlight = RequestsInFlight()) {
    self.calls = calls
    self.requests = requests
  }
}
