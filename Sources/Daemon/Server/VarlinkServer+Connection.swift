import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardVarlink

extension VarlinkServer {
  /// Serves one connection: a reader that starts each call as it arrives (sends are routed
  /// right away, in order) and an answerer that answers them one after another, in call order,
  /// with at most `limits.maxQueuedCalls` between them.
  func serve(_ accepted: Connection) async {
    let channel = accepted.channel
    let count = self.counters.connections.add(1, ordering: .relaxed).newValue
    defer { self.counters.connections.subtract(1, ordering: .relaxed) }
    let log = ConnectionLog(logger: self.logger, peer: accepted.peer)
    let settings = self.configuration.value
    let limit = min(settings.maximumConnections, self.connectionCeiling)
    guard count <= limit else {
      self.refusedConnections.refusal("refusing a connection over the limit") {
        ["limit": "\(limit)", "peer.uid": "\(accepted.peer.map { "\($0.uid)" } ?? "-")"]
      }
      await Self.refuse(channel, with: VarlinkError(SwitchyardError.tooManyConnections(limit: limit)))
      return
    }
    guard self.channels.opened(channel) else {
      try? await channel.close()
      return
    }
    defer {
      self.channels.closed(channel)
      log.ended()
    }
    do {
      let connection = try await channel.eventLoop.submit {
        let connection = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        try channel.syncOptions?.setOption(.autoRead, value: true)
        return connection
      }.get()
      try await connection.executeThenClose { inbound, outbound in
        let queue = CallQueue<QueuedCall>(capacity: settings.maximumQueuedCalls)
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask {
            while let queued = await queue.next() {
              await self.answer(queued, on: channel, outbound: outbound, log: log)
              queued.answered?.signal()
            }
          }
          defer { queue.finish() }
          for try await frame in inbound {
            guard self.channels.startAnswering(on: channel) else { break }
            var queued = self.prepare(frame, on: channel, caller: accepted.peer, log: log)
            if queued.prepared.isBarrier {
              // Nothing after this call is read, let alone routed, until it is answered.
              let answered = Answered()
              queued.answered = answered
              await queue.push(queued)
              await answered.wait()
            } else {
              await queue.push(queued)
            }
          }
          queue.finish()
          try await group.waitForAll()
        }
      }
    } catch let error as VarlinkFrameTooLarge {
      log.refusal("closing a connection: \(error)", [:])
    } catch {
      self.logger.debug("connection ended", metadata: ["error": "\(error)"])
    }
  }

  /// Writes `error` to a connection that will not be served, then closes it.
  private static func refuse(_ channel: any Channel, with error: VarlinkError) async {
    try? await channel.writeAndFlush(channel.allocator.buffer(bytes: error.frame()))
    try? await channel.close()
  }

  /// Reads a call's envelope from its frame and starts it; the responder takes the rest straight
  /// from the frame's bytes.
  private func prepare(_ frame: ByteBuffer, on channel: any Channel, caller: Caller?, log: ConnectionLog) -> QueuedCall {
    do {
      return try frame.withUnsafeReadableBytes { bytes in
        let call = IncomingCall(frame: try VarlinkCallFrame(parsing: bytes), bytes: bytes)
        let prepared = self.responder.prepare(
          call,
          caller: caller,
          whenClosed: { action in channel.closeFuture.whenComplete { _ in action() } }
        )
        return QueuedCall(method: call.method, oneway: call.oneway, prepared: prepared, frame: frame)
      }
    } catch let error as VarlinkError {
      log.refusal("invalid call", ["error": "\(loggable("\(error)"))"])
      return QueuedCall(method: "", oneway: false, prepared: .failing(error), errorIsLogged: true)
    } catch {
      log.refusal("malformed message", ["error": "\(loggable("\(error)"))"])
      let reply = VarlinkError.invalidRequest("malformed JSON: \(error)")
      return QueuedCall(method: "", oneway: false, prepared: .failing(reply), errorIsLogged: true)
    }
  }

  /// Runs a call and writes its replies (none for a oneway call).
  private func answer(
    _ queued: QueuedCall,
    on channel: any Channel,
    outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
    log: ConnectionLog
  ) async {
    defer { self.channels.finishedAnswering(on: channel) }
    let allocator = channel.allocator
    // Waits while the client leaves more than `limits.maxUnwrittenBytes` unread.
    @Sendable func write(_ frame: [UInt8]) async throws {
      try await outbound.write(allocator.buffer(bytes: frame))
    }
    do {
      try await queued.prepared.run { outgoing in
        guard !queued.oneway else { return }
        switch outgoing {
        case let .reply(reply): try await write(reply.frame())
        case let .encoded(bytes): try await outbound.write(bytes)
        case let .encodedBatch(buffers): try await outbound.write(contentsOf: buffers)
        }
      }
    } catch let error as VarlinkError {
      if !queued.errorIsLogged {
        log.refusal("error reply") {
          // Built only when the line is written.
          var metadata: Logger.Metadata = ["method": "\(loggable(queued.method))", "error": "\(loggable("\(error)"))"]
          if let action = queued.action { metadata["action"] = "\(String(action.prefix(512)))" }
          return metadata
        }
      }
      if !queued.oneway { try? await write(error.frame()) }
    } catch {
      self.logger.debug("a reply could not be written", metadata: ["error": "\(error)"])
    }
  }
}

/// A call read from a connection, waiting for its turn to be answered.
struct QueuedCall: Sendable {
  let method: String
  let oneway: Bool
  let prepared: PreparedCall
  /// The call's frame, a view of the read buffer that costs nothing to keep: a failed `Send`'s
  /// log line shows its action.
  var frame: ByteBuffer? = nil
  /// The call could not be read, which was logged then: its error reply is not logged again.
  var errorIsLogged = false
  /// Set for a barrier: the reader waits for it before it reads on.
  var answered: Answered?

  /// The action of a `Send`, as text, read again from the frame: only for a log line.
  var action: String? {
    self.frame?.withUnsafeReadableBytes { bytes in
      guard let call = try? VarlinkCallFrame(parsing: bytes) else { return nil }
      return IncomingCall(frame: call, bytes: bytes).parameter("action")?.serialized()
    }
  }
}

/// Tells a connection's reader that the barrier call it waits for was answered.
final class Answered: Sendable {
  private let state = Mutex<(done: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

  func signal() {
    let waiter = self.state.withLock { state in
      state.done = true
      defer { state.waiter = nil }
      return state.waiter
    }
    waiter?.resume()
  }

  func wait() async {
    await withCheckedContinuation { continuation in
      let done = self.state.withLock { state in
        if !state.done { state.waiter = continuation }
        return state.done
      }
      if done { continuation.resume() }
    }
  }
}

/// The log lines one connection causes: with the peer's uid and pid, and refusals rate-limited
/// (``LogRateLimiter``), so that a client sending garbage as fast as it can costs the journal a
/// few lines and a summary.
final class ConnectionLog: Sendable {
  private let logger: Logger
  private let limiter = Mutex(LogRateLimiter())

  init(logger: Logger, peer: Caller?) {
    var logger = logger
    if let peer {
      logger[metadataKey: "peer.uid"] = "\(peer.uid)"
      logger[metadataKey: "peer.pid"] = "\(peer.pid)"
    }
    self.logger = logger
  }

  /// Logs a refused call or connection at info, unless this connection has logged too much;
  /// the line names the caller's source location, as a direct log call would.
  func refusal(
    _ message: Logger.Message, _ metadata: @autoclosure () -> Logger.Metadata,
    file: String = #fileID, function: String = #function, line: UInt = #line
  ) {
    self.refusal(message, file: file, function: function, line: line, metadata)
  }

  func refusal(
    _ message: Logger.Message, file: String = #fileID, function: String = #function, line: UInt = #line,
    _ metadata: () -> Logger.Metadata
  ) {
    guard let suppressed = self.limiter.withLock({ $0.admit(at: .now) }) else { return }
    var metadata = metadata()
    if suppressed > 0 { metadata["suppressed"] = "\(suppressed)" }
    self.logger.info(message, metadata: metadata, file: file, function: function, line: line)
  }

  /// Says how many lines were left out since the last one, if any.
  func ended() {
    let suppressed = self.limiter.withLock { $0.suppressed }
    if suppressed > 0 {
      self.logger.info("connection ended; lines about it left out", metadata: ["suppressed": "\(suppressed)"])
    }
  }
}
