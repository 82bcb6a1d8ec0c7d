import SwitchyardSynchronization

/// What answers the requests under a path of the HTTP endpoint other than `/metrics`: the
/// inspector mounts itself at `/inspector` once the daemon's parts it reads exist.
///
/// ```swift
/// struct Hello: HTTPRoute {
///   func respond(to exchange: HTTPExchange) {
///     exchange.respond(.ok, contentType: "text/plain", body: "hello\n")
///   }
/// }
/// mounts.mount(Hello(), at: "/hello")
/// ```
package protocol HTTPRoute: Sendable {
  /// Answers `exchange`, on the endpoint's event loop; an answer that takes longer (a read of
  /// the journal) is given from wherever it is ready.
  func respond(to exchange: HTTPExchange)
}

/// The routes mounted on the HTTP endpoint, each at a path prefix: the endpoint is bound before
/// the daemon builds what its routes read, and they are mounted then.
package final class HTTPMounts: Sendable {
  private let routes = Mutex<[(prefix: String, route: any HTTPRoute)]>([])

  package init() {}

  /// Serves `path`, and every path under `path/`, with `route`.
  package func mount(_ route: any HTTPRoute, at path: String) {
    self.routes.withLock { $0.append((path, route)) }
  }

  /// The route serving `path`, if any.
  func route(for path: Substring) -> (any HTTPRoute)? {
    self.routes.withLock { routes in
      routes.first { mount in
        path == mount.prefix || (path.hasPrefix(mount.prefix) && path.dropFirst(mount.prefix.count).first == "/")
      }?.route
    }
  }
}
