import Foundation
import Logging
import ServiceLifecycle
import SwitchyardRuntime

/// Runs an ``Application``: hosts its features, routes actions between them and serves Varlink
/// until SIGTERM or SIGINT, then drains and returns.
///
/// ```swift
/// try await Daemon(application: application, configuration: configuration).run()
/// ```
public struct Daemon<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  public let application: Application<State, Action>
  public let configuration: DaemonConfiguration
  public let logger: Logger

  public init(application: Application<State, Action>, configuration: DaemonConfiguration, logger: Logger) {
    self.application = application
    self.configuration = configuration
    self.logger = logger
  }

  /// Starts the features and serves until a termination signal.
  ///
  /// - Parameter onListening: Called once the socket accepts connections.
  public func run(onListening: @escaping @Sendable () -> Void = {}) async throws {
    let initialJSON = try self.application.validate()
    let router = Router<Action>(
      initialState: initialJSON,
      pointers: self.application.features.map(\.pointer),
      historyLimit: self.configuration.historyLimit,
      logger: self.logger
    )
    var hosts: [FeatureHost<Action>] = []
    for (index, feature) in self.application.features.enumerated() {
      hosts.append(try await feature.start(self.application.initialState, router, index))
    }
    router.attach(hosts)
    let service = StoreService(
      router: router,
      features: self.application.features,
      queueLimit: self.configuration.subscriptionQueueLimit,
      logger: self.logger
    )
    let server = ServerService(
      server: VarlinkServer(service: service, configuration: self.configuration, logger: self.logger),
      router: router,
      onListening: onListening
    )
    let group = ServiceGroup(
      configuration: .init(
        services: [server],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: self.logger
      )
    )
    try await group.run()
    for host in hosts { await host.stop() }
    try? FileManager.default.removeItem(atPath: self.configuration.socketPath)
    self.logger.info("stopped")
  }
}

/// The Varlink server as a service of the service group: on graceful shutdown it ends the
/// subscriptions with `ShuttingDown` and stops accepting.
private struct ServerService<State: Codable & Sendable, Action: Codable & Sendable>: Service {
  let server: VarlinkServer<State, Action>
  let router: Router<Action>
  let onListening: @Sendable () -> Void

  func run() async throws {
    // A graceful shutdown ends the subscriptions with `ShuttingDown`, stops accepting, and lets
    // every connection answer the calls it has read before it closes.
    try await withGracefulShutdownHandler {
      try await self.server.run(onListening: self.onListening)
    } onGracefulShutdown: {
      self.router.shutDown()
      self.server.drain()
    }
  }
}
