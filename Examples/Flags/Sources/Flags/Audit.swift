import Dependencies
import Foundation
import SwitchyardRuntime

/// The audit feed: every change to a flag or a setting, with the time it was recorded.
///
/// It owns no action of its own. It listens, through the read-only route ``Flags/auditRoute``,
/// to the `audited` actions of the catalog and of the settings, which their effects send; a
/// read-only route extracts and never embeds, so nothing can be sent *to* the feed.
public struct Audit: Reducer {
  public typealias State = [AuditRecord]
  public typealias Action = AuditEvent

  /// How many records the feed keeps: the oldest go first.
  public static let capacity = 1_000

  @Dependency(\.date.now) var now

  public init() {}

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.append(AuditRecord(at: self.now, event: action))
    if state.count > Self.capacity {
      state.removeFirst(state.count - Self.capacity)
    }
    return .none
  }
}

/// One entry of the audit feed.
public struct AuditRecord: Equatable, Codable, Sendable {
  public var at: Date
  public var event: AuditEvent

  public init(at: Date, event: AuditEvent) {
    self.at = at
    self.event = event
  }
}
