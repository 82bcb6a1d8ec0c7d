import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
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

/// Serves a ``VarlinkResponder`` over Varlink on stream sockets (``VarlinkListener``s: the Unix
/// socket, and TCP with TLS). It knows the protocol — framing, call order, limits, timeouts — and
/// nothing of what the calls mean. Every listener's connections are served alike, under the same
/// limits, and counted together against `maximumConnections`.
///
/// Each connection (``VarlinkConnectionHandler``) reads NUL-ended calls and answers them one
/// after another on its event loop, so replies come in call order and clients may pipeline. A
/// `more` call occupies its connection until its last reply; a `oneway` call gets none. A call that cannot be parsed gets an error reply and the
/// connection goes on; a message over the size limit closes the connection, since the stream
/// cannot be resynchronised.
package struct VarlinkServer<Responder: VarlinkResponder>: Sendable {
  package let responder: Responder
  package let counters: ServerCounters
  package let listeners: [VarlinkListener]
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
  /// Refused TLS handshakes, once per peer.
  let refusedHandshakes: HandshakeRefusals
  /// TLS handshakes under way, at most `maximumConnections` (as configured at start).
  let handshakeSlots: HandshakeSlots
  /// The connections the previous process handed over, adopted before the server says it listens.
  let adopting: [AdoptedConnection]

  package init(
    responder: Responder,
    counters: ServerCounters,
    listeners: [VarlinkListener],
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
    self.listeners = listeners
    self.limits = limits
    self.connectionCeiling = connectionCeiling
    self.refusedConnections = ConnectionLog(logger: logger, peer: nil)
    self.refusedHandshakes = HandshakeRefusals(logger: logger)
    self.handshakeSlots = HandshakeSlots(limit: min(limits().maximumConnections, connectionCeiling))
    self.logger = logger
  }

  /// A server with one listener.
  package init(
    responder: Responder,
    counters: ServerCounters,
    listener: VarlinkListener,
    limits: @escaping @Sendable () -> ServerLimits,
    connectionCeiling: Int = .max,
    loop: any EventLoop,
    logger: Logger
  ) {
    self.init(
      responder: responder, counters: counters, listeners: [listener], limits: limits,
      connectionCeiling: connectionCeiling, loop: loop, logger: logger
    )
  }

  /// Stops accepting connections; each connection finishes the call it is answering, then
  /// closes, and ``run(onListening:)`` returns once all have.
  package func drain() {
    self.channels.drain()
  }

  /// Where the listeners listen, once they do: a TCP listener bound to port 0 says its port here.
  package func localAddresses() async -> [SocketAddress] {
    await self.channels.localAddresses()
  }

  /// Listens and serves until the task is cancelled, or until a drain closed the last
  /// connection.
  ///
  /// - Parameters:
  ///   - onBound: Called once the sockets are bound, before the connections handed over by the
  ///     previous process are adopted, with each listener's socket in the order of the listeners.
  ///   - onListening: Called once every listener accepts connections.
  package func run(onBound: @Sendable (_ sockets: [CInt?]) -> Void = { _ in }, onListening: @Sendable () -> Void) async throws {
    var bound: [any Channel] = []
    do {
      for listener in self.listeners {
        let index = self.counters.byListener.register(listener.name)
        bound.append(try await listener.bind(self.bootstrap(for: listener, counted: index), logger: self.logger))
      }
    } catch {
      for server in bound { try? await server.close() }
      throw error
    }
    let servers = bound
    var sockets: [CInt?] = []
    for server in servers {
      sockets.append(
        try? await server.eventLoop.submit {
          try server.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { $0 }
        }.get()
      )
    }
    // Told even when a shutdown came first: a handover's next process takes the sockets over.
    onBound(sockets)
    // Shut down before it listened: the sockets are closed, and there is nothing to serve.
    let listening = await self.channels.listening(servers)
    // The Unix socket's connections (a TLS session cannot outlive its process); taken on by a
    // handover that began first too, which passes each on as it registers.
    let handingOver = await self.channels.handingOverNow()
    if listening || handingOver {
      await self.adopt(self.adopting, listener: 0)
    }
    if listening {
      onListening()
      for server in servers {
        do {
          try await server.setOption(.autoRead, value: true).get()
        } catch ChannelError.ioOnClosedChannel {
          // A drain closed it right after it listened (a SIGTERM as systemd got READY=1): what
          // follows returns as for any drain.
        }
      }
    }
    await withTaskCancellationHandler {
      for server in servers { try? await server.closeFuture.get() }
      await self.channels.allClosed()
    } onCancel: {
      // Cancelled (the daemon is failing, not shutting down gracefully): stop accepting, and
      // close every connection once its call in flight is answered, so that this returns.
      for server in servers { server.close(promise: nil) }
      self.channels.drain()
    }
  }

  private func bootstrap(for listener: VarlinkListener, counted index: Int) -> ServerBootstrap {
    let logger = self.logger
    return ServerBootstrap(group: self.loop)
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
      .childChannelInitializer { channel in
        if let tls = listener.tls { return self.initialize(channel, tls: tls, listener: index) }
        return self.initialize(channel, listener: index)
      }
  }

  /// Sets up a new Unix connection's pipeline for the process on the other end; one the
  /// previous process handed over keeps the name it has in the store.
  func initialize(_ channel: any Channel, listener: Int, storedAs: String? = nil) -> EventLoopFuture<Void> {
    channel.eventLoop.makeCompletedFuture {
      let socket = try channel.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) { $0 }
      try self.addConnectionHandlers(
        to: channel, caller: socket.flatMap { Caller(socket: $0) }, listener: listener, writesToSocket: true,
        descriptor: socket, storedAs: storedAs
      )
    }
  }

  /// Sets up a TLS connection's pipeline: the handshake first, within the frame timeout, then —
  /// for the identity its certificate gives — what every connection has.
  private func initialize(_ channel: any Channel, tls: TLSServerContext, listener: Int) -> EventLoopFuture<Void> {
    channel.eventLoop.makeCompletedFuture {
      let handshake = TLSHandshakeHandler(
        timeout: TimeAmount(self.limits().frameTimeout), refusals: self.refusedHandshakes, slots: self.handshakeSlots,
        counted: (self.counters.byListener, listener)
      ) { caller, context in
        try self.addConnectionHandlers(
          to: context.channel, caller: caller, listener: listener, writesToSocket: false, after: context.handler
        )
      }
      try channel.pipeline.syncOperations.addHandlers(NIOSSLServerHandler(context: tls.context), handshake)
    }
  }

  /// Adds timeouts, framing and the calls, for `caller`; behind `handler` when given. Replies
  /// go straight to the socket unless bytes must pass through the pipeline first (TLS). The
  /// connection counts under its listener until it closes; its socket (`descriptor`, a Unix
  /// connection's) goes to the connection store, when there is one, and to the next process at a
  /// handover.
  private func addConnectionHandlers(
    to channel: any Channel, caller: Caller?, listener: Int, writesToSocket: Bool, descriptor: CInt? = nil,
    storedAs: String? = nil, after handler: (any ChannelHandler)? = nil
  ) throws {
    let limitsInForce = self.limits
    let channels = self.channels
    let limits = limitsInForce()
    let byListener = self.counters.byListener
    let identity = caller?.identity ?? "unknown"
    byListener.opened(listener, by: identity)
    channel.closeFuture.whenComplete { _ in byListener.closed(listener, by: identity) }
    try channel.syncOptions?.setOption(
      .writeBufferWaterMark,
      value: .init(low: limits.maximumUnwrittenBytes / 2, high: limits.maximumUnwrittenBytes)
    )
    let lastRead = LastRead()
    let handlers: [any ChannelHandler] = [
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
        caller: caller,
        descriptor: descriptor,
        storedAs: storedAs,
        log: ConnectionLog(logger: self.logger, peer: caller),
        capacity: limits.maximumQueuedCalls,
        connectionLimit: min(limits.maximumConnections, self.connectionCeiling),
        refusals: ConnectionRefusals(log: self.refusedConnections, counts: byListener, listener: listener, identity: identity),
        calls: self.counters.calls,
        requests: self.counters.requests,
        lastRead: lastRead,
        writesToSocket: writesToSocket
      ),
    ]
    if let handler {
      try channel.pipeline.syncOperations.addHandlers(handlers, position: .after(handler))
    } else {
      try channel.pipeline.syncOperations.addHandlers(handlers)
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
