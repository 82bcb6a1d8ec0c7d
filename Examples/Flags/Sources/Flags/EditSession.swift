import CasePaths
import Foundation
import SwitchyardRuntime

/// An operator's unsaved edits to a flag's description, owner and tags: the optional child state of
/// ``Flag``, run with `ifLet`.
///
/// The flag opens a session (``Flag/Action/beginEditing(author:)``), commits it or discards it;
/// subscribers see the draft meanwhile, so a second operator knows someone is editing. A session
/// left alone for ``idleTimeout`` expires: its timer restarts with every edit, and because it is
/// an effect of the session, `ifLet` cancels it when the session ends any other way.
///
/// The timer is a durable one (`Effect.schedule`): the daemon journals it, so a session left
/// open still expires after a restart.
public struct EditSession: Reducer {
  public struct State: Equatable, Codable, Sendable, Identifiable {
    /// The session's id: the audit feed names it when the edits are committed.
    public var id: UUID
    /// Who opened it.
    public var author: String
    public var description: String
    public var owner: String
    public var tags: [String]

    public init(id: UUID, author: String, description: String, owner: String, tags: [String] = []) {
      self.id = id
      self.author = author
      self.description = description
      self.owner = owner
      self.tags = tags
    }
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    case setDescription(String)
    case setOwner(String)
    /// The whole list; an invalid one (see ``Flag/areValidTags(_:)``) changes nothing.
    case setTags([String])
    /// Sent by the flag as it opens the session: starts the idle timer.
    case opened
    /// The idle timer fired: the flag closes the session.
    case expired
  }

  /// How long a session may go without an edit.
  public static let idleTimeout: Duration = .seconds(15 * 60)

  enum TimerID { case idle }

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .setDescription(description):
        guard description.count <= Flag.maximumTextLength else { return .none }
        state.description = description
        return Self.restartIdleTimer()

      case let .setOwner(owner):
        guard owner.count <= Flag.maximumTextLength else { return .none }
        state.owner = owner
        return Self.restartIdleTimer()

      case let .setTags(tags):
        guard Flag.areValidTags(tags) else { return .none }
        state.tags = tags
        return Self.restartIdleTimer()

      case .opened:
        return Self.restartIdleTimer()

      case .expired:
        return .none
      }
    }
  }

  /// A timer with the same id replaces the one scheduled before.
  private static func restartIdleTimer() -> Effect<Action> {
    .schedule(.expired, after: Self.idleTimeout, id: TimerID.idle)
  }
}

extension EditSession.Action: InternalActions {
  /// What only the flag and the session's timer send.
  public static let internalActions = ["opened", "expired"]
}
