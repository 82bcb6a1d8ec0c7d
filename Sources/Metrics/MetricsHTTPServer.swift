import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import ServiceLifecycle
import SwitchyardSynchronization

/// The daemon's HTTP/1.1 endpoint: `GET /metrics` answers the Prometheus text for a Prometheus
/// server to scrape (405 for another method); a path under a route mounted on ``mounts`` (the
/// inspector's `/inspector`) goes to that route; anything else is 404.
///
/// Off unless `http.listen` (or its other name, `metrics.listen`) names an address
/// (`127.0.0.1:9464`). The metrics have no access policy of their own — they hold no state and
/// no action — so bind it where only the scraper reaches; a mounted route guards what it serves.
///
/// What a client can make it hold is bounded all the same: at most ``connectionLimit``
/// connections (more are closed at once), of which one peer address may hold
/// ``connectionsPerPeer``, so that one client cannot take every slot from the scraper; a request
/// is at most ``RequestDeadlineHandler/maximumBytes``, and must arrive whole within
/// ``requestTimeout`` of its first byte (of the accept, for a connection's first request), so
/// that a client sending a byte now and then holds its slot no longer than that; a connection is closed after ``idleTimeout`` without a request; and a
/// response is written only while the client reads what came before — requests sent without
/// reading the answers wait in the kernel's buffers, not in the daemon's.
///
/// ```swift
/// let server = MetricsHTTPServer(host: "127.0.0.1", port: 9464, metrics: metrics, logger: logger)
/// let listening = try await server.listen()  // an address in use fails here, before serving
/// try await listening.run()                   // until the service group shuts down
/// ```
package struct MetricsHTTPServer: Service {
  let host: String
  let port: Int
  let metrics: DaemonMetrics
  /// The routes served beside `/metrics`, mounted once what they read exists.
  package let mounts = HTTPMounts()
  let logger: Logger
  /// How many connections may be open at once: a scraper needs one.
  var connectionLimit = 16
  /// How many of them one peer address may hold: a browser on the inspector opens up to six.
  var connectionsPerPeer = 8
  /// How long a request may take to arrive, from its first byte (or the accept) to its end.
  package var requestTimeout: TimeAmount = .seconds(5)
  /// How long a connection may go without a request.
  var idleTimeout: TimeAmount = .seconds(60)
  /// Called with the address bound (its port chosen by the kernel when 0 was asked for).
  var onListening: @Sendable (SocketAddress) -> Void = { _ in }

  package init(host: String, port: Int, metrics: DaemonMetrics, logger: Logger) {
    self.host = host
    self.port = port
    self.metrics = metrics
    self.logger = logger
  }

  package func run() async throws {
    try await self.listen().run()
  }

  /// Binds the address: the daemon does so before it serves anything, so that an address in use
  /// stops the start naming the setting and the address, not once workers run.
  package func listen() async throws(MetricsListenError) -> ListeningMetricsServer {
    let (metrics, mounts) = (self.metrics, self.mounts)
    let slots = ConnectionSlots(limit: self.connectionLimit, perPeer: self.connectionsPerPeer)
    let (requestTimeout, idleTimeout) = (self.requestTimeout, self.idleTimeout)
    let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .serverChannelOption(.backlog, value: 64)
      .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
      .childChannelInitializer { channel in
        let peer = channel.remoteAddress?.ipAddress ?? ""
        guard slots.take(for: peer) else { return channel.close() }
        channel.closeFuture.whenComplete { _ in slots.release(for: peer) }
        return channel.eventLoop.makeCompletedFuture {
          let deadline = RequestDeadlineHandler(timeout: requestTimeout)
          try channel.pipeline.syncOperations.addHandler(deadline)
          try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: idleTimeout))
          try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
          try channel.pipeline.syncOperations.addHandler(
            HTTPEndpointHandler(metrics: metrics, mounts: mounts, deadline: deadline)
          )
        }
      }
    let channel: any Channel
    do {
      channel = try await bootstrap.bind(host: self.host, port: self.port).get()
    } catch {
      throw MetricsListenError(host: self.host, port: self.port, underlying: error)
    }
    return ListeningMetricsServer(channel: channel, mounts: mounts, logger: self.logger, onListening: self.onListening)
  }
}

/// The metrics server once its address is bound: serves until the service group shuts down.
package struct ListeningMetricsServer: Service {
  let channel: any Channel
  /// Where the routes beside `/metrics` are mounted.
  package let mounts: HTTPMounts
  let logger: Logger
  let onListening: @Sendable (SocketAddress) -> Void

  /// The address bound, its port the kernel's choice when 0 was asked for.
  package var localAddress: SocketAddress? { self.channel.localAddress }

  package func run() async throws {
    let channel = self.channel
    if let address = channel.localAddress {
      self.logger.info("serving metrics over HTTP", metadata: ["address": "\(address)"])
      self.onListening(address)
    }
    try await withGracefulShutdownHandler {
      try await withTaskCancellationHandler {
        try await channel.closeFuture.get()
      } onCancel: {
        channel.close(promise: nil)
      }
    } onGracefulShutdown: {
      channel.close(promise: nil)
    }
  }
}

/// The metrics address (`metrics.listen`) cannot be bound.
public struct MetricsListenError: Error, CustomStringConvertible, Sendable {
  public let host: String
  public let port: Int
  /// What binding threw (NIO's `IOError`, or a resolution error).
  public let underlying: any Error

  public var description: String {
    "cannot serve the metrics on \(self.host):\(self.port) (metrics.listen): \(self.underlying); "
      + "another process may be listening there: pick another address, or stop it"
  }
}
