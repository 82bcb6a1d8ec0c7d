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
///     .actor("signUp", state: \.signUp, action: .case(\App.Action.Cases.signUp)) { SignUp() },
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
      if let actual = feature.actualActionCaseCount, !feature.actionCases.isEmpty,
        actual != feature.actionCases.count
      {
        throw ApplicationError(
          """
          feature "\(feature.name)" lists \(feature.actionCases.count) action cases \
          (\(feature.actionCases.joined(separator: ", "))), but \(feature.actionType) has \(actual); \
          update its `actionCases`
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
}

/// Why the daemon refuses to start an application.
public struct ApplicationError: Error, CustomStringConvertible, Sendable {
  public let description: String

  init(_ description: String) {
    self.description = description
  }
}
