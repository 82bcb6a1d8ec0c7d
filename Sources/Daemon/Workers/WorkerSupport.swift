import ConcurrencyExtras
import Dependencies
import SwitchyardRuntime

/// What the daemon and a worker need to run a feature in a worker process, with the feature's
/// own types erased to JSON.
struct WorkerSupport<RootAction: Sendable>: Sendable {
  /// The feature's local action in `action`, as JSON, when its route takes it.
  let extract: @Sendable (RootAction) -> JSONValue?
  /// The global action for a local action an effect sent, on a full route.
  let embed: (@Sendable (JSONValue) throws -> RootAction)?
  /// The lifecycle action sent first after a restart, as JSON.
  let afterRestart: JSONValue?
  /// The worker process's side: runs the feature's store behind the link.
  let run: @Sendable (_ linkDescriptor: CInt, InProgressPage) async throws -> Void

  init<LocalState: Codable & Sendable, LocalAction: Codable & Sendable, R>(
    route: some ActionRoute<RootAction, LocalAction>,
    afterRestart: LocalAction?,
    prepareDependencies: (@Sendable (inout DependencyValues) -> Void)?,
    reducer: @escaping @Sendable () -> R
  ) where R: Reducer<LocalState, LocalAction> & SendableMetatype {
    let encoder = JSONValueEncoder()
    let decoder = JSONValueDecoder()
    self.extract = { action in route.extract(from: action).flatMap { try? encoder.encode($0) } }
    if let embed = route.embed.map({ UncheckedSendable($0) }) {
      self.embed = { json in embed.value(try decoder.decode(LocalAction.self, from: json)) }
    } else {
      self.embed = nil
    }
    self.afterRestart = afterRestart.flatMap { try? encoder.encode($0) }
    let keepsTimers = route.embed != nil
    self.run = { link, page in
      try await runWorkerStore(
        linkDescriptor: link, page: page, keepsTimers: keepsTimers, reducer: reducer, prepareDependencies: prepareDependencies
      ) as Void
    }
  }
}
