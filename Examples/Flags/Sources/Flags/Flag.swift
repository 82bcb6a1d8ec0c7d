import CasePaths
import Dependencies
import Foundation
import SwitchyardRuntime

/// One feature flag: its kill switch, its release to the environments, and an optional editing
/// session. The catalog runs one per flag with `forEach`, addressed by the flag's id.
///
/// ```swift
/// // On the wire, in the catalog's actions:
/// // {"flag":{"element":{"id":"beta","action":{"setEnabled":false}}}}
/// ```
///
/// It tells its parent what changed through ``Action/delegate(_:)``, sent from `onChange`
/// reducers that compare the state before and after each action: the audit feed records what
/// changed, not what was asked (turning off a flag that is off records nothing).
public struct Flag: Reducer {
  public struct State: Equatable, Codable, Sendable, Identifiable {
    /// The flag's name, such as `new-checkout`: its key in the catalog and in its JSON Pointer.
    public let id: String
    public var description: String
    public var owner: String
    /// Labels to find the flag by, such as its team or product area (`search`, `payments`):
    /// edited in a session, with the description and owner. New in version 2 of the state: the
    /// flags of a version-1 journal get none (see `FlagsApplication`).
    public var tags: [String]
    /// The kill switch: a disabled flag is off everywhere, whatever its release says.
    public var isEnabled: Bool
    public var release: Release.State
    /// Mixed into each subject's bucket (see ``bucket(of:salt:)``), so that flags at the same
    /// percentage reach different subjects. Random, chosen when the flag is created.
    public let salt: String
    /// The editing session, while one is open.
    public var draft: EditSession.State?

    public init(
      id: String, description: String = "", owner: String = "", tags: [String] = [], isEnabled: Bool = true,
      release: Release.State = .development, salt: String, draft: EditSession.State? = nil
    ) {
      self.id = id
      self.description = description
      self.owner = owner
      self.tags = tags
      self.isEnabled = isEnabled
      self.release = release
      self.salt = salt
      self.draft = draft
    }
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    /// The kill switch. Turning a flag off also stops a ramp: it must not climb unseen.
    case setEnabled(Bool)
    case release(Release.Action)
    /// Opens an editing session, unless one is open already.
    case beginEditing(author: String)
    case editing(EditSession.Action)
    /// Applies the session's draft to the flag and closes it.
    case commitEdits
    /// Closes the session without applying it.
    case discardEdits
    /// What changed, for the catalog to pass on to the audit feed.
    case delegate(FlagChange)
  }

  /// The longest description, owner or author a client may set.
  public static let maximumTextLength = 500
  /// The most tags a flag has.
  public static let maximumTags = 10

  @Dependency(\.uuid) var uuid

  public init() {}

  public var body: some ReducerOf<Self> {
    CombineReducers {
      Scope(state: \.release, action: \.release) {
        Release()
      }
      Reduce { state, action in
        switch action {
        case let .setEnabled(isEnabled):
          state.isEnabled = isEnabled
          guard !isEnabled, state.release.rollout?.ramp != nil else { return .none }
          return .send(.release(.production(.stopRamp)))

        case let .beginEditing(author):
          guard state.draft == nil, !author.isEmpty, author.count <= Self.maximumTextLength else { return .none }
          state.draft = EditSession.State(
            id: self.uuid(), author: author, description: state.description, owner: state.owner, tags: state.tags
          )
          // The session starts its idle timer itself: as its effect, the timer ends with it.
          return .send(.editing(.opened))

        case .commitEdits:
          guard let draft = state.draft else { return .none }
          state.description = draft.description
          state.owner = draft.owner
          state.tags = draft.tags
          state.draft = nil
          return .send(.delegate(.edited(session: draft.id, by: draft.author)))

        case .discardEdits, .editing(.expired):
          state.draft = nil
          return .none

        case .release, .editing, .delegate:
          return .none
        }
      }
      .ifLet(\.draft, action: \.editing) {
        EditSession()
      }
    }
    .onChange(of: \.isEnabled) { _, isEnabled in
      Reduce { _, _ in .send(.delegate(.switched(on: isEnabled))) }
    }
    .onChange(of: \.release.environment) { _, environment in
      Reduce { _, _ in .send(.delegate(.released(to: environment))) }
    }
    .onChange(of: \.release.rollout?.percent) { before, after in
      Reduce { _, _ in
        // Entering or leaving production is a release, recorded above.
        guard before != nil, let after else { return .none }
        return .send(.delegate(.rolledOut(percent: after)))
      }
    }
  }

  /// Whether `id` can name a flag (see ``isValidName(_:maximumLength:)``): at most 64 bytes.
  public static func isValidID(_ id: String) -> Bool {
    isValidName(id, maximumLength: 64)
  }

  /// Whether `tags` can be a flag's: at most ``maximumTags``, each a name as an id is, none twice.
  public static func areValidTags(_ tags: [String]) -> Bool {
    tags.count <= Self.maximumTags && Set(tags).count == tags.count && tags.allSatisfy(Self.isValidID)
  }
}

extension Flag.Action: InternalActions {
  /// What the flag tells its parent, and the internal actions of its children.
  public static let internalActions =
    ["delegate"]
    + Release.Action.internalActions.map { "release.\($0)" }
    + EditSession.Action.internalActions.map { "editing.\($0)" }
}
