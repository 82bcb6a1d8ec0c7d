import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import SwitchyardJSON
import SwitchyardVarlink

/// Where a server's connections come from.
enum VarlinkListener: Sendable {
  /// Bind a socket at the configured path.
  case path(String, mode: mode_t)
  /// Serve on a listening socket systemd passed (socket activation).
  case inherited(CInt)
}

/// Serves a ``VarlinkResponder`` over Varlink on a Unix stream socket. It knows the protocol —
/// framing, call order, limits, timeouts — and nothing of what the calls mean.
///
/// Each connection reads NUL-ended calls and answers them one after another, so replies come in
/// call order and clients may pipeline. A `more` call occupies its connection until its last
/// reply; a `oneway` call gets none. A call that cannot be parsed gets an error reply and the
/// connection goes on; a message over the size limit closes the connection, since the stream
/// cannot be resynchronised.
struct VarlinkServer<Responder: VarlinkResponder>: Sendable {
  let responder: Responder
  let counters: ServerCounters
  let listener: VarlinkListener
  let configuration: LiveConfiguration
  let logger: Logger
  let channels = ServerChannels()
  /// The most connections the file descriptor limit leaves room for; the configured limit
  /// applies below it.
  let connectionCeiling: Int
  /// Refused connections, rate-limited across all of them: a flood of connections is a few lines.
  let refusedConnections: ConnectionLog

  init(
    responder: Responder,
    counters: ServerCounters,
    listener: VarlinkListener,
    configuration: LiveConfiguration,
    connectionCeiling: Int = .max,
    logger: Logger
  ) {
    self.responder = responder
    self.counters = counters
    self.listener = listener
    self.configuration = configuration
    self.connectionCeiling = connectionCeiling
    self.refusedConnections = ConnectionLog(logger: logger, peer: nil)
    self.logger = logger
  }

  /// Stops accepting connections; each connection finishes the call it is answering, then
  /// closes, and ``run(onListening:)`` returns once all have.
  func drain() {
    self.channels.drain()
  }

  /// Listens and serves until the task is cancelled.
  ///
  /// - Parameter onListening: Called once the socket accepts connections.
  func run(onListening: @Sendable () -> Void) async throws {
    let server: NIOAsyncChannel<Connection, Never>
    let logger = self.logger
    // A connection reads nothing until `serve` wraps it in an NIOAsyncChannel (see `Connection`).
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .serverChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(OutOfDescriptorsBackoffHandler(logger: logger))
        }
      }
      .childChannelOption(.autoRead, value: false)
      // A read's bytes are all split into calls at once, and the calls wait for their turn in
      // the connection's buffer, past any back-pressure: small reads keep what a client that
      // pipelines and never reads can make the daemon hold small (about 16 KiB, not 256 KiB).
      .childChannelOption(.maxMessagesPerRead, value: 1)
      .childChannelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 16 << 10))
    switch self.listener {
    case let .path(path, mode):
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true
      )
      server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
        self.initialize(channel)
      }
      if chmod(path, mode) != 0 {
        self.logger.warning("could not set the socket's mode", metadata: ["path": "\(path)", "errno": "\(errno)"])
      }
      self.logger.info("listening", metadata: ["socket": "\(path)"])
    case let .inherited(fd):
      server = try await bootstrap.bind(fd) { channel in
        self.initialize(channel)
      }
      self.logger.info("listening on the socket systemd passed", metadata: ["socket": "\(boundPath(ofSocket: fd) ?? "fd \(fd)")"])
    }
    self.channels.listening(server.channel)
    onListening()
    try await withTaskCancellationHandler {
      try await withThrowingDiscardingTaskGroup { group in
        try await server.executeThenClose { connections in
          for try await connection in connections {
            group.addTask { await self.serve(connection) }
          }
        }
      }
    } onCancel: {
      // Cancelled (the daemon is failing, not shutting down gracefully): stop accepting, and
      // close every connection once its call in flight is answered, so that this returns.
      server.channel.close(promise: nil)
      self.channels.drain()
    }
  }

  /// Sets up a new connection's pipeline — timeouts, then framing — and reads who is on the
  /// other end.
  private func initialize(_ channel: any Channel) -> EventLoopFuture<Connection> {
    let configuration = self.configuration
    let channels = self.channels
    let limits = configuration.value
    return channel.eventLoop.makeCompletedFuture {
      try channel.syncOptions?.setOption(
        .writeBufferWaterMark,
        value: .init(low: limits.maximumUnwrittenBytes / 2, high: limits.maximumUnwrittenBytes)
      )
      try channel.pipeline.syncOperations.addHandler(
        ConnectionTimeoutHandler(
          timeouts: {
            let value = configuration.value
            return .init(frame: TimeAmount(value.frameTimeout), idle: TimeAmount(value.idleTimeout))
          },
          isBusy: { channels.isBusy(channel) },
          logger: self.logger
        )
      )
      try channel.pipeline.syncOperations.addHandler(
        ByteToMessageHandler(VarlinkFrameDecoder(maximumLength: limits.maximumMessageBytes))
      )
      let peer = try channel.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) {
        Caller(socket: $0)
      }
      return Connection(channel: channel, peer: peer ?? nil)
    }
  }
}

/// A client-chosen string as it goes into a log line: at most 256 characters, control
/// characters escaped, so that it cannot forge lines of a text log or bloat the journal.
func loggable(_ text: String) -> String {
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

/// An accepted connection and the credentials of the process on the other end.
///
/// The channel is wrapped in an `NIOAsyncChannel` only when it is served, not when it is
/// accepted: a connection accepted while the listener closes may never reach the accept loop,
/// and an `NIOAsyncChannel` dropped without `executeThenClose` traps (swift-nio#2637). Until it
/// is wrapped, the channel does not read (`autoRead` off), so nothing is lost.
struct Connection: Sendable {
  let channel: any Channel
  let peer: Caller?
}
