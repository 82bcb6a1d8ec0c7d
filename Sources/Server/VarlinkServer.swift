import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import SwitchyardJSON
import SwitchyardVarlink

/// What a server lets a client make it hold, and how long it waits: read for each new
/// connection, and by its timeouts at each check, so that a reload applies to open connections.
package struct ServerLimits: Sendable, Equatable {
  /// The longest message, in bytes: a longer one closes its connection.
  package var maximumMessageBytes: Int
  package var maximumConnections: Int
  /// Calls read and not yet answered on one connection, past which its socket is not read.
  package var maximumQueuedCalls: Int
  /// What a client may leave unread before no call of its starts.
  package var maximumUnwrittenBytes: Int
  /// How long the rest of a call may take to come, once part of it has.
  package var frameTimeout: Duration
  /// How long a connection with no call in flight may send nothing.
  package var idleTimeout: Duration

  package init(
    maximumMessageBytes: Int = 1 << 20, maximumConnections: Int = 1024, maximumQueuedCalls: Int = 128,
    maximumUnwrittenBytes: Int = 64 << 10, frameTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(300)
  ) {
    self.maximumMessageBytes = maximumMessageBytes
    self.maximumConnections = maximumConnections
    self.maximumQueuedCalls = maximumQueuedCalls
    self.maximumUnwrittenBytes = maximumUnwrittenBytes
    self.frameTimeout = frameTimeout
    self.idleTimeout = idleTimeout
  }
}

/// Serves a ``VarlinkResponder`` over Varlink on a stream socket (``VarlinkListener``). It knows the protocol —
/// framing, call order, limits, timeouts — and nothing of what the calls mean.
///
/// Each connection (``VarlinkConnectionHandler``) reads NUL-ended calls and answers them one
/// after another on its event loop, so replies come in call order and clients may pipeline. A
/// `more` call occupies its connection until its last reply; a `oneway` call gets none. A call that cannot be parsed gets an error reply and the
/// connection goes on; a message over the size limit closes the connection, since the stream
/// cannot be resynchronised.
package struct VarlinkServer<Responder: VarlinkResponder>: Sendable {
  package let responder: Responder
  package let counters: ServerCounters
  package let listener: VarlinkListener
  /// The limits in force, read again for each connection.
  let limits: @Sendable () -> ServerLimits
  package let logger: Logger
  let channels: ServerChannels
  /// The event loop connections are served on.
  let loop: any EventLoop
  /// The most connections the file descriptor limit leaves room for; the configured limit
  /// applies below it.
  let connectionCeiling: Int
  /// Refused connections, rate-limited across all of them: a flood of connections is a few lines.
  let refusedConnections: ConnectionLog
  /// The connections the previous process handed over, adopted before the server says it listens.
  let adopting: [AdoptedConnection]

  package init(
    responder: Responder,
    counters: ServerCounters,
    listener: VarlinkListener,
    limits: @escaping @Sendable () -> ServerLimits,
    connectionCeiling: Int = .max,
    loop: any EventLoop,
    store: (any ConnectionStore)? = nil,
    adopting: [AdoptedConnection] = [],
    logger: Logger
  ) {
    self.adopting = adopting
    self.responder = responder
    self.channels = ServerChannels(counters: counters, loop: loop, store: store)
    self.loop = loop
    self.counters = counters
    self.listener = listener
    self.limits = limits
    self.connectionCeiling = connectionCeiling
    self.refusedConnections = ConnectionLog(logger: logger, peer: nil)
    self.logger = logger
  }

  /// Stops accepting connections; each connection finishes the call it is answering, then
  /// closes, and ``run(onListening:)`` returns once all have.
  package func drain() {
    self.channels.drain()
  }

  /// Listens and serves until the task is cancelled, or until a drain closed the last
  /// connection.
  ///
  /// - Parameters:
  ///   - onBound: Called once the socket is bound, before the connections handed over by the
  ///     previous process are adopted.
  ///   - onListening: Called once the socket accepts connections.
  package func run(onBound: @Sendable () -> Void = {}, onListening: @Sendable () -> Void) async throws {
    let logger = self.logger
    let bootstrap = ServerBootstrap(group: self.loop)
      .serverChannelOption(.backlog, value: 256)
      // Nothing is accepted before `onListening` has run: a connection systemd queued before the
      // daemon started would otherwise be served before the daemon knows the socket's group,
      // and a member of that group refused.
      .serverChannelOption(.autoRead, value: false)
      .serverChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(OutOfDescriptorsBackoffHandler(logger: logger))
        }
      }
      // A read's bytes are all split into calls at once, and the calls wait for their turn in
      // the connection's handler, past any back-pressure: small reads keep what a client that
      // pipelines and never reads can make the daemon hold small (about 16 KiB, not 256 KiB).
      .childChannelOption(.maxMessagesPerRead, value: 1)
      .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16 << 10))
      .childChannelInitializer { channel in self.initialize(channel) }
    let server = try await self.listener.bind(bootstrap, logger: self.logger)
    // Shut down before it listened: the socket is closed, and there is nothing to serve.
    if await self.channels.listening(server) {
      onBound()
      await self.adopt(self.adopting)
      onListening()
      do {
        try await server.setOption(.autoRead, value: true).get()
      } catch ChannelError.ioOnClosedChannel {
        // A drain closed it right after it listened (a SIGTERM as systemd got READY=1): what
        // follows returns as for any drain.
      }
    }
    await withTaskCancellationHandler {
      try? await server.closeFuture.get()
      await self.channels.allClosed()
    } onCancel: {
      // Cancelled (the daemon is failing, not shutting down gracefully): stop accepting, and
      // close every connection once its call in flight is answered, so that this returns.
      server.close(promise: nil)
      self.channels.drain()
    }
  }

  /// Sets up a new connection's pipeline — timeouts, framing, then the calls — for whoever is
  /// on the other end.
  func initialize(_ channel: any Channel, storedAs: String? = nil) -> EventLoopFuture<Void> {
    let limitsInForce = self.limits
    let channels = self.channels
    let limits = limitsInForce()
    return channel.eventLoop.makeCompletedFuture {
      try channel.syncOptions?.setOption(
        .writeBufferWaterMark,
        value: .init(low: limits.maximumUnwrittenBytes / 2, high: limits.maximumUnwrittenBytes)
      )
      let socket = try channel.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { $0 }
      let peer = socket.flatMap { Caller(socket: $0) }
      let lastRead = LastRead()
      try channel.pipeline.syncOperations.addHandlers(
        ConnectionTimeoutHandler(
          timeouts: {
            let value = limitsInForce()
            return .init(frame: TimeAmount(value.frameTimeout), idle: TimeAmount(value.idleTimeout))
          },
          responder: self.responder,
          isBusy: { channels.isBusy(channel) },
          lastRead: lastRead,
          logger: self.logger
        ),
        FrameReader(VarlinkFrameDecoder(maximumLength: limits.maximumMessageBytes)),
        VarlinkConnectionHandler(
          responder: self.responder,
          server: channels,
          caller: peer,
          descriptor: self.channels.store == nil ? nil : socket,
          storedAs: storedAs,
          log: ConnectionLog(logger: self.logger, peer: peer),
          capacity: limits.maximumQueuedCalls,
          connectionLimit: min(limits.maximumConnections, self.connectionCeiling),
          refusals: self.refusedConnections,
          calls: self.counters.calls,
          requests: self.counters.requests,
          lastRead: lastRead
        )
      )
    }
  }
}

/// A client-chosen string as it goes into a log line: at most 256 characters, control
/// characters escaped, so that it cannot forge lines of a text log or bloat the journal.
package func loggable(_ text: String) -> String {
  var result = ""
  for scalar in text.unicodeScalars.prefix(256) {
    if scalar.properties.generalCategory == .control {
      result += scalar.escaped(asASCII: true)
    } else {
      result.unicodeScalars.append(scalar)
    }
  }
  return text.unicodeScalars.count > 256 ? result + "…" : result
}
