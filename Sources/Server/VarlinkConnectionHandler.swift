import DequeModule
import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardVarlink

/// Serves one connection on its event loop: drives its ``ConnectionState`` — which says when a
/// frame its framing handler split off becomes a call, when a call is answered, when the socket
/// is read and when the connection closes — and does the I/O it asks for.
///
/// A call starts as it is read (a `Send` is routed right away, so pipelined sends keep their
/// order), and calls are answered one after another, in call order. Nothing here waits: a call
/// answers through its ``CallAnswer`` whenever it is done, and the next call starts then. When
/// the responder's stores run on this event loop too, a `Send` is read, routed, reduced and
/// answered without leaving the thread, and everything answered in one turn of the loop is
/// flushed once.
package final class VarlinkConnectionHandler: ChannelDuplexHandler {
  package typealias InboundIn = ByteBuffer
  package typealias OutboundIn = ByteBuffer
  package typealias OutboundOut = ByteBuffer
  /// A frame read, and when.
  typealias ReadFrame = (frame: ByteBuffer, readAt: NIODeadline)

  let responder: any VarlinkResponder
  private let server: ServerChannels
  let caller: Caller?
  /// The connection's socket, kept in the server's ``ConnectionStore`` when it has one.
  private let descriptor: CInt?
  /// The name it is kept under already: a connection the previous process handed over.
  private let storedAs: String?
  let log: ConnectionLog
  private let connectionLimit: Int
  /// Where refused connections and denied calls are logged and counted.
  let refusals: ConnectionRefusals
  /// Calls by method and result, and how long each took.
  private let callMetrics: (any CallRecorder)?
  /// When the frames arriving now were read.
  private let lastRead: LastRead
  /// Every connection's calls read and not answered, subscriptions left out.
  private let requests: RequestsInFlight

  // On its channel's event loop, its methods never overlap their accesses: no exclusivity checks.
  /// Set while the connection is admitted and open.
  @exclusivity(unchecked) private var context: ChannelHandlerContext?
  @exclusivity(unchecked) private var state: ConnectionState<ReadFrame, PreparedCall>
  /// ``advance()`` is running: a call answered while it starts comes back to it, not into it.
  @exclusivity(unchecked) private var isAdvancing = false
  /// What was written since the last flush, gathered into one buffer.
  @exclusivity(unchecked) private var output = OutboundFrames()
  /// Writes replies straight to the socket while it takes them; `nil` where the bytes must pass
  /// through the pipeline (TLS encrypts them there).
  private let socket: DescriptorWriter?
  /// Something was handed to the channel since its last flush.
  @exclusivity(unchecked) private var isChannelFlushDue = false
  @exclusivity(unchecked) private var writableWaiters: [@Sendable () -> Void] = []
  @exclusivity(unchecked) private var registersOnClose: (@Sendable (@escaping @Sendable () -> Void) -> Void)?
  /// The call the next process takes up first (a subscription handed over), as a frame.
  @exclusivity(unchecked) private var resume: [UInt8]?

  package init(
    responder: any VarlinkResponder,
    server: ServerChannels,
    caller: Caller?,
    descriptor: CInt? = nil,
    storedAs: String? = nil,
    log: ConnectionLog,
    capacity: Int,
    connectionLimit: Int,
    refusals: ConnectionRefusals,
    calls: (any CallRecorder)? = nil,
    requests: RequestsInFlight = RequestsInFlight(),
    lastRead: LastRead = LastRead(),
    writesToSocket: Bool = true
  ) {
    self.responder = responder
    self.server = server
    self.caller = caller
    self.descriptor = descriptor
    self.log = log
    self.storedAs = storedAs
    self.state = ConnectionState(capacity: capacity)
    self.connectionLimit = connectionLimit
    self.refusals = refusals
    self.callMetrics = calls
    self.lastRead = lastRead
    self.requests = requests
    self.socket = writesToSocket ? DescriptorWriter(kind: .socket) : nil
  }

  package func channelActive(context: ChannelHandlerContext) {
    do {
      try self.server.opened(context.channel, limit: self.connectionLimit, descriptor: self.descriptor, storedAs: self.storedAs)
      self.context = context
      // Accepted or adopted as the server hands over (systemd's socket kept it queued, or the
      // previous process handed it over): it goes over too. On the loop's next turn, after an
      // adopted connection's handed-over bytes have been read into it.
      if self.server.isHandingOver {
        let channel = context.channel
        context.eventLoop.execute { channel.pipeline.fireUserInboundEventTriggered(HandOverEvent()) }
      }
    } catch let refusal where refusal.limit != nil {
      let limit = refusal.limit ?? 0
      self.refusals.overLimit(limit, storeIsFull: refusal.isStoreFull, caller: self.caller)
      let error = self.responder.error(for: .tooManyConnections(limit: limit))
      context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(bytes: error.frame())), promise: nil)
      context.close(promise: nil)
    } catch {
      context.close(promise: nil)
    }
    context.fireChannelActive()
  }

  package func channelInactive(context: ChannelHandlerContext) {
    guard self.context != nil else { return context.fireChannelInactive() }
    self.context = nil
    let unanswered = self.state.close()
    self.output = OutboundFrames()
    // Calls that will never be answered now.
    self.requests.answered(unanswered.count { !$0.more })
    let waiters = self.writableWaiters
    self.writableWaiters = []
    for waiter in waiters { waiter() }
    self.server.closed(context.channel)
    self.log.ended()
    context.fireChannelInactive()
  }

  package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard self.context != nil else { return }
    self.state.read((self.unwrapInboundIn(data), self.lastRead.time))
    self.advance()
  }

  /// The read is done: one flush for every reply its calls wrote, in the same pass.
  package func channelReadComplete(context: ChannelHandlerContext) {
    if self.state.readComplete(), self.context != nil { self.flush(context) }
    context.fireChannelReadComplete()
  }

  package func channelWritabilityChanged(context: ChannelHandlerContext) {
    let isWritable = context.channel.isWritable
    self.state.writabilityChanged(isWritable)
    if isWritable {
      let waiters = self.writableWaiters
      self.writableWaiters = []
      for waiter in waiters { waiter() }
      self.advance()
    }
    context.fireChannelWritabilityChanged()
  }

  package func errorCaught(context: ChannelHandlerContext, error: any Error) {
    if let error = error as? VarlinkFrameTooLarge {
      self.log.refusal("closing a connection: \(error)", [:])
    } else {
      self.log.debug("connection ended", ["error": "\(error)"])
    }
    context.close(promise: nil)
  }

  /// Reads the socket only while there is room for what it brings.
  package func read(context: ChannelHandlerContext) {
    guard self.context != nil else { return }
    if self.state.readRequested() == .read { context.read() }
  }

  /// A close from outside the handler (a drain) sends what this turn of the loop wrote first.
  package func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
    if self.context != nil, !self.output.isEmpty || self.isChannelFlushDue { self.flush(context) }
    context.close(mode: mode, promise: promise)
  }

  /// The connection's state as plain data.
  var snapshot: ConnectionSnapshot { self.state.snapshot }

  // MARK: Answering

  /// Writes what the call being answered sends; anything else is dropped.
  func write(_ outgoing: VarlinkOutgoing, for call: UInt64, flushingNow: Bool = false) {
    guard let context, self.state.isAnswering(call) else { return }
    let allocator = context.channel.allocator
    switch outgoing {
    case let .reply(reply): self.output.append(allocator: allocator) { $0.writeBytes(reply.frame()) }
    case let .integerParameter(name, value):
      self.output.append(allocator: allocator) { VarlinkReply.writeIntegerParameter(name, value, to: &$0) }
    case let .encoded(bytes): self.output.append(bytes, allocator: allocator) { self.writeNow($0, context) }
    case let .encodedBatch(buffers):
      for bytes in buffers { self.output.append(bytes, allocator: allocator) { self.writeNow($0, context) } }
    }
    if flushingNow {
      self.flush(context)
    } else {
      self.flushSoon(context)
    }
  }

  /// Ends the call being answered, with its error reply if any, and starts the next.
  func finish(_ call: UInt64, error: VarlinkError?) {
    guard let context, let first = self.state.finish(call) else { return }
    if !first.more { self.requests.answered() }
    if let calls = self.callMetrics {
      // A subscription lasts as long as its client wants: only its end is counted.
      let nanoseconds = first.more ? nil : NIODeadline.now().uptimeNanoseconds &- first.readAt.uptimeNanoseconds
      calls.recordCall(kind: first.kind, error: error, nanoseconds: nanoseconds)
    }
    if let error {
      if !first.errorIsLogged {
        self.log.refusal("error reply") {
          // Built only when the line is written.
          var metadata = first.failureMetadata(from: self.responder)
          metadata["method"] = "\(loggable(first.method))"
          metadata["error"] = "\(loggable("\(error)"))"
          return metadata
        }
      }
      if !first.oneway {
        self.output.append(allocator: context.channel.allocator) { $0.writeBytes(error.frame()) }
        self.flushSoon(context)
      }
    }
    if self.server.finishedAnswering(on: context.channel) {
      // The server drains and this was the connection's last call: what it wrote goes first.
      self.state.drain()
    }
    self.advance()
  }

  /// Calls `waiter` once the client has read enough of what was written to it, or once the
  /// connection closed.
  func whenWritable(_ waiter: @escaping @Sendable () -> Void) {
    if let context, !context.channel.isWritable {
      self.writableWaiters.append(waiter)
    } else {
      waiter()
    }
  }

  /// Does what the connection's state says until it says to wait. A call that answers while it
  /// starts comes back here while this runs, and the loop goes on.
  private func advance() {
    guard !self.isAdvancing, let context else { return }
    self.isAdvancing = true
    defer { self.isAdvancing = false }
    while true {
      switch self.state.next() {
      case let .startCall(next):
        guard self.server.startAnswering(on: context.channel) else {
          self.state.drain()
          continue
        }
        let call = self.prepare(next.frame, readAt: next.readAt, on: context.channel)
        if !call.more { self.requests.started() }
        self.state.started(call)
      case let .refuseCall(next):
        self.server.startRefusing(on: context.channel)
        let call = self.refusal(of: next.frame, readAt: next.readAt)
        if !call.more { self.requests.started() }
        self.state.started(call)
      case let .answer(first, number):
        switch first.answer {
        case let .answered(reply):
          // Known as the call was read: written here, with no `CallAnswer` made for it.
          self.write(reply, for: number)
          self.finish(number, error: nil)
        case let .starting(start):
          start(CallAnswer(connection: NIOLoopBound(self, eventLoop: context.eventLoop), channel: context.channel, call: number))
        }
      case .resumeReading:
        context.read()
      case .close:
        if self.state.isFlushDue { self.flush(context) }
        context.close(promise: nil)
        return
      case .handOver:
        if self.state.isFlushDue { self.flush(context) }
        self.handOver(context)
        return
      case .wait:
        return
      }
    }
  }

  /// The server hands its connections over: nothing more starts, and once the calls started
  /// are answered (``HandOverEvent``) the connection goes as it is.
  package func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    guard event is HandOverEvent else { return context.fireUserInboundEventTriggered(event) }
    // Not a byte more is read: a read already asked for would bring bytes after the state is
    // taken, and they would be lost with this process. What the socket holds is the next one's.
    try? context.channel.syncOptions?.setOption(.autoRead, value: false)
    self.state.startHandingOver()
    self.advance()
  }

  /// Ends call `number` with nothing written, for the next process to take up as `resume`;
  /// with `error` when calls started behind it would be answered before it there.
  func handOver(_ number: UInt64, resume: [UInt8], otherwise error: VarlinkError) {
    guard self.state.isAnswering(number) else { return }
    guard self.state.callsInFlight == 1 else { return self.finish(number, error: error) }
    self.resume = resume
    self.finish(number, error: nil)
  }

  /// Gives the server what the next process reads first — the call it takes up, the frames
  /// read and not started, the start of a frame — and leaves the socket to it, open.
  private func handOver(_ context: ChannelHandlerContext) {
    var pending = self.resume ?? []
    // A frame comes without the NUL that ended it.
    for frame in self.state.handedOver() {
      pending += frame.frame.readableBytesView
      pending.append(0)
    }
    let reader = try? context.pipeline.syncOperations.handler(type: FrameReader.self)
    if let unread = reader?.takeUnread() { pending += unread.readableBytesView }
    self.output = OutboundFrames()
    let resumesCall = self.resume != nil
    // Replies the socket did not take yet wait in the channel, and would go with this process:
    // the connection is handed over once they are written (a failed write closes it instead).
    // Most have none, and go at once: thousands of writes to wait for would lengthen the pause.
    guard (try? context.channel.syncOptions?.getOption(.bufferedWritableBytes)) != 0 else {
      return self.handedOver(context, pending: pending, resumesCall: resumesCall)
    }
    let written = context.eventLoop.makePromise(of: Void.self)
    context.writeAndFlush(self.wrapOutboundOut(context.channel.allocator.buffer(capacity: 0)), promise: written)
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    let pendingBytes = pending
    written.futureResult.whenSuccess {
      let handler = handler.value
      guard let context = handler.context else { return }
      handler.handedOver(context, pending: pendingBytes, resumesCall: resumesCall)
    }
  }

  /// Leaves the socket to the server's store, or closes it when the store does not keep it.
  private func handedOver(_ context: ChannelHandlerContext, pending: [UInt8], resumesCall: Bool) {
    if self.server.handedOver(context.channel, pending: pending, resumesCall: resumesCall) {
      self.context = nil
    } else {
      context.close(promise: nil)
    }
  }

  /// Flushes once this turn of the event loop is over: every reply written until then goes out
  /// in one `writev`. Written while the connection reads, its read's end flushes (pipelined
  /// calls answered in the same pass share that flush); otherwise (an answer from a worker's
  /// link, an effect, a subscriber's delivery) a task after this turn of the loop does.
  private func flushSoon(_ context: ChannelHandlerContext) {
    guard self.state.wrote() else { return }
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    context.eventLoop.execute {
      let handler = handler.value
      guard handler.state.scheduledFlushRuns(), let context = handler.context else { return }
      handler.flush(context)
    }
  }

  /// Writes what was gathered, as one buffer, and flushes what went through the channel.
  private func flush(_ context: ChannelHandlerContext) {
    self.state.flushed()
    self.output.flush { self.writeNow($0, context) }
    if self.isChannelFlushDue {
      self.isChannelFlushDue = false
      context.flush()
    }
  }

  /// How a call registers work for when `channel` closes: made at the connection's first call
  /// and kept, rather than made for every call (an idle connection makes none).
  func whenClosed(_ channel: any Channel) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
    if let whenClosed = self.registersOnClose { return whenClosed }
    let closeFuture = channel.closeFuture
    let whenClosed: @Sendable (@escaping @Sendable () -> Void) -> Void = { action in
      closeFuture.whenComplete { _ in action() }
    }
    self.registersOnClose = whenClosed
    return whenClosed
  }

  /// Writes `bytes` to the client: straight to the socket while it takes them, the rest through
  /// the channel (``DescriptorWriter``), which flushes with the rest of this turn's writes.
  private func writeNow(_ bytes: ByteBuffer, _ context: ChannelHandlerContext) {
    guard let socket = self.socket else {
      context.write(self.wrapOutboundOut(bytes), promise: nil)
      self.isChannelFlushDue = true
      return
    }
    socket.write(bytes, on: context.channel) { rest, written in
      context.write(self.wrapOutboundOut(rest), promise: written)
      self.isChannelFlushDue = true
    }
  }
}
