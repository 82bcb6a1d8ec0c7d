import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardVarlink

/// A call that has been read, waiting for its turn: how it answers (the responder's part) and
/// what the server read of it. The connection starts calls one after another, in call order,
/// each once the one before it is answered, and hands each a ``CallAnswer`` to write its
/// replies to.
///
/// ```swift
/// PreparedCall { answer in
///   ticket.whenReduced { outcome in … answer.reply(.reply(reply)); answer.finish() }
/// }
/// ```
package struct PreparedCall: Sendable, ConnectionCall {
  /// Whether the connection must not read further calls until this one is answered.
  package let isBarrier: Bool
  /// Which method the metrics count the call under: the responder knows, having read it;
  /// `nil` for a call the server could not read.
  package var kind: CountedMethod?
  /// The access policy refused the call: the server counts it under its listener and identity.
  package var isDeniedByPolicy = false
  let answer: Answer

  // What the server read of the call, set as it reads it.
  /// The qualified method name; empty for a call the server could not read.
  var method = ""
  /// The caller wants no reply.
  var oneway = false
  /// A `more` call: it lasts as long as its client wants, so its length is not timed.
  var more = false
  /// When the read that completed the call happened.
  var readAt = NIODeadline.uptimeNanoseconds(0)
  /// The call's frame, a view of the read buffer that costs nothing to keep: the log line of a
  /// call that failed shows what the responder picks from it.
  var frame: ByteBuffer?
  /// The call could not be read, which was logged then: its error reply is not logged again.
  var errorIsLogged = false

  enum Answer: Sendable {
    /// Called on the connection's event loop when the call's turn comes; it must not block.
    case starting(@Sendable (CallAnswer) -> Void)
    /// The one reply, known as the call was read: the connection writes it when the call's
    /// turn comes, with nothing (no closure, no ``CallAnswer``) made for it meanwhile.
    case answered(VarlinkOutgoing)
  }

  package init(isBarrier: Bool = false, starting start: @escaping @Sendable (CallAnswer) -> Void) {
    self.isBarrier = isBarrier
    self.answer = .starting(start)
  }

  /// A call whose one reply was known as it was read, such as a `{"parameters":{"seq":N}}`
  /// made while the call was routed.
  package static func answered(_ reply: VarlinkOutgoing) -> PreparedCall {
    PreparedCall(isBarrier: false, answer: .answered(reply))
  }

  private init(isBarrier: Bool, answer: Answer) {
    self.isBarrier = isBarrier
    self.answer = answer
  }

  /// The one reply, when it was known as the call was read.
  package var knownReply: VarlinkOutgoing? {
    guard case let .answered(reply) = self.answer else { return nil }
    return reply
  }

  /// Answers the call through `answer`: on the connection's event loop, when its turn comes.
  package func start(_ answer: CallAnswer) {
    switch self.answer {
    case let .starting(start):
      start(answer)
    case let .answered(reply):
      answer.reply(reply)
      answer.finish()
    }
  }

  /// A barrier call answered with one reply, whose parameters `parameters` makes (or with the
  /// error it throws) on the event loop when the call's turn comes.
  package static func answering(_ parameters: @escaping @Sendable () throws(VarlinkError) -> JSONObject) -> PreparedCall {
    PreparedCall(isBarrier: true) { (answer: CallAnswer) in
      do throws(VarlinkError) {
        answer.reply(.reply(VarlinkReply(parameters: try parameters())))
        answer.finish()
      } catch {
        answer.finish(error)
      }
    }
  }

  /// A call answered with `error` whatever happens.
  package static func failing(_ error: VarlinkError) -> PreparedCall {
    PreparedCall { (answer: CallAnswer) in answer.finish(error) }
  }

  /// What `responder` adds to the log line of the call's error reply, read again from the frame.
  func failureMetadata(from responder: any VarlinkResponder) -> Logger.Metadata {
    self.frame?.withUnsafeReadableBytes { bytes in
      guard let call = try? VarlinkCallFrame(parsing: bytes) else { return [:] }
      return responder.logMetadata(ofFailed: call)
    } ?? [:]
  }
}
