import ConcurrencyExtras
import Dependencies
import SwitchyardFeatureStore
import SwitchyardRuntime
import SwitchyardWorkers

/// What the daemon and a worker need to run a feature in a worker process, with the feature's
/// own types erased to JSON and the application's action to ``RoutedAction``.
struct WorkerSupport: Sendable {
  /// Whether the feature's route takes `action`.
  let takes: @Sendable (RoutedAction) -> Bool
  /// The feature's local action in `action`, as JSON, when its route takes it.
  let extract: @Sendable (RoutedAction) -> JSONValue?
  /// On a full route: hands `body` the global action that embeds a local action an effect sent.
  let embed: (@Sendable (_ local: JSONValue, _ body: (RoutedAction) -> Void) throws -> Void)?
  /// The lifecycle action sent first after a restart, as JSON.
  let afterRestart: JSONValue?
  /// The worker process's side: runs the feature's store behind the link, reading the global
  /// actions the daemon passes on as their clients sent them with the decoder given.
  let run: @Sendable (WorkerLinkEnds, InProgressPage, _ decodeGlobal: @escaping GlobalActionDecoder) async throws -> Void

  init<RootAction, LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>(
    route: some ActionRoute<RootAction, LocalAction>,
    afterRestart: LocalAction?,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    reducer: @escaping @Sendable () -> R
  ) where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    self.takes = { action in route.extract(from: action[as: RootAction.self]) { _ in } }
    self.extract = { action in
      var json: JSONValue?
      _ = route.extract(from: action[as: RootAction.self]) { json = try? encoder.encode($0) }
      return json
    }
    if let embed = route.embed.map({ UncheckedSendable($0) }) {
      self.embed = { json, body in
        RoutedAction.with(embed.value(try decoder.decode(LocalAction.self, from: json)), body)
      }
    } else {
      self.embed = nil
    }
    self.afterRestart = afterRestart.flatMap { try? encoder.encode($0) }
    let keepsTimers = route.embed != nil
    self.run = { link, page, decodeGlobal in
      try await runWorkerStore(
        link: link,
        page: page,
        keepsTimers: keepsTimers,
        decodeGlobal: { bytes throws in
          var local: LocalAction?
          try decodeGlobal(bytes) { local = route.extract(from: $0[as: RootAction.self]) }
          return local
        },
        reducer: reducer,
        prepareDependencies: prepareDependencies
      ) as Void
    }
  }
}

/// Reads a global action from a client's JSON text and hands it to `body`, for a worker (see
/// `WorkerMessage.globalAction`).
typealias GlobalActionDecoder = @Sendable (_ text: ActionBytes, _ body: (RoutedAction) -> Void) throws -> Void
