import Foundation
import Logging
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import SwitchyardRuntime
import SwitchyardVarlink

/// Serves a ``StoreService`` over Varlink on a Unix stream socket.
///
/// Each connection reads NUL-ended calls and answers them one after another, so replies come in
/// call order and clients may pipeline. A `more` call occupies its connection until its last
/// reply; a `oneway` call gets none. A call that cannot be parsed gets an error reply and the
/// connection goes on; a message over the size limit closes the connection, since the stream
/// cannot be resynchronised.
struct VarlinkServer<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  /// Where connections come from.
  enum Listener: Sendable {
    /// Bind a socket at the configured path.
    case path(String, mode: mode_t)
    /// Serve on a listening socket systemd passed (socket activation).
    case inherited(CInt)
  }

  let service: StoreService<State, Action>
  let listener: Listener
  let configuration: LiveConfiguration
  let logger: Logger
  private let channels = ServerChannels()

  init(service: StoreService<State, Action>, listener: Listener, configuration: LiveConfiguration, logger: Logger) {
    self.service = service
    self.listener = listener
    self.configuration = configuration
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
    let configuration = self.configuration
    let server: NIOAsyncChannel<Connection, Never>
    // A connection reads nothing until `serve` wraps it in an NIOAsyncChannel (see `Connection`).
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .childChannelOption(.autoRead, value: false)
    switch self.listener {
    case let .path(path, mode):
      try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true
      )
      server = try await bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
        Self.initialize(channel, maximumMessageBytes: configuration.value.maximumMessageBytes)
      }
      if chmod(path, mode) != 0 {
        self.logger.warning("could not set the socket's mode", metadata: ["path": "\(path)", "errno": "\(errno)"])
      }
      self.logger.info("listening", metadata: ["socket": "\(path)"])
    case let .inherited(fd):
      server = try await bootstrap.bind(fd) { channel in
        Self.initialize(channel, maximumMessageBytes: configuration.value.maximumMessageBytes)
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

  /// Sets up a new connection's pipeline and reads who is on the other end.
  private static func initialize(_ channel: any Channel, maximumMessageBytes: Int) -> EventLoopFuture<Connection> {
    channel.eventLoop.makeCompletedFuture {
      try channel.pipeline.syncOperations.addHandler(
        ByteToMessageHandler(VarlinkFrameDecoder(maximumLength: maximumMessageBytes))
      )
      let peer = try channel.pipeline.syncOperations.withUnsafeTransportIfAvailable(of: NIOBSDSocket.Handle.self) {
        Caller(socket: $0)
      }
      return Connection(channel: channel, peer: peer ?? nil)
    }
  }

  private func serve(_ accepted: Connection) async {
    let channel = accepted.channel
    let count = self.service.connectionCount.add(1, ordering: .relaxed).newValue
    defer { self.service.connectionCount.subtract(1, ordering: .relaxed) }
    let logger = {
      var logger = self.logger
      if let peer = accepted.peer {
        logger[metadataKey: "peer.uid"] = "\(peer.uid)"
        logger[metadataKey: "peer.pid"] = "\(peer.pid)"
      }
      return logger
    }()
    let limit = self.configuration.value.maximumConnections
    if count > limit || !self.channels.opened(channel) {
      logger.warning("refusing a connection over the limit or while draining", metadata: ["limit": "\(limit)"])
      try? await channel.close()
      return
    }
    defer { self.channels.closed(channel) }
    do {
      let connection = try await channel.eventLoop.submit {
        let connection = try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        try channel.syncOptions?.setOption(.autoRead, value: true)
        return connection
      }.get()
      try await connection.executeThenClose { inbound, outbound in
        // The reader starts each call as it arrives (sends are routed right away, in order); the
        // writer answers them one after another, in call order.
        let (calls, queue) = AsyncStream.makeStream(of: QueuedCall.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask {
            for await queued in calls {
              await self.answer(queued, on: channel, outbound: outbound, logger: logger)
              queued.answered?.resume()
            }
          }
          do {
            for try await frame in inbound {
              guard self.channels.startAnswering(on: channel) else { break }
              var queued = self.prepare(frame, on: channel, caller: accepted.peer, logger: logger)
              if queued.prepared.isBarrier {
                // Nothing after this call is read, let alone routed, until it is answered.
                await withCheckedContinuation { continuation in
                  queued.answered = continuation
                  queue.yield(queued)
                }
              } else {
                queue.yield(queued)
              }
            }
          } catch {
            queue.finish()
            throw error
          }
          queue.finish()
          try await group.waitForAll()
        }
      }
    } catch let error as VarlinkFrameTooLarge {
      logger.warning("closing a connection: \(error)")
    } catch {
      logger.debug("connection ended", metadata: ["error": "\(error)"])
    }
  }

  /// Parses a message into a call and starts it.
  private func prepare(_ frame: ByteBuffer, on channel: any Channel, caller: Caller?, logger: Logger) -> QueuedCall {
    do {
      let message = try frame.withUnsafeReadableBytes { try JSONValue(parsing: $0) }
      let call = try VarlinkCall(parsing: message)
      let prepared = self.service.prepare(
        call,
        caller: caller,
        whenClosed: { action in channel.closeFuture.whenComplete { _ in action() } }
      )
      return QueuedCall(
        method: loggable(call.method),
        oneway: call.oneway,
        prepared: prepared,
        action: call.parameters["action"].map { String($0.serialized().prefix(512)) }
      )
    } catch let error as VarlinkError {
      logger.info("invalid call", metadata: ["error": "\(loggable("\(error)"))"])
      return QueuedCall(method: "", oneway: false, prepared: PreparedCall { _ in throw error })
    } catch {
      logger.info("malformed message", metadata: ["error": "\(loggable("\(error)"))"])
      let reply = VarlinkError.invalidRequest("malformed JSON: \(error)")
      return QueuedCall(method: "", oneway: false, prepared: PreparedCall { _ in throw reply })
    }
  }

  /// Runs a call and writes its replies (none for a oneway call).
  private func answer(
    _ queued: QueuedCall,
    on channel: any Channel,
    outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>,
    logger: Logger
  ) async {
    defer { self.channels.finishedAnswering(on: channel) }
    let allocator = channel.allocator
    @Sendable func write(_ message: JSONValue) async throws {
      var bytes = message.serializedBytes()
      bytes.append(0)
      try await outbound.write(allocator.buffer(bytes: bytes))
    }
    do {
      try await queued.prepared.run { reply in
        if !queued.oneway { try await write(reply.message) }
      }
    } catch let error as VarlinkError {
      var metadata: Logger.Metadata = ["method": "\(queued.method)", "error": "\(loggable("\(error)"))"]
      if let action = queued.action { metadata["action"] = "\(action)" }
      logger.info("error reply", metadata: metadata)
      if !queued.oneway { try? await write(error.message) }
    } catch {
      logger.debug("a reply could not be written", metadata: ["error": "\(error)"])
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
private struct Connection: Sendable {
  let channel: any Channel
  let peer: Caller?
}

/// A call read from a connection, waiting for its turn to be answered.
private struct QueuedCall: Sendable {
  let method: String
  let oneway: Bool
  let prepared: PreparedCall
  /// A `Send`'s action, for the log line when it fails.
  var action: String? = nil
  var answered: CheckedContinuation<Void, Never>?
}

/// The listening channel and the open connections, so a drain can stop them all.
private final class ServerChannels: Sendable {
  private struct Connection {
    let channel: any Channel
    var callsInFlight = 0
  }

  private struct Contents: ~Copyable {
    var listener: (any Channel)?
    var connections: [ObjectIdentifier: Connection] = [:]
    var isDraining = false
  }

  private let contents = Mutex(Contents())

  func listening(_ channel: any Channel) {
    self.contents.withLock { $0.listener = channel }
  }

  /// Registers a connection; `false` when the server is draining and it must be closed.
  func opened(_ channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.connections[ObjectIdentifier(channel)] = Connection(channel: channel)
      return true
    }
  }

  func closed(_ channel: any Channel) {
    _ = self.contents.withLock { $0.connections.removeValue(forKey: ObjectIdentifier(channel)) }
  }

  /// Counts a call read from a connection; `false` when the server is draining, and the call
  /// must not start.
  func startAnswering(on channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.connections[ObjectIdentifier(channel)]?.callsInFlight += 1
      return true
    }
  }

  /// Counts a call as answered; when the server is draining and it was the last, the connection
  /// closes now.
  func finishedAnswering(on channel: any Channel) {
    let close = self.contents.withLock { contents in
      contents.connections[ObjectIdentifier(channel)]?.callsInFlight -= 1
      return contents.isDraining && contents.connections[ObjectIdentifier(channel)]?.callsInFlight == 0
    }
    if close { channel.close(promise: nil) }
  }

  /// Stops accepting, closes idle connections, and lets busy ones close once their call is
  /// answered.
  func drain() {
    let (listener, idle) = self.contents.withLock { contents in
      contents.isDraining = true
      return (contents.listener, contents.connections.values.filter { $0.callsInFlight == 0 }.map(\.channel))
    }
    listener?.close(promise: nil)
    for channel in idle { channel.close(promise: nil) }
  }
}
