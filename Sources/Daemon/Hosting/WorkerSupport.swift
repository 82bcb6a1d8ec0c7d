import ConcurrencyExtras
import Dependencies
import SwitchyardRuntime
import SwitchyardWorkers

/// What the daemon and a worker need to run a feature in a worker process, with the feature's
/// own types erased to JSON.
struct WorkerSupport<RootAction: Sendable>: Sendable {
  /// Whether the feature's route takes `action`.
  let takes: @Sendable (RootAction) -> Bool
  /// The feature's local action in `action`, as JSON, when its route takes it.
  let extract: @Sendable (RootAction) -> JSONValue?
  /// The global action for a local action an effect sent, on a full route.
  let embed: (@Sendable (JSONValue) throws -> RootAction)?
  /// The lifecycle action sent first after a restart, as JSON.
  let afterRestart: JSONValue?
  /// The worker process's side: runs the feature's store behind the link, reading the global
  /// actions the daemon passes on as their clients sent them with the decoder given.
  let run: @Sendable (WorkerLinkEnds, InProgressPage, _ decodeGlobal: @escaping GlobalActionDecoder<RootAction>) async throws -> Void

  init<LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>(
    route: some ActionRoute<RootAction, LocalAction>,
    afterRestart: LocalAction?,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    reducer: @escaping @Sendable () -> R
  ) where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    self.takes = { action in route.extract(from: action) { _ in } }
    self.extract = { action in
      var json: JSONValue?
      _ = route.extract(from: action) { json = try? encoder.encode($0) }
      return json
    }
    if let embed = route.embed.map({ UncheckedSendable($0) }) {
      self.embed = { json in embed.value(try decoder.decode(LocalAction.self, from: json)) }
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
        decodeGlobal: { bytes throws in route.extract(from: try decodeGlobal(bytes)) },
        reducer: reducer,
        prepareDependencies: prepareDependencies
      ) as Void
    }
  }
}

/// Reads a global action from a client's JSON text, for a worker (see `WorkerMessage.globalAction`).
typealias GlobalActionDecoder<RootAction> = @Sendable (ActionBytes) throws -> RootAction
