import SwitchyardJSON

/// The versions of the features' states, by feature name; a feature not named is at version 1.
package typealias StateVersions = [String: Int]

/// Brings the features' parts of a recovered state from the versions the journal recorded up to
/// the versions the application declares (`StateMigration`), one step a version.
///
/// ```swift
/// var state = recovered.state
/// let migrated = try migrator.migrate(&state, from: ["primes": 1])  // primes: 1 → 2
/// ```
package struct StateMigrator: Sendable {
  package struct Steps: Sendable {
    package let pointer: JSONPointer
    package let version: Int
    package let migrations: [Int: @Sendable (inout JSONValue) throws -> Void]

    package init(pointer: JSONPointer, version: Int, migrations: [Int: @Sendable (inout JSONValue) throws -> Void]) {
      self.pointer = pointer
      self.version = version
      self.migrations = migrations
    }
  }

  /// The steps of each feature, by name.
  package let features: [String: Steps]

  package init(features: [String: Steps]) {
    self.features = features
  }

  /// No feature declares a version: nothing to migrate.
  package static let none = StateMigrator(features: [:])

  /// The versions the application declares.
  package var versions: StateVersions {
    self.features.mapValues(\.version)
  }

  /// Migrates each feature's part of `state` from its version in `from` to its version in `to`
  /// (the declared one without it).
  ///
  /// - Returns: The features migrated, with the versions they went from and to.
  /// - Throws: ``RecoveryError`` when a step fails, or when `from` is newer than the version the
  ///   application declares (a downgrade).
  @discardableResult
  package func migrate(
    _ state: inout JSONValue, from: StateVersions, to target: StateVersions? = nil
  ) throws(RecoveryError) -> [(feature: String, from: Int, to: Int)] {
    var migrated: [(feature: String, from: Int, to: Int)] = []
    for (name, steps) in self.features.sorted(by: { $0.key < $1.key }) {
      let old = from[name] ?? 1
      let new = target.map { $0[name] ?? 1 } ?? steps.version
      guard max(old, new) <= steps.version else {
        throw RecoveryError(
          .newerVersion,
          """
          the state of feature "\(name)" in the journal is at version \(max(old, new)), newer than \
          version \(steps.version), which this build declares: it was written by a newer build; run \
          that build (or a newer one), or move the state directory aside to start afresh
          """
        )
      }
      guard old < new else { continue }
      do {
        try state.modify(at: steps.pointer) { part in
          for version in old..<new {
            guard let migrate = steps.migrations[version] else {
              throw RecoveryError(.noMigration, "feature \"\(name)\" has no migration from version \(version)")
            }
            do {
              try migrate(&part)
            } catch {
              throw RecoveryError(
                .migrationFailed,
                """
                migrating the state of feature "\(name)" from version \(version) to \(version + 1) \
                failed: \(error); fix the migration, or move the state directory aside to start afresh
                """,
                underlying: error
              )
            }
          }
        }
      } catch let error as RecoveryError {
        throw error
      } catch {
        // Nothing at the feature's pointer: it was added since; its state starts afresh.
        continue
      }
      migrated.append((name, old, new))
    }
    return migrated
  }
}
