import CasePaths
import SwitchyardRuntime

/// The "is this prime?" modal: save the current count as a favorite, or remove it.
///
/// Its state is assembled from two fields of the app state, `count` and `favoritePrimes`, through
/// a computed property (see `AppState.primeModal`).
public struct PrimeModal: Reducer {
  public struct State: Equatable, Sendable {
    public var count: Int
    public var favoritePrimes: [Int]

    public init(count: Int, favoritePrimes: [Int]) {
      self.count = count
      self.favoritePrimes = favoritePrimes
    }

    public var isPrime: Bool { PrimeTime.isPrime(self.count) }
    public var isFavorite: Bool { self.favoritePrimes.contains(self.count) }
  }

  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case saveFavoritePrimeTapped
    case removeFavoritePrimeTapped
    /// Told to whoever listens (the activity feed) once the favorites changed.
    case favoritesChanged(FavoritesChange)
  }

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .saveFavoritePrimeTapped:
        guard state.isPrime, !state.isFavorite else { return .none }
        state.favoritePrimes.append(state.count)
        return .send(.favoritesChanged(.added([state.count])))

      case .removeFavoritePrimeTapped:
        guard state.isFavorite else { return .none }
        state.favoritePrimes.removeAll { $0 == state.count }
        return .send(.favoritesChanged(.removed([state.count])))

      case .favoritesChanged:
        return .none
      }
    }
  }
}

/// What happened to the favorite primes: the shared action that the activity feed listens to,
/// from the modal and from the favorites screen alike.
@DescribedAction(decoding: .fromCases)
public enum FavoritesChange: Equatable, Codable, Sendable {
  case added([Int])
  case removed([Int])
}

extension PrimeModal.Action: InternalActions {
  /// Told to listeners by the modal itself, once the favorites changed.
  public static let internalActions = ["favoritesChanged"]
}
