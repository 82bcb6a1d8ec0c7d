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
  /// The reply `{"parameters":{"seq":N}}`, written straight into the outgoing buffer: what a
  /// `Send` answers.
  case sequenceNumber(UInt64)
  case encoded(ByteBuffer)
  /// Several encoded messages, written together and flushed once.
  case encodedBatch([ByteBuffer])
}

/// A call that has been read, and how it answers when its turn comes: the connection starts
/// calls one after another, in call order, each once the one before it is answered, and hands
/// each a ``CallAnswer`` to write its replies to.
///
/// ```swift
/// PreparedCall { answer in
///   ticket.whenReduced { outcome in … answer.reply(.reply(reply)); answer.finish() }
/// }
/// ```
struct PreparedCall: Sendable {
  /// Whether the connection must not read further calls until this one is answered.
  let isBarrier: Bool
  /// Which method the metrics count the call under: the responder knows, having read it.
  var kind = CallKind.other
  private let answer: Answer

  private enum Answer {
    /// Called on the connection's event loop when the call's turn comes; it must not block.
    case starting(@Sendable (CallAnswer) -> Void)
    /// The reply `{"parameters":{"seq":N}}`, known as the call was read.
    case sequenceNumber(UInt64)
  }

  init(isBarrier: Bool = false, starting start: @escaping @Sendable (CallAnswer) -> Void) {
    self.isBarrier = isBarrier
    self.answer = .starting(start)
  }

  /// A call whose answer was known as it was read: the sequence number that a `Send` reduced
  /// while it was routed answers. The connection writes it when the call's turn comes, with
  /// nothing made for it meanwhile (``sequenceNumber``).
  static func answered(sequenceNumber seq: UInt64) -> PreparedCall {
    PreparedCall(isBarrier: false, answer: .sequenceNumber(seq))
  }

  private init(isBarrier: Bool, answer: Answer) {
    self.isBarrier = isBarrier
    self.answer = answer
  }

  /// The sequence number that answers the call, when it was known as the call was read.
  var sequenceNumber: UInt64? {
    guard case let .sequenceNumber(seq) = self.answer else { return nil }
    return seq
  }

  /// Answers the call through `answer`: on the connection's event loop, when its turn comes.
  func start(_ answer: CallAnswer) {
    switch self.answer {
    case let .starting(start):
      start(answer)
    case let .sequenceNumber(seq):
      answer.reply(.sequenceNumber(seq))
      answer.finish()
    }
  }

  /// A barrier call answered with one reply, whose parameters `parameters` makes (or with the
  /// error it throws) on the event loop when the call's turn comes.
  static func answering(_ parameters: @escaping @Sendable () throws(VarlinkError) -> JSONObject) -> PreparedCall {
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
  static func failing(_ error: VarlinkError) -> PreparedCall {
    PreparedCall { (answer: CallAnswer) in answer.finish(error) }
  }
}

/// Counts what the server serves, for `Status`, the status line and the metrics.
final class ServerCounters: Sendable {
  /// Open connections.
  let connections = Atomic<Int>(0)
  /// Calls by method and result, and how long they took; `nil` keeps no metrics.
  let calls: CallMetrics?
  /// Calls read and not answered yet, subscriptions left out.
  let requests: RequestsInFlight

  init(calls: CallMetrics? = nil, requests: RequestsInFlight = RequestsInFlight()) {
    self.calls = calls
    self.requests = requests
  }
}
