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
        // The reader starts each call as it arrives (sends are routed right away, in order); the
        // writer answers them one after another, in call order.
        let (calls, queue) = AsyncStream.makeStream(of: QueuedCall.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
          group.addTask {
            for await queued in calls {
              await self.answer(queued, on: channel, outbound: outbound)
              queued.answered?.resume()
            }
          }
          do {
            for try await frame in inbound {
              guard self.channels.startAnswering(on: channel) else { break }
              var queued = self.prepare(frame, on: channel)
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
  private func prepare(_ frame: ByteBuffer, on channel: any Channel) -> QueuedCall {
    do {
      let message = try frame.withUnsafeReadableBytes { try JSONValue(parsing: $0) }
      let call = try VarlinkCall(parsing: message)
      let prepared = self.service.prepare(
        call,
        whenClosed: { action in channel.closeFuture.whenComplete { _ in action() } }
      )
      return QueuedCall(method: call.method, oneway: call.oneway, prepared: prepared)
    } catch let error as VarlinkError {
      self.logger.info("invalid call", metadata: ["error": "\(error)"])
      return QueuedCall(method: "", oneway: false, prepared: PreparedCall { _ in throw error })
    } catch {
      self.logger.info("malformed message", metadata: ["error": "\(error)"])
      let reply = VarlinkError.invalidRequest("malformed JSON: \(error)")
      return QueuedCall(method: "", oneway: false, prepared: PreparedCall { _ in throw reply })
    }
  }

  /// Runs a call and writes its replies (none for a oneway call).
  private func answer(
    _ queued: QueuedCall,
    on channel: any Channel,
    outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
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
      self.logger.info("error reply", metadata: ["method": "\(queued.method)", "error": "\(error)"])
      if !queued.oneway { try? await write(error.message) }
    } catch {
      self.logger.debug("a reply could not be written", metadata: ["error": "\(error)"])
    }
  }
}

/// A call read from a connection, waiting for its turn to be answered.
private struct QueuedCall: Sendable {
  let method: String
  let oneway: Bool
  let prepared: PreparedCall
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
