import CasePaths
import Dependencies
import Foundation
import SwitchyardRuntime

/// The list of favorite primes: delete some, save them to a file, load them back.
public struct FavoritePrimes: Reducer {
  public struct State: Equatable, Sendable {
    public var favoritePrimes: [Int]
    public var storage: StorageStatus

    public init(favoritePrimes: [Int] = [], storage: StorageStatus = StorageStatus()) {
      self.favoritePrimes = favoritePrimes
      self.storage = storage
    }
  }

  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case deleteFavoritePrimes(IndexSet)
    case saveButtonTapped
    case saved
    case loadButtonTapped
    case loaded([Int])
    case storageFailed(String)
    case favoritesChanged(FavoritesChange)
  }

  static let fileName = "favorite-primes.json"

  @Dependency(\.fileStorage) var fileStorage

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .deleteFavoritePrimes(indexSet):
        let valid = indexSet.filteredIndexSet { state.favoritePrimes.indices.contains($0) }
        guard !valid.isEmpty else { return .none }
        let removed = valid.map { state.favoritePrimes[$0] }
        for index in valid.reversed() { state.favoritePrimes.remove(at: index) }
        return .send(.favoritesChanged(.removed(removed)))

      case .saveButtonTapped:
        state.storage.isBusy = true
        return .run { [primes = state.favoritePrimes, fileStorage] send in
          try fileStorage.save(JSONEncoder().encode(primes), Self.fileName)
          send(.saved)
        } catch: { error, send in
          send(.storageFailed("\(error)"))
        }

      case .saved:
        state.storage = StorageStatus(isBusy: false, lastError: nil)
        return .none

      case .loadButtonTapped:
        state.storage.isBusy = true
        return .run { [fileStorage] send in
          send(.loaded(try JSONDecoder().decode([Int].self, from: fileStorage.load(Self.fileName))))
        } catch: { error, send in
          send(.storageFailed("\(error)"))
        }

      case let .loaded(primes):
        let added = primes.filter { !state.favoritePrimes.contains($0) }
        let removed = state.favoritePrimes.filter { !primes.contains($0) }
        state.favoritePrimes = primes
        state.storage = StorageStatus(isBusy: false, lastError: nil)
        return .merge(
          removed.isEmpty ? .none : .send(.favoritesChanged(.removed(removed))),
          added.isEmpty ? .none : .send(.favoritesChanged(.added(added)))
        )

      case let .storageFailed(message):
        state.storage = StorageStatus(isBusy: false, lastError: message)
        return .none

      case .favoritesChanged:
        return .none
      }
    }
  }
}

/// Whether a save or load is running, and how the last one failed.
public struct StorageStatus: Equatable, Codable, Sendable {
  public var isBusy: Bool
  public var lastError: String?

  public init(isBusy: Bool = false, lastError: String? = nil) {
    self.isBusy = isBusy
    self.lastError = lastError
  }
}

extension FavoritePrimes.Action: InternalActions {
  /// What the storage effects answer, and what the screen tells listeners.
  public static let internalActions = ["saved", "loaded", "storageFailed", "favoritesChanged"]
}
