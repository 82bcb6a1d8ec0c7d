import Dependencies
import Foundation
import SwitchyardRuntime

/// Records every favorite prime added or removed, with a timestamp.
///
/// It owns no screen: it listens, through a read-only route, to the `favoritesChanged` actions
/// of the prime modal and of the favorites screen (see `App`).
public struct ActivityFeed: Reducer {
  public typealias State = [Activity]
  public typealias Action = FavoritesChange

  @Dependency(\.date.now) var now

  public init() {}

  public func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case let .added(primes):
      state.append(contentsOf: primes.map { Activity(timestamp: self.now, kind: .addedFavoritePrime($0)) })
    case let .removed(primes):
      state.append(contentsOf: primes.map { Activity(timestamp: self.now, kind: .removedFavoritePrime($0)) })
    }
    return .none
  }
}

/// One entry of the activity feed.
public struct Activity: Equatable, Codable, Sendable {
  public var timestamp: Date
  public var kind: Kind

  public enum Kind: Equatable, Codable, Sendable {
    case addedFavoritePrime(Int)
    case removedFavoritePrime(Int)
  }

  public init(timestamp: Date, kind: Kind) {
    self.timestamp = timestamp
    self.kind = kind
  }
}

extension FavoritesChange: InternalActions {
  /// The activity feed only listens: every change comes from a screen's effect.
  public static let internalActions = ["added", "removed"]
}
