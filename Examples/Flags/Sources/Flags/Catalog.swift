import CasePaths
import Dependencies
import IdentifiedCollections
import SwitchyardRuntime

/// The flags the service knows: created and deleted here, each one run by ``Flag`` through
/// `forEach` and addressed by its id.
///
/// Its state is the daemon's `/flags`, one member per flag (``State``): a client watches one flag
/// by subscribing to `/flags/beta`.
public struct Catalog: Reducer {
  public struct State: Equatable, Sendable {
    /// The flags, in the order of their ids.
    public var flags: IdentifiedArrayOf<Flag.State>

    public init(flags: IdentifiedArrayOf<Flag.State> = []) {
      self.flags = flags
    }
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    /// A new flag, enabled and in development. A taken or invalid id changes nothing.
    case create(id: String, description: String)
    case delete(id: String)
    /// An action for the flag whose id it names.
    case flag(IdentifiedActionOf<Flag>)
    /// A change, told to whoever listens: the audit feed.
    case audited(AuditEvent)
    /// The daemon started this feature again (its `afterRestart` action, see `FlagsApplication`):
    /// the ramps that were running died with the old process.
    case restarted
  }

  /// The most flags the catalog holds; creating one more changes nothing.
  public static let maximumFlags = 1_000

  @Dependency(\.withRandomNumberGenerator) var withRandomNumberGenerator

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .create(id, description):
        guard
          Flag.isValidID(id), state.flags[id: id] == nil, state.flags.count < Self.maximumFlags,
          description.count <= Flag.maximumTextLength
        else { return .none }
        let salt = self.withRandomNumberGenerator { generator in
          String(UInt64.random(in: .min ... .max, using: &generator), radix: 16)
        }
        let position = state.flags.ids.firstIndex { $0 > id } ?? state.flags.endIndex
        state.flags.insert(Flag.State(id: id, description: description, salt: salt), at: position)
        return .send(.audited(.flag(id: id, change: .created)))

      case let .delete(id):
        // forEach cancels the effects of a flag that goes: its ramp stops with it.
        guard state.flags.remove(id: id) != nil else { return .none }
        return .send(.audited(.flag(id: id, change: .deleted)))

      case let .flag(.element(id, .delegate(change))):
        return .send(.audited(.flag(id: id, change: change)))

      case .restarted:
        return .merge(
          state.flags.filter { $0.release.rollout?.ramp != nil }.map { flag in
            .send(.flag(.element(id: flag.id, action: .release(.production(.resumeRamp)))))
          }
        )

      case .flag, .audited:
        return .none
      }
    }
    .forEach(\.flags, action: \.flag) {
      Flag()
    }
  }
}

extension Catalog.State: Codable {
  /// One member per flag, named by its id: `{"beta":{…},"new-checkout":{…}}`.
  ///
  /// An `IdentifiedArray` encodes as an array, where a flag's place is its index, and the
  /// index of every flag after it changes when one is deleted; a subscriber to `/flags/2` would
  /// be following another flag. Keyed by id, `/flags/beta` is beta for as long as it exists,
  /// and a change to it is a patch under that path.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: FlagKey.self)
    for flag in self.flags {
      try container.encode(flag, forKey: FlagKey(flag.id))
    }
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: FlagKey.self)
    var flags = IdentifiedArrayOf<Flag.State>()
    for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
      let flag = try container.decode(Flag.State.self, forKey: key)
      guard flag.id == key.stringValue else {
        throw DecodingError.dataCorruptedError(
          forKey: key, in: container, debugDescription: "the flag under \(key.stringValue) has the id \(flag.id)"
        )
      }
      flags.append(flag)
    }
    self.flags = flags
  }

  /// A flag's id as a JSON member name.
  private struct FlagKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(_ id: String) { self.stringValue = id }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue _: Int) { nil }
  }
}

extension Catalog.Action: InternalActions {
  /// What the catalog tells listeners, what the daemon sends it after a restart, and each
  /// flag's internal actions, under `flag.element.action`.
  public static let internalActions =
    ["audited", "restarted"] + Flag.Action.internalActions.map { "flag.element.action.\($0)" }
}
