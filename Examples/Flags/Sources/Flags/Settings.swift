import CasePaths
import SwitchyardRuntime

/// The configuration the service hands out besides flags: named values of any JSON type.
///
/// Its state is the daemon's `/settings`, a member per setting, so one setting is one JSON
/// Pointer away: `switchyard get /settings/search.timeoutMs`.
///
/// ```swift
/// store.send(.set(key: "search.timeoutMs", value: 250))
/// ```
public struct Settings: Reducer {
  public typealias State = [String: JSONValue]

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    /// Sets a value; an invalid key, a value over ``maximumValueBytes`` or one setting too many
    /// changes nothing.
    case set(key: String, value: JSONValue)
    case remove(key: String)
    /// A change, told to whoever listens: the audit feed.
    case audited(AuditEvent)
  }

  /// The most settings the service holds.
  public static let maximumSettings = 1_000
  /// The largest value, as compact JSON.
  public static let maximumValueBytes = 16 * 1024

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .set(key, value):
        guard
          isValidName(key, maximumLength: 128), state[key] != value,
          state[key] != nil || state.count < Self.maximumSettings,
          value.serialized().utf8.count <= Self.maximumValueBytes
        else { return .none }
        state[key] = value
        return .send(.audited(.setting(key: key, value: value)))

      case let .remove(key):
        guard state.removeValue(forKey: key) != nil else { return .none }
        return .send(.audited(.setting(key: key, value: nil)))

      case .audited:
        return .none
      }
    }
  }
}

extension Settings.Action: InternalActions {
  /// What the settings tell listeners.
  public static let internalActions = ["audited"]
}
