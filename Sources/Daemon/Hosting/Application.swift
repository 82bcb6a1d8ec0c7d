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
      throw ApplicationError(.stateNotEncodable, "the initial state cannot be encoded to JSON: \(error)", underlying: error)
    }
    if self.features.isEmpty { throw ApplicationError(.noFeatures, "the application hosts no feature") }
    for (index, feature) in self.features.enumerated() {
      for other in self.features[..<index] {
        if feature.pointer.isPrefix(of: other.pointer) || other.pointer.isPrefix(of: feature.pointer) {
          throw ApplicationError(
            .overlappingStates, feature: feature.name,
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
          .undeclaredInternalActions, feature: feature.name,
          """
          feature "\(feature.name)" declares internal actions that \(feature.actionType) does not have: \
          \(undeclared.joined(separator: ", ")); a name that matches no case protects nothing
          """
        )
      }
      guard let part = root.value(at: feature.pointer) else {
        throw ApplicationError(
          .stateKeyPathMismatch, feature: feature.name,
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
        throw ApplicationError(
          .stateNotEncodable, feature: feature.name, "the state of feature \"\(feature.name)\" cannot be encoded: \(error)",
          underlying: error
        )
      }
      guard local == part else {
        throw ApplicationError(
          .stateKeyPathMismatch, feature: feature.name,
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
      throw ApplicationError(
        .stateVersions, feature: feature.name,
        "feature \"\(feature.name)\" declares state version \(feature.stateVersion); versions start at 1"
      )
    }
    let from = feature.migrations.map(\.from).sorted()
    guard from == Array(1..<feature.stateVersion) else {
      throw ApplicationError(
        .stateVersions, feature: feature.name,
        """
        feature "\(feature.name)" declares state version \(feature.stateVersion) with migrations from \
        \(from.isEmpty ? "no version" : "versions \(from.map(String.init).joined(separator: ", "))"); \
        it needs exactly one from each version 1 to \(feature.stateVersion - 1)
        """
      )
    }
  }
}

/// Why the daemon refuses to start an application: a code, the feature it is about, and what to
/// change, as the operator reads it.
///
/// ```swift
/// do { _ = try application.validate() } catch where error.code == .overlappingStates { … }
/// ```
public struct ApplicationError: Error, CustomStringConvertible, Sendable {
  /// What is wrong with the application.
  public struct Code: Hashable, Sendable, CustomStringConvertible {
    public let description: String

    private init(_ name: String) {
      self.description = name
    }

    /// The application hosts no feature.
    public static let noFeatures = Code("noFeatures")
    /// The initial state, or a feature's part of it, does not encode as JSON.
    public static let stateNotEncodable = Code("stateNotEncodable")
    /// Two features own overlapping parts of the state.
    public static let overlappingStates = Code("overlappingStates")
    /// A feature's state key path does not lead to the part its name says.
    public static let stateKeyPathMismatch = Code("stateKeyPathMismatch")
    /// A feature names internal actions its action type does not have.
    public static let undeclaredInternalActions = Code("undeclaredInternalActions")
    /// A feature's state version and migrations do not fit together.
    public static let stateVersions = Code("stateVersions")
    /// A feature configured to run in a worker process cannot cross the process boundary.
    public static let notHostableInWorker = Code("notHostableInWorker")
  }

  public let code: Code
  /// The feature the problem is in; `nil` when it is the application's as a whole.
  public let feature: String?
  /// What is wrong and what to change.
  public let description: String
  /// The error behind it (an encoding error), when there is one.
  public let underlying: (any Error)?

  init(_ code: Code, feature: String? = nil, _ description: String, underlying: (any Error)? = nil) {
    self.code = code
    self.feature = feature
    self.description = description
    self.underlying = underlying
  }
}
