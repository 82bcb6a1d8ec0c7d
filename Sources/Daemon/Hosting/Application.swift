import SwitchyardRuntime

/// What a daemon serves: the root state and action types, the initial state, and the features
/// that own its parts.
///
/// ```swift
/// let application = Application(
///   initialState: App.State(),
///   features: [
///     .process("primes", state: \.primes, action: App.primesRoute) { Primes() },
///     .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
///     .actor("signUp", state: \.signUp, action: .case(\.signUp)) { SignUp() },
///   ]
/// )
/// ```
public struct Application<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  public let initialState: State
  public let features: [Feature<State, Action>]

  public init(initialState: State, features: [Feature<State, Action>]) {
    self.initialState = initialState
    self.features = features
  }

  /// Checks that every feature owns the part its name says and that no two parts overlap.
  ///
  /// - Returns: The initial state's JSON.
  public func validate() throws(ApplicationError) -> JSONValue {
    let root: JSONValue
    do {
      root = try JSONValueEncoder().encode(self.initialState)
    } catch {
      throw ApplicationError("the initial state cannot be encoded to JSON: \(error)")
    }
    if self.features.isEmpty { throw ApplicationError("the application hosts no feature") }
    for (index, feature) in self.features.enumerated() {
      for other in self.features[..<index] {
        if feature.pointer.isPrefix(of: other.pointer) || other.pointer.isPrefix(of: feature.pointer) {
          throw ApplicationError(
            """
            features "\(other.name)" (\(other.pointer)) and "\(feature.name)" (\(feature.pointer)) \
            own overlapping parts of the state; every feature must own a part of its own
            """
          )
        }
      }
      try Self.validateMigrations(of: feature)
      let undeclared = feature.visibility.undeclaredInternalActions(in: feature.actionCases)
      if !feature.actionCases.isEmpty, !undeclared.isEmpty {
        throw ApplicationError(
          """
          feature "\(feature.name)" declares internal actions that \(feature.actionType) does not have: \
          \(undeclared.joined(separator: ", ")); a name that matches no case protects nothing
          """
        )
      }
      guard let part = root.value(at: feature.pointer) else {
        throw ApplicationError(
          """
          feature "\(feature.name)" owns \(feature.pointer), but the state has no such key; \
          name the feature after the stored property its state key path leads to
          """
        )
      }
      let local: JSONValue
      do {
        local = try feature.encodeLocalState(self.initialState)
      } catch {
        throw ApplicationError("the state of feature \"\(feature.name)\" cannot be encoded: \(error)")
      }
      guard local == part else {
        throw ApplicationError(
          """
          feature "\(feature.name)" owns \(feature.pointer), but its state key path leads to \
          another part of the state; name the feature after the stored property the key path \
          leads to
          """
        )
      }
    }
    return root
  }

  /// A feature's migrations lead from version 1 to its declared version, one step a version.
  private static func validateMigrations(of feature: Feature<State, Action>) throws(ApplicationError) {
    guard feature.stateVersion >= 1 else {
      throw ApplicationError("feature \"\(feature.name)\" declares state version \(feature.stateVersion); versions start at 1")
    }
    let from = feature.migrations.map(\.from).sorted()
    guard from == Array(1..<feature.stateVersion) else {
      throw ApplicationError(
        """
        feature "\(feature.name)" declares state version \(feature.stateVersion) with migrations from \
        \(from.isEmpty ? "no version" : "versions \(from.map(String.init).joined(separator: ", "))"); \
        it needs exactly one from each version 1 to \(feature.stateVersion - 1)
        """
      )
    }
  }
}

/// Why the daemon refuses to start an application.
public struct ApplicationError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
