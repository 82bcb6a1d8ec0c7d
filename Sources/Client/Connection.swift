import NIOCore
import SwitchyardVarlink
import NIOPosix
import NIOSSL
import SwitchyardSynchronization
import SwitchyardJSON

/// One Varlink connection: calls are written in order, pipelined, and their replies matched to
/// them first in, first out — Varlink answers calls in the order they were made.
///
/// A `more` call occupies the connection until its last reply; the replies of calls made behind
/// it wait until then, so subscriptions get connections of their own.
final class VarlinkConnection: Sendable {
  private enum Pending {
    case single(CheckedContinuation<JSONValue, any Error>)
    case stream(AsyncThrowingStream<JSONValue, any Error>.Continuation)

    func fail(_ error: any Error) {
      switch self {
      case let .single(continuation): continuation.resume(throwing: error)
      case let .stream(continuation): continuation.finish(throwing: error)
      }
    }
  }

  private struct State {
    var pending: [Pending] = []
    var closed: (any Error)?
    var answeredAsStandby = false
  }

  let path: String
  private let channel: any Channel
  private let outgoing: AsyncStream<JSONValue>.Continuation
  private let state = Mutex(State())

  private init(path: String, channel: any Channel, outgoing: AsyncStream<JSONValue>.Continuation) {
    self.path = path
    self.channel = channel
    self.outgoing = outgoing
  }

  /// Connects to `address`: a Unix socket's path (or `unix:PATH`), or `tcp:HOST:PORT`, whose
  /// TLS handshake is done with `tls` before this returns.
  static func connect(path address: String, tls: SwitchyardTLS?, maximumMessageBytes: Int) async throws -> VarlinkConnection {
    let asyncChannel: NIOAsyncChannel<ByteBuffer, JSONValue>
    let endpoint = (try? VarlinkAddress(parsing: address)) ?? .unix(path: address)
    do {
      let bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      switch endpoint {
      case let .unix(path):
        asyncChannel = try await bootstrap.connect(unixDomainSocketPath: path) { channel in
          channel.eventLoop.makeCompletedFuture { try Self.framing(channel, maximumMessageBytes: maximumMessageBytes) }
        }
      case let .tcp(host, port):
        let context = try (tls ?? SwitchyardTLS()).context()
        // SNI takes a name, not an address: an IP address is verified against the certificate's
        // IP addresses instead.
        let serverName = (try? SocketAddress(ipAddress: host, port: port)) == nil ? host : nil
        let handshake = Mutex<EventLoopFuture<Void>?>(nil)
        asyncChannel = try await bootstrap.connectTimeout(.seconds(10)).connect(host: host, port: port) { channel in
          channel.eventLoop.makeCompletedFuture {
            let waiter = TLSHandshakeWaiter(done: channel.eventLoop.makePromise())
            handshake.withLock { $0 = waiter.done.futureResult }
            try channel.pipeline.syncOperations.addHandlers(NIOSSLClientHandler(context: context, serverHostname: serverName), waiter)
            return try Self.framing(channel, maximumMessageBytes: maximumMessageBytes)
          }
        }
        do {
          try await handshake.withLock { $0 }?.get()
        } catch {
          try? await asyncChannel.channel.close()
          throw SwitchyardConnectionError.cannotConnect(path: address, reason: "TLS handshake failed: \(error)")
        }
      }
    } catch let error as SwitchyardConnectionError {
      throw error
    } catch let error as IOError {
      throw SwitchyardConnectionError.cannotConnect(path: address, reason: describeErrno(error.errnoCode))
    } catch {
      throw SwitchyardConnectionError.cannotConnect(path: address, reason: "\(error)")
    }
    let path = address
    let (frames, outgoing) = AsyncStream<JSONValue>.makeStream()
    let connection = VarlinkConnection(path: path, channel: asyncChannel.channel, outgoing: outgoing)
    Task {
      do {
        try await asyncChannel.executeThenClose { inbound, outbound in
          try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
              for await frame in frames { try await outbound.write(frame) }
            }
            for try await frame in inbound {
              connection.receive(frame)
            }
            group.cancelAll()
          }
        }
        connection.terminate(SwitchyardConnectionError.connectionClosed)
      } catch let error as SwitchyardConnectionError {
        connection.terminate(error)
      } catch let error as VarlinkFrameTooLarge {
        connection.terminate(SwitchyardConnectionError.messageTooLarge(limit: error.limit))
      } catch let error as BoringSSLError {
        // In TLS 1.3 the daemon refuses a client's certificate after the client's side of the
        // handshake is done: its alert comes with the first read.
        connection.terminate(SwitchyardConnectionError.cannotConnect(path: path, reason: "the TLS session failed: \(error)"))
      } catch {
        connection.terminate(SwitchyardConnectionError.connectionClosed)
      }
    }
    return connection
  }

  /// Adds Varlink's framing (behind TLS, when there is) and wraps the channel for async use.
  private static func framing(_ channel: any Channel, maximumMessageBytes: Int) throws -> NIOAsyncChannel<ByteBuffer, JSONValue> {
    try channel.pipeline.syncOperations.addHandlers(
      FrameReader(VarlinkFrameDecoder(maximumLength: maximumMessageBytes)),
      MessageToByteHandler(VarlinkMessageEncoder())
    )
    return try NIOAsyncChannel<ByteBuffer, JSONValue>(wrappingChannelSynchronously: channel)
  }

  /// Whether the connection has closed; calls on it fail. Its channel closing counts at once,
  /// before the task that reads it has seen the end: after the daemon restarted, a call then
  /// goes out on a new connection rather than failing on the old one.
  var isClosed: Bool {
    self.state.withLock { $0.closed != nil } || !self.channel.isActive
  }

  /// Whether the daemon refused a call on this connection as a standby
  /// (``SwitchyardError/notLeader(leader:address:)``). A standby applies no `Send`, and one that
  /// comes to lead closes its connections and serves on new ones: a `Send` still unanswered on
  /// this connection when it closed was applied nowhere. Set before the refusal is delivered, so
  /// that a call that failed on the close later sees it.
  var answeredAsStandby: Bool {
    self.state.withLock { $0.answeredAsStandby }
  }

  /// Calls `method` and returns the parameters of its reply, or throws its error as a
  /// ``SwitchyardError``.
  func call(_ method: String, parameters: JSONObject) async throws -> JSONValue {
    let buffer = self.frame(method, parameters, more: false)
    return try await withCheckedThrowingContinuation { continuation in
      let closed: (any Error)? = self.state.withLock { state in
        if let closed = state.closed { return closed }
        state.pending.append(.single(continuation))
        self.outgoing.yield(buffer)
        return nil
      }
      if let closed { continuation.resume(throwing: closed) }
    }
  }

  /// Calls `method` with `more` and returns the parameters of every reply until the last one.
  ///
  /// Ending the iteration early closes the connection: that is the only way Varlink has to end a
  /// `more` call.
  func callMore(_ method: String, parameters: JSONObject) -> AsyncThrowingStream<JSONValue, any Error> {
    let (stream, continuation) = AsyncThrowingStream<JSONValue, any Error>.makeStream()
    let buffer = self.frame(method, parameters, more: true)
    let closed: (any Error)? = self.state.withLock { state in
      if let closed = state.closed { return closed }
      state.pending.append(.stream(continuation))
      self.outgoing.yield(buffer)
      return nil
    }
    if let closed {
      continuation.finish(throwing: closed)
    } else {
      continuation.onTermination = { [weak self] termination in
        if case .cancelled = termination { self?.close() }
      }
    }
    return stream
  }

  /// Closes the connection; calls still waiting fail with ``SwitchyardConnectionError/connectionClosed``.
  func close() {
    self.channel.close(promise: nil)
  }

  private func frame(_ method: String, _ parameters: JSONObject, more: Bool) -> JSONValue {
    VarlinkCall(method: method, parameters: parameters, more: more).message
  }

  private func receive(_ frame: ByteBuffer) {
    let answer: VarlinkAnswer
    do {
      answer = try VarlinkAnswer(parsing: try frame.withUnsafeReadableBytes { try JSONValue(parsing: $0) })
    } catch {
      self.terminate(SwitchyardConnectionError.malformedReply("\(error)"))
      return
    }
    var failure: SwitchyardError?
    var parameters = JSONValue.object([:])
    var continues = false
    switch answer {
    case let .error(error): failure = SwitchyardError(error)
    case let .reply(reply): (parameters, continues) = (.object(reply.parameters), reply.continues)
    }
    let head: Pending? = self.state.withLock { state in
      if case .notLeader = failure { state.answeredAsStandby = true }
      guard let head = state.pending.first else { return nil }
      if failure != nil || !continues { state.pending.removeFirst() }
      return head
    }
    guard let head else {
      self.terminate(SwitchyardConnectionError.malformedReply("a reply to no call"))
      return
    }
    switch head {
    case let .single(continuation):
      if let failure { continuation.resume(throwing: failure) } else { continuation.resume(returning: parameters) }
    case let .stream(continuation):
      if let failure {
        continuation.finish(throwing: failure)
      } else {
        continuation.yield(parameters)
        if !continues { continuation.finish() }
      }
    }
  }

  /// Fails every call still waiting and every later one with `error`, and closes the channel.
  private func terminate(_ error: any Error) {
    let pending = self.state.withLock { state in
      if state.closed == nil { state.closed = error }
      defer { state.pending.removeAll() }
      return state.pending
    }
    self.outgoing.finish()
    self.channel.close(promise: nil)
    for call in pending { call.fail(error) }
  }
}

private func describeErrno(_ code: Int32) -> String {
  switch code {
  case 2: "no such socket (ENOENT)"
  case 111: "connection refused (ECONNREFUSED)"
  case 13: "permission denied (EACCES)"
  default: "errno \(code)"
  }
}
