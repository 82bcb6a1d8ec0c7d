import SwitchyardJournal
import SwitchyardRuntime

/// One step of a feature's state migrations: how the JSON of version `from` becomes the JSON of
/// version `from + 1`. Recovery runs the steps in order on the state the journal holds, before
/// it is decoded, so a feature's state type can change without losing what was acknowledged.
///
/// ```swift
/// .actor("primes", state: \.primes, action: App.primesRoute) { Primes() }
///   .stateVersion(2, migrations: StateMigration(from: 1) { json in
///     // Version 2 renamed `favorites` to `favoritePrimes`.
///     try json.modify(at: "") { state in
///       guard case var .object(fields) = state else { return }
///       fields["favoritePrimes"] = fields.removeValue(forKey: "favorites") ?? []
///       state = .object(fields)
///     }
///   })
/// ```
public struct StateMigration: Sendable {
  /// The version whose JSON this step reads.
  public let from: Int
  let migrate: @Sendable (inout JSONValue) throws -> Void

  /// - Parameter migrate: Changes the feature's state, as JSON, from version `from` to the next.
  ///   An error stops the daemon's start, with the error and the versions in the message.
  public init(from version: Int, _ migrate: @escaping @Sendable (inout JSONValue) throws -> Void) {
    self.from = version
    self.migrate = migrate
  }
}

extension Feature {
  /// Declares the version of the feature's state, and the migrations that bring the state of an
  /// older version up to it: one from each version before it, from 1 (every feature's version
  /// until it declares one).
  ///
  /// The journal records the versions its snapshots were written with. When the daemon starts
  /// on a journal of an older version, it migrates the recovered JSON, step by step, then writes
  /// a snapshot of the migrated state before it serves anyone, so the next start begins from it.
  /// A journal written by a newer version than the one declared is refused: a downgrade.
  public func stateVersion(_ version: Int, migrations: StateMigration...) -> Self {
    var feature = self
    feature.stateVersion = version
    feature.migrations = migrations
    return feature
  }
}

extension StateMigrator {
  /// The migrations `features` declare.
  init<State, Action>(_ features: [Feature<State, Action>]) {
    var steps: [String: Steps] = [:]
    for feature in features {
      steps[feature.name] = Steps(
        pointer: feature.pointer, version: feature.stateVersion,
        migrations: Dictionary(feature.migrations.map { ($0.from, $0.migrate) }, uniquingKeysWith: { first, _ in first })
      )
    }
    self.init(features: steps)
  }
}
