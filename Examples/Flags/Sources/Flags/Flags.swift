import CasePaths
import SwitchyardRuntime

/// The flag service, composed from its features: the catalog of flags, the settings, and the
/// audit feed that hears of every change to either.
///
/// Each part of the state belongs to one feature, so the daemon can host each on its own
/// (`FlagsApplication`); this reducer runs them together, for tests and for reading.
///
/// ```json
/// {"flags": {"beta": {…}}, "settings": {"search.timeoutMs": 250}, "audit": [{…}]}
/// ```
public struct Flags: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var flags: Catalog.State
    public var settings: Settings.State
    public var audit: Audit.State

    public init(flags: Catalog.State = Catalog.State(), settings: Settings.State = [:], audit: Audit.State = []) {
      self.flags = flags
      self.settings = settings
      self.audit = audit
    }
  }

  /// `{"flags":{"create":{"id":"beta","description":"…"}}}`, `{"settings":{"set":{…}}}`.
  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    case flags(Catalog.Action)
    case settings(Settings.Action)
  }

  /// What the audit feed listens to: a read-only route that extracts an ``AuditEvent`` from
  /// either feature's `audited` action.
  public static let auditRoute: ReadOnlyRoute<Action, AuditEvent> = .anyOf(\.flags.audited, \.settings.audited)

  public init() {}

  public var body: some ReducerOf<Self> {
    Scope(state: \.flags, action: \.flags) {
      Catalog()
    }
    Scope(state: \.settings, action: \.settings) {
      Settings()
    }
    Scope(state: \.audit, action: Self.auditRoute) {
      Audit()
    }
  }
}
