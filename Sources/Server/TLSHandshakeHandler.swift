import NIOCore
import NIOSSL
import NIOTLS
import SwitchyardSynchronization

/// Holds a TLS connection back from the Varlink pipeline until its handshake is done: then it
/// reads the client certificate's identity, has the connection's handlers added behind it with
/// that ``Caller``, lets them see the connection open, and leaves the pipeline.
///
/// A handshake must finish within the frame timeout: one that trickles, or never starts, is
/// closed. A refused handshake (no certificate, a foreign or expired one, garbage instead of a
/// ClientHello) is logged through ``HandshakeRefusals`` and closed. Handshakes under way are
/// bounded (``HandshakeSlots``): past the bound a new connection closes at once.
final class TLSHandshakeHandler: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer

  private let timeout: TimeAmount
  private let refusals: HandshakeRefusals
  private let slots: HandshakeSlots
  /// Where a refusal is counted: the server's counts, and this listener's index in them.
  private let counted: (counts: ListenerConnections, listener: Int)
  private var holdsSlot = false
  /// Adds the connection's handlers behind this one, for the caller the handshake found.
  private let serve: (Caller, ChannelHandlerContext) throws -> Void
  private var deadline: Scheduled<Void>?
  private var isDone = false
  private var isRefused = false

  init(
    timeout: TimeAmount, refusals: HandshakeRefusals, slots: HandshakeSlots, counted: (counts: ListenerConnections, listener: Int),
    serve: @escaping (Caller, ChannelHandlerContext) throws -> Void
  ) {
    self.timeout = timeout
    self.refusals = refusals
    self.slots = slots
    self.counted = counted
    self.serve = serve
  }

  func handlerAdded(context: ChannelHandlerContext) {
    if context.channel.isActive { self.startClock(context) }
  }

  /// Kept from the handlers behind until the handshake is done: they are not there yet.
  func channelActive(context: ChannelHandlerContext) {
    self.startClock(context)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.deadline?.cancel()
    self.releaseSlot()
    if self.isDone { context.fireChannelInactive() }
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    guard case TLSUserEvent.handshakeCompleted = event, !self.isDone else {
      return context.fireUserInboundEventTriggered(event)
    }
    self.isDone = true
    self.deadline?.cancel()
    self.releaseSlot()
    let certificate = try? context.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self).peerCertificate
    do {
      try self.serve(Caller(remote: certificate.map(CertificateIdentity.init)), context)
    } catch {
      context.close(promise: nil)
      return
    }
    context.fireChannelActive()
    context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    guard !self.isDone else { return context.fireErrorCaught(error) }
    self.refuse(context.channel, reason: "\(error)")
  }

  private func startClock(_ context: ChannelHandlerContext) {
    guard self.deadline == nil, !self.isDone else { return }
    self.holdsSlot = self.slots.take()
    guard self.holdsSlot else {
      return self.refuse(context.channel, reason: "\(self.slots.limit) handshakes are under way already")
    }
    let timeout = self.timeout
    let channel = context.channel
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    self.deadline = context.eventLoop.scheduleTask(in: timeout) {
      handler.value.refuse(channel, reason: "the handshake did not finish within \(timeout)")
    }
  }

  /// Logs (once per peer) and counts (once per connection) a refused handshake, and closes.
  private func refuse(_ channel: any Channel, reason: String) {
    if !self.isRefused { self.counted.counts.refusedHandshake(self.counted.listener) }
    self.isRefused = true
    self.refusals.refused(Self.peer(of: channel), reason: reason)
    channel.close(promise: nil)
  }

  private func releaseSlot() {
    if self.holdsSlot { self.slots.release() }
    self.holdsSlot = false
  }

  /// The peer's IP address: a client is logged once whatever port it comes from.
  private static func peer(of channel: any Channel) -> String {
    channel.remoteAddress?.ipAddress ?? "unknown"
  }
}

/// How many TLS handshakes may be under way at once, across a server's TLS listeners: a flood of
/// connections that never finish theirs holds at most this many descriptors and BoringSSL states.
final class HandshakeSlots: Sendable {
  let limit: Int
  private let taken = Atomic<Int>(0)

  init(limit: Int) {
    self.limit = limit
  }

  /// Takes a slot, if one is free.
  func take() -> Bool {
    if self.taken.wrappingAdd(1, ordering: .relaxed).newValue <= self.limit { return true }
    self.taken.wrappingSubtract(1, ordering: .relaxed)
    return false
  }

  func release() {
    self.taken.wrappingSubtract(1, ordering: .relaxed)
  }
}
