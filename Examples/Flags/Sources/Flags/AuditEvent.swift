import Foundation
import SwitchyardRuntime

/// What the audit feed records: a change to a flag or to a setting.
///
/// The catalog and the settings each send one as their internal `audited` action; the audit
/// feed hears both through one read-only route (``Flags/auditRoute``).
///
/// ```json
/// {"flag":{"id":"beta","change":{"switched":{"on":false}}}}
/// {"setting":{"key":"search.timeoutMs","value":250}}
/// ```
public enum AuditEvent: Equatable, Codable, Sendable {
  case flag(id: String, change: FlagChange)
  /// A setting set to `value`, or removed when `value` is `nil`.
  case setting(key: String, value: JSONValue?)
}

/// What happened to one flag.
public enum FlagChange: Equatable, Codable, Sendable {
  case created
  case deleted
  /// The kill switch was turned on or off.
  case switched(on: Bool)
  /// The flag was promoted or rolled back to `environment`.
  case released(to: Environment)
  /// The rollout in production is now at `percent`.
  case rolledOut(percent: Int)
  /// An editing session was committed.
  case edited(session: UUID, by: String)
}

extension AuditEvent: InternalActions {
  /// The audit feed only listens: clients cannot write its history.
  public static let internalActions = ["flag", "setting"]
}
