import NIOCore
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardVarlink

/// What a ``VarlinkServer`` serves. The server reads calls and writes what they answer, in call
/// order; what a call means is the responder's alone.
///
/// ```swift
/// struct Echo: VarlinkResponder {
///   func prepare(_ call: IncomingCall, caller: Caller?, whenClosed: …) -> PreparedCall {
///     let call = call.tree()
///     return .answering { call.parameters }
///   }
/// }
/// ```
protocol VarlinkResponder: Sendable {
  /// Starts `call` as it is read, and returns what answers it when its turn comes. The call
  /// lives only while this runs (it points into the connection's read buffer): take from it
  /// what the answer needs.
  ///
  /// - Parameters:
  ///   - caller: Who sent the call (`SO_PEERCRED`), or `nil` when the kernel did not say.
  ///   - whenClosed: Registers work to do when the connection closes, so that a long call (a
  ///     subscription) notices a client that hung up even while it has nothing to write.
  func prepare(
    _ call: IncomingCall,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) -> PreparedCall
}

/// What a call writes back: a reply the server encodes, or bytes already encoded (a change that
/// was encoded once for every subscriber of its path).
enum VarlinkOutgoing: Sendable {
  case reply(VarlinkReply)
  case encoded(ByteBuffer)
  /// Several encoded messages, written together and flushed once.
  case encodedBatch([ByteBuffer])
}

/// A call that has been read: running it writes its replies through the given function, and
/// throws its error reply.
struct PreparedCall: Sendable {
  typealias Reply = @Sendable (VarlinkOutgoing) async throws -> Void

  /// Whether the connection must not read further calls until this one is answered.
  let isBarrier: Bool
  let run: @Sendable (_ reply: Reply) async throws -> Void

  init(isBarrier: Bool = false, _ run: @escaping @Sendable (_ reply: Reply) async throws -> Void) {
    self.isBarrier = isBarrier
    self.run = run
  }

  /// A barrier call answered with one reply, whose parameters `parameters` makes (or with the
  /// error it throws) when the call's turn comes.
  static func answering(_ parameters: @escaping @Sendable () throws -> JSONObject) -> PreparedCall {
    PreparedCall(isBarrier: true) { reply in try await reply(.reply(VarlinkReply(parameters: try parameters()))) }
  }

  /// A call answered with `error` whatever happens.
  static func failing(_ error: VarlinkError) -> PreparedCall {
    PreparedCall { _ in throw error }
  }
}

/// Counts what the server serves, for `Status` and the status line.
final class ServerCounters: Sendable {
  /// Open connections.
  let connections = Atomic<Int>(0)
}
