import SwitchyardRuntime
import SwitchyardSynchronization

/// Where a feature's state and action hold dates, as `Describe` tells clients: JSON Pointers
/// below the feature's state and below its action, `*` for any element or member
/// (``JSONDateFields``). Found from the types at the first `Describe`, then kept.
///
/// ```swift
/// // PrimeTime's activity feed: {"state": ["/*/timestamp"], "action": []}
/// ```
final class FeatureDates: Sendable {
  private let find: @Sendable () -> JSONValue
  private let found = Mutex<JSONValue?>(nil)

  /// The dates of `state`, and of `action` when it is `Decodable` (an action that is not has no
  /// wire form, and no dates a client could send).
  init<State: Decodable & Sendable, Action: Sendable>(state: State.Type, action: Action.Type) {
    self.find = {
      let action = (Action.self as? any Decodable.Type).map { JSONDateFields(of: $0).pointers } ?? []
      return [
        "state": .array(JSONDateFields(of: State.self).pointers.map(JSONValue.string)),
        "action": .array(action.map(JSONValue.string)),
      ]
    }
  }

  /// `{"state": […], "action": […]}`.
  var json: JSONValue {
    if let found = self.found.withLock({ $0 }) { return found }
    let json = self.find()
    self.found.withLock { $0 = json }
    return json
  }
}
