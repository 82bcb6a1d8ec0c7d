import SwitchyardRuntime

/// What `io.switchyard.Store` says of a feature (`Describe`), read once from its ``Feature``
/// when the responder is made.
struct ServedFeature: Sendable {
  let name: String
  let pointer: JSONPointer
  let isReadOnly: Bool
  let actionType: String
  let actionCases: [ActionCase]
  let visibility: ActionVisibility
  let describedCases: JSONValue
  let dates: FeatureDates
  /// The case names, dotted, that lead from the application's action to the feature's: where
  /// the short form of its actions starts (`signUp` for `signUp.submitTapped`; empty when the
  /// feature's cases are the application's own). `nil` when the route cannot embed, or the
  /// feature's action has no case without a payload to find it with.
  let actionPrefix: String?

  init<State, Action: Encodable>(_ feature: Feature<State, Action>) {
    self.name = feature.name
    self.pointer = feature.pointer
    self.isReadOnly = feature.isReadOnly
    self.actionType = feature.actionType
    self.actionCases = feature.actionCases
    self.visibility = feature.visibility
    self.describedCases = feature.describedCases
    self.dates = feature.dates
    self.actionPrefix = Self.actionPrefix(of: feature)
  }

  private static func actionPrefix<State, Action: Encodable>(of feature: Feature<State, Action>) -> String? {
    guard let sample = feature.routeSample, let global = try? JSONValueEncoder().encode(sample.global) else { return nil }
    var tokens: [String] = []
    var value = global
    while value != sample.local {
      guard case let .object(members) = value, members.count == 1, let only = members.elements.first else { return nil }
      tokens.append(only.key)
      value = only.value
    }
    return tokens.joined(separator: ".")
  }
}
