import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization
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
  let service: StoreService<State, Action>
  let configuration: DaemonConfiguration
  let logger: Logger
  private let channels = ServerChannels()

  init(service: StoreService<State, Action>, configuration: DaemonConfiguration, logger: Logger) {
    self.service = service
    self.configuration = configuration
    self.logger = logger
  }

  /// Stops accepting connections; each connection finishes the call it is answering, then
  /// closes, and ``run(onListening:)`` returns once all have.
  func drain() {
    self.channels.drain()
  }

  /// Binds the socket and serves until the task is cancelled.
  ///
  /// - Parameter onListening: Called once the socket accepts connections.
  func run(onListening: @Sendable () -> Void) async throws {
    let path = self.configuration.socketPath
    try FileManager.default.createDirectory(
      atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true
    )
    let maximumMessageBytes = self.configuration.maximumMessageBytes
    let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 256)
      .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(
            ByteToMessageHandler(VarlinkFrameDecoder(maximumLength: maximumMessageBytes))
          )
          return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
      }
    if chmod(path, self.configuration.socketMode) != 0 {
      self.logger.warning("could not set the socket's mode", metadata: ["path": "\(path)", "errno": "\(errno)"])
    }
    self.logger.info("listening", metadata: ["socket": "\(path)"])
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
      server.channel.close(promise: nil)
    }
  }

  private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
    let count = self.service.connectionCount.add(1, ordering: .relaxed).newValue
    defer { self.service.connectionCount.subtract(1, ordering: .relaxed) }
    let channel = connection.channel
    let logger = self.logger
    if count > self.configuration.maximumConnections || !self.channels.opened(channel) {
      logger.warning("refusing a connection over the limit or while draining", metadata: ["limit": "\(self.configuration.maximumConnections)"])
      try? await connection.channel.close()
      return
    }
    defer { self.channels.closed(channel) }
    do {
      try await connection.executeThenClose { inbound, outbound in
        for try await frame in inbound {
          try await self.answer(frame, on: channel, outbound: outbound)
        }
      }
    } catch let error as VarlinkFrameTooLarge {
      logger.warning("closing a connection: \(error)")
    } catch {
      logger.debug("connection ended", metadata: ["error": "\(error)"])
    }
  }

  private func answer(
    _ frame: ByteBuffer,
    on channel: any Channel,
    outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
  ) async throws {
    let allocator = channel.allocator
    func write(_ message: JSONValue) async throws {
      var bytes = message.serializedBytes()
      bytes.append(0)
      try await outbound.write(allocator.buffer(bytes: bytes))
    }
    guard self.channels.startAnswering(on: channel) else {
      try? await channel.close()
      return
    }
    defer { self.channels.finishedAnswering(on: channel) }
    let call: VarlinkCall
    do {
      let message = try frame.withUnsafeReadableBytes { try JSONValue(parsing: $0) }
      call = try VarlinkCall(parsing: message)
    } catch let error as VarlinkError {
      self.logger.info("invalid call", metadata: ["error": "\(error)"])
      try await write(error.message)
      return
    } catch {
      self.logger.info("malformed message", metadata: ["error": "\(error)"])
      try await write(VarlinkError.invalidRequest("malformed JSON: \(error)").message)
      return
    }
    do {
      try await self.service.handle(
        call,
        whenClosed: { action in channel.closeFuture.whenComplete { _ in action() } },
        reply: { reply in
          if !call.oneway { try await write(reply.message) }
        }
      )
    } catch let error as VarlinkError {
      self.logger.info("error reply", metadata: ["method": "\(call.method)", "error": "\(error)"])
      if !call.oneway { try await write(error.message) }
    }
  }
}

/// The listening channel and the open connections, so a drain can stop them all.
private final class ServerChannels: Sendable {
  private struct Connection {
    let channel: any Channel
    var isAnswering = false
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

  /// Marks a connection as answering a call; `false` when the server is draining, and the call
  /// must not start.
  func startAnswering(on channel: any Channel) -> Bool {
    self.contents.withLock { contents in
      if contents.isDraining { return false }
      contents.connections[ObjectIdentifier(channel)]?.isAnswering = true
      return true
    }
  }

  /// Marks a call as answered; when the server is draining, the connection closes now.
  func finishedAnswering(on channel: any Channel) {
    let close = self.contents.withLock { contents in
      contents.connections[ObjectIdentifier(channel)]?.isAnswering = false
      return contents.isDraining
    }
    if close { channel.close(promise: nil) }
  }

  /// Stops accepting, closes idle connections, and lets busy ones close once their call is
  /// answered.
  func drain() {
    let (listener, idle) = self.contents.withLock { contents in
      contents.isDraining = true
      return (contents.listener, contents.connections.values.filter { !$0.isAnswering }.map(\.channel))
    }
    listener?.close(promise: nil)
    for channel in idle { channel.close(promise: nil) }
  }
}
