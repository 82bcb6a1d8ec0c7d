import Foundation
import IdentifiedCollections
import SwitchyardClient

/// The client's view of `switchyard-fixture`'s `flags` feature (Tests/Fixture): its own types,
/// as a client in another process would declare them, for the parts it reads.
enum FixtureFlags {
  struct Flag: Codable, Equatable, Identifiable, Sendable {
    var id: String
    var isOn: Bool
    var changed: Date
  }

  /// The fixture's state, as far as this client cares: the other features' members are not read.
  struct State: Decodable, Sendable {
    var flags: IdentifiedArrayOf<Flag>
    var tally: Tally

    struct Tally: Decodable, Sendable {
      var count: Int
      var computed: Int { self.count * 2 }
    }
  }

  enum Action: Encodable, Sendable {
    case flags(FlagsAction)
    case tally(TallyAction)
  }

  enum FlagsAction: Encodable, Sendable {
    case add(Flag)
    case insertFirst(Flag)
    case set(id: String, isOn: Bool, at: Date)
    case remove(String)
  }

  enum TallyAction: Encodable, Sendable {
    case increment
  }

  typealias Client = SwitchyardClient<Action, State>
}
