import DequeModule
import Glibc
import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardVarlink

/// Serves one connection on its event loop: takes the calls its framing handler splits off,
/// starts each as it is read (a `Send` is routed right away, so pipelined sends keep their
/// order), and answers them one after another, in call order.
///
/// Nothing here waits: a call answers through its ``CallAnswer`` whenever it is done, and the
/// next call starts then. When the responder's stores run on this event loop too, a `Send` is
/// read, routed, reduced and answered without leaving the thread, and everything answered in
/// one turn of the loop is flushed once.
///
/// What a client can make it hold is bounded:
/// - at most `maxQueuedCalls` calls started and not answered; past them, and behind a barrier
///   call (one the responder wants answered before anything after it is read), frames wait
///   unread and the socket is not read, so a client that pipelines without end fills its own
///   socket buffer;
/// - no call starts while the client leaves more than `maxUnwrittenBytes` unread.
package final class VarlinkConnectionHandler: ChannelDuplexHandler {
  package typealias InboundIn = ByteBuffer
  package typealias OutboundIn = ByteBuffer
  package typealias OutboundOut = ByteBuffer

  private let responder: any VarlinkResponder
  private let server: ServerChannels
  private let caller: Caller?
  /// The connection's socket, which replies go to straight (``writeNow(_:_:)``); `nil` without
  /// one (an embedded channel), when everything goes through the channel.
  private let socket: CInt?
  private let log: ConnectionLog
  private let capacity: Int
  private let connectionLimit: Int
  /// Where connections refused over the limit are logged, rate-limited across all of them.
  private let refusals: ConnectionLog
  /// Calls by method and result, and how long each took.
  private let callMetrics: (any CallRecorder)?
  /// When the frames arriving now were read.
  private let lastRead: LastRead
  /// Every connection's calls read and not answered, subscriptions left out.
  private let requests: RequestsInFlight

  // A handler lives on its channel's event loop, and its methods never overlap their accesses:
  // the runtime's exclusivity checks on these would cost a few per cent of a call.
  @exclusivity(unchecked) private var context: ChannelHandlerContext?
  /// Frames read and not yet started, behind a barrier or past the capacity, with when.
  @exclusivity(unchecked) private var frames = Deque<(frame: ByteBuffer, readAt: NIODeadline)>()
  /// Calls started and not yet answered; the first is the one being answered.
  @exclusivity(unchecked) private var calls = Deque<ReadCall>()
  /// The number of the first of `calls`: a call's ``CallAnswer`` carries its own.
  @exclusivity(unchecked) private var firstCall: UInt64 = 0
  @exclusivity(unchecked) private var isFirstStarted = false
  @exclusivity(unchecked) private var isAdvancing = false
  @exclusivity(unchecked) private var advanceAgain = false
  /// The server is draining: no call starts any more.
  @exclusivity(unchecked) private var isDraining = false
  @exclusivity(unchecked) private var isReadHeld = false
  @exclusivity(unchecked) private var isFlushDue = false
  /// What was written since the last flush, gathered into one buffer.
  @exclusivity(unchecked) private var output = OutboundFrames()
  @exclusivity(unchecked) private var isFlushScheduled = false
  /// Writes handed to the channel and not done yet: while there is one, the next go there too.
  @exclusivity(unchecked) private var handedToChannel = 0
  /// Something was handed to the channel since its last flush.
  @exclusivity(unchecked) private var isChannelFlushDue = false
  /// The connection is reading: what is written meanwhile is flushed when the read is complete
  /// (``channelReadComplete(context:)``), with no task scheduled for it.
  @exclusivity(unchecked) private var isReading = false
  @exclusivity(unchecked) private var writableWaiters: [@Sendable () -> Void] = []
  @exclusivity(unchecked) private var registersOnClose: (@Sendable (@escaping @Sendable () -> Void) -> Void)?

  package init(
    responder: any VarlinkResponder,
    server: ServerChannels,
    caller: Caller?,
    socket: CInt? = nil,
    log: ConnectionLog,
    capacity: Int,
    connectionLimit: Int,
    refusals: ConnectionLog,
    calls: (any CallRecorder)? = nil,
    requests: RequestsInFlight = RequestsInFlight(),
    lastRead: LastRead = LastRead()
  ) {
    self.responder = responder
    self.server = server
    self.caller = caller
    self.socket = socket
    self.log = log
    self.capacity = max(1, capacity)
    self.connectionLimit = connectionLimit
    self.refusals = refusals
    self.callMetrics = calls
    self.lastRead = lastRead
    self.requests = requests
  }

  package func channelActive(context: ChannelHandlerContext) {
    do {
      try self.server.opened(context.channel, limit: self.connectionLimit)
      self.context = context
    } catch .tooManyConnections(let limit) {
      let caller = self.caller
      self.refusals.refusal("refusing a connection over the limit") {
        ["limit": "\(limit)", "peer.uid": "\(caller.map { "\($0.uid)" } ?? "-")"]
      }
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
    self.frames.removeAll()
    self.output = OutboundFrames()
    // Calls that will never be answered now.
    self.requests.answered(self.calls.count { !$0.more })
    self.calls.removeAll()
    let waiters = self.writableWaiters
    self.writableWaiters = []
    for waiter in waiters { waiter() }
    self.server.closed(context.channel)
    self.log.ended()
    context.fireChannelInactive()
  }

  package func channelRead(context: ChannelHandlerContext, data: NIOAny) {
    guard self.context != nil else { return }
    self.isReading = true
    self.frames.append((self.unwrapInboundIn(data), self.lastRead.time))
    self.advance()
  }

  /// The read is done: one flush for every reply its calls wrote, in the same pass.
  package func channelReadComplete(context: ChannelHandlerContext) {
    self.isReading = false
    if self.isFlushDue, self.context != nil { self.flush(context) }
    context.fireChannelReadComplete()
  }

  package func channelWritabilityChanged(context: ChannelHandlerContext) {
    if context.channel.isWritable {
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
    if self.hasRoom && self.context != nil {
      context.read()
    } else {
      self.isReadHeld = true
    }
  }

  private var hasRoom: Bool {
    self.frames.isEmpty && self.calls.count < self.capacity
  }

  // MARK: Answering

  /// Writes what the call being answered sends; anything else is dropped.
  func write(_ outgoing: VarlinkOutgoing, for call: UInt64, flushingNow: Bool = false) {
    guard let context, call == self.firstCall, self.isFirstStarted, let first = self.calls.first, !first.oneway else {
      return
    }
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
      self.flushSoon()
    }
  }

  /// Ends the call being answered, with its error reply if any, and starts the next.
  func finish(_ call: UInt64, error: VarlinkError?) {
    guard let context, call == self.firstCall, self.isFirstStarted, let first = self.calls.popFirst() else { return }
    self.firstCall &+= 1
    self.isFirstStarted = false
    if !first.more { self.requests.answered() }
    if let calls = self.callMetrics {
      // A subscription lasts as long as its client wants: only its end is counted.
      let nanoseconds = first.more ? nil : NIODeadline.now().uptimeNanoseconds &- first.readAt.uptimeNanoseconds
      calls.recordCall(kind: first.prepared.kind, error: error, nanoseconds: nanoseconds)
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
        self.flushSoon()
      }
    }
    if self.server.finishedAnswering(on: context.channel) {
      // The server drains and this was the connection's last call: what it wrote goes first.
      self.isDraining = true
      self.frames.removeAll()
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

  /// Starts what can start: frames become calls while there is room and no barrier waits, and
  /// the first call starts once the one before it is answered and the client reads its
  /// replies. A call that answers while it starts comes back here, and the loop goes on.
  private func advance() {
    guard !self.isAdvancing else {
      self.advanceAgain = true
      return
    }
    guard let context else { return }
    self.isAdvancing = true
    defer { self.isAdvancing = false }
    repeat {
      self.advanceAgain = false
      while !self.isDraining, self.calls.count < self.capacity, self.calls.last?.prepared.isBarrier != true,
        let next = self.frames.popFirst()
      {
        guard self.server.startAnswering(on: context.channel) else {
          self.isDraining = true
          self.frames.removeAll()
          break
        }
        let call = self.prepare(next.frame, readAt: next.readAt, on: context.channel)
        if !call.more { self.requests.started() }
        self.calls.append(call)
      }
      if !self.isFirstStarted, let first = self.calls.first, context.channel.isWritable {
        self.isFirstStarted = true
        switch first.prepared.answer {
        case let .answered(reply):
          // Known as the call was read: written here, with no `CallAnswer` made for it.
          self.write(reply, for: self.firstCall)
          self.finish(self.firstCall, error: nil)
        case let .starting(start):
          start(
            CallAnswer(connection: NIOLoopBound(self, eventLoop: context.eventLoop), channel: context.channel, call: self.firstCall)
          )
        }
      }
    } while self.advanceAgain
    if self.isDraining && self.calls.isEmpty {
      if self.isFlushDue { self.flush(context) }
      context.close(promise: nil)
    } else if self.isReadHeld && self.hasRoom {
      self.isReadHeld = false
      context.read()
    }
  }

  /// Flushes once this turn of the event loop is over: every reply written until then goes out
  /// in one `writev`.
  private func flushSoon() {
    self.isFlushDue = true
    // Written while the connection reads: its read's end flushes (pipelined calls answered in
    // the same pass share that flush). Otherwise (an answer from a worker's link, an effect, a
    // subscriber's delivery), a task after this turn of the loop does.
    guard !self.isReading, !self.isFlushScheduled, let context else { return }
    self.isFlushScheduled = true
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    context.eventLoop.execute {
      let handler = handler.value
      handler.isFlushScheduled = false
      guard handler.isFlushDue, let context = handler.context else { return }
      handler.flush(context)
    }
  }

  /// Writes what was gathered, as one buffer, and flushes what went through the channel.
  private func flush(_ context: ChannelHandlerContext) {
    self.isFlushDue = false
    self.output.flush { self.writeNow($0, context) }
    if self.isChannelFlushDue {
      self.isChannelFlushDue = false
      context.flush()
    }
  }

  /// How a call registers work for when `channel` closes: made at the connection's first call
  /// and kept, rather than made for every call (an idle connection makes none).
  private func whenClosed(_ channel: any Channel) -> @Sendable (@escaping @Sendable () -> Void) -> Void {
    if let whenClosed = self.registersOnClose { return whenClosed }
    let closeFuture = channel.closeFuture
    let whenClosed: @Sendable (@escaping @Sendable () -> Void) -> Void = { action in
      closeFuture.whenComplete { _ in action() }
    }
    self.registersOnClose = whenClosed
    return whenClosed
  }

  /// Writes `bytes` to the client: straight to the socket while the channel has none of this
  /// connection's writes queued and the socket takes them, and what is left through the
  /// channel, which waits for the socket to take more; the writes after it follow it there, in
  /// order, until the channel has written them all.
  ///
  /// The channel's write path — its pipeline, pending-writes queue and flush — is work for bytes
  /// ready to go as they are (a worker's link writes the same way). The socket is written only on the loop and while the channel is active:
  /// the channel closes it on the loop, and is inactive from then on. A write the socket refuses
  /// for any reason but a full buffer (the client is gone) goes to the channel too, whose write
  /// fails and closes the connection, as it always did.
  private func writeNow(_ bytes: ByteBuffer, _ context: ChannelHandlerContext) {
    guard let socket = self.socket else {
      context.write(self.wrapOutboundOut(bytes), promise: nil)
      self.isChannelFlushDue = true
      return
    }
    var bytes = bytes
    if self.handedToChannel == 0, context.channel.isActive {
      bytes.writeReadableBytes { send(socket, $0.baseAddress, $0.count, CInt(MSG_NOSIGNAL)) }
      if bytes.readableBytes == 0 { return }
    }
    self.handedToChannel += 1
    let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
    let written = context.eventLoop.makePromise(of: Void.self)
    written.futureResult.whenComplete { _ in handler.value.handedToChannel -= 1 }
    context.write(self.wrapOutboundOut(bytes), promise: written)
    self.isChannelFlushDue = true
  }

  /// Reads a call's envelope from its frame and starts it; the responder takes the rest straight
  /// from the frame's bytes.
  private func prepare(_ frame: ByteBuffer, readAt: NIODeadline, on channel: any Channel) -> ReadCall {
    do {
      return try frame.withUnsafeReadableBytes { bytes in
        let call = IncomingCall(frame: try VarlinkCallFrame(parsing: bytes), bytes: bytes)
        let prepared = self.responder.prepare(call, caller: self.caller, whenClosed: self.whenClosed(channel))
        return ReadCall(method: call.method, oneway: call.oneway, more: call.more, readAt: readAt, prepared: prepared, frame: frame)
      }
    } catch let error as VarlinkError {
      self.log.refusal("invalid call", ["error": "\(loggable("\(error)"))"])
      return ReadCall(method: "", oneway: false, readAt: readAt, prepared: .failing(error), errorIsLogged: true)
    } catch {
      self.log.refusal("malformed message", ["error": "\(loggable("\(error)"))"])
      let reply = VarlinkError.invalidRequest("malformed JSON: \(error)")
      return ReadCall(method: "", oneway: false, readAt: readAt, prepared: .failing(reply), errorIsLogged: true)
    }
  }
}
