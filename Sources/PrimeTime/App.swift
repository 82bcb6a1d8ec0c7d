import CasePaths
import Foundation
import SwitchyardRuntime

/// The counter, the prime modal and the favorites screen: the features that share the count and
/// the favorite primes.
///
/// They are pulled back along computed properties that assemble each screen's state from these
/// fields, the way the reference material does.
public struct Primes: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var count: Int
    public var favoritePrimes: [Int]
    public var alertNthPrime: PrimeAlert?
    public var isNthPrimeRequestInFlight: Bool
    public var storage: StorageStatus

    public init(
      count: Int = 0,
      favoritePrimes: [Int] = [],
      alertNthPrime: PrimeAlert? = nil,
      isNthPrimeRequestInFlight: Bool = false,
      storage: StorageStatus = StorageStatus()
    ) {
      self.count = count
      self.favoritePrimes = favoritePrimes
      self.alertNthPrime = alertNthPrime
      self.isNthPrimeRequestInFlight = isNthPrimeRequestInFlight
      self.storage = storage
    }

    /// The counter's view: the count and the nth-prime request.
    public var counter: Counter.State {
      get {
        Counter.State(
          count: self.count, alertNthPrime: self.alertNthPrime,
          isNthPrimeRequestInFlight: self.isNthPrimeRequestInFlight
        )
      }
      set {
        self.count = newValue.count
        self.alertNthPrime = newValue.alertNthPrime
        self.isNthPrimeRequestInFlight = newValue.isNthPrimeRequestInFlight
      }
    }

    /// The prime modal's view: the count and the favorites.
    public var primeModal: PrimeModal.State {
      get { PrimeModal.State(count: self.count, favoritePrimes: self.favoritePrimes) }
      set {
        self.count = newValue.count
        self.favoritePrimes = newValue.favoritePrimes
      }
    }

    /// The favorites screen's view: the favorites and the storage status.
    public var favoritePrimesState: FavoritePrimes.State {
      get { FavoritePrimes.State(favoritePrimes: self.favoritePrimes, storage: self.storage) }
      set {
        self.favoritePrimes = newValue.favoritePrimes
        self.storage = newValue.storage
      }
    }
  }

  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case counter(Counter.Action)
    case primeModal(PrimeModal.Action)
    case favoritePrimes(FavoritePrimes.Action)
  }

  public init() {}

  public var body: some ReducerOf<Self> {
    Scope(state: \.counter, action: \.counter) {
      Counter()
    }
    Scope(state: \.primeModal, action: \.primeModal) {
      PrimeModal()
    }
    Scope(state: \.favoritePrimesState, action: \.favoritePrimes) {
      FavoritePrimes()
    }
  }
}

/// PrimeTime, the demo application of the reference material, composed from its features.
///
/// The activity feed listens, through a read-only `anyOf` route, to the `favoritesChanged`
/// actions that both the modal and the favorites screen send. Each part of the state belongs to
/// one feature, so the daemon can host each in an actor of its own.
public struct App: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var primes: Primes.State
    public var activityFeed: [Activity]
    public var signUp: SignUp.State

    public init(
      primes: Primes.State = Primes.State(),
      activityFeed: [Activity] = [],
      signUp: SignUp.State = SignUp.State()
    ) {
      self.primes = primes
      self.activityFeed = activityFeed
      self.signUp = signUp
    }
  }

  /// The screens' actions, flat: `{"counter":{"incrTapped":{}}}` on the wire.
  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case counter(Counter.Action)
    case primeModal(PrimeModal.Action)
    case favoritePrimes(FavoritePrimes.Action)
    case signUp(SignUp.Action)
  }

  public init() {}

  /// The actions of the three screens that share `primes`, as one route.
  public static let primesRoute = PrimesRoute()

  /// The actions the activity feed listens to.
  public static let activityFeedRoute: ReadOnlyRoute<Action, FavoritesChange> =
    .anyOf(\.primeModal.favoritesChanged, \.favoritePrimes.favoritesChanged)

  public var body: some ReducerOf<Self> {
    Scope(state: \.primes, action: Self.primesRoute) {
      Primes()
    }
    Scope(state: \.activityFeed, action: Self.activityFeedRoute) {
      ActivityFeed()
    }
    Scope(state: \.signUp, action: \.signUp) {
      SignUp()
    }
  }
}

/// A full route between the app's flat actions and the actions of ``Primes``.
public struct PrimesRoute: ActionRoute {
  public func extract(from root: App.Action) -> Primes.Action? {
    switch root {
    case let .counter(action): .counter(action)
    case let .primeModal(action): .primeModal(action)
    case let .favoritePrimes(action): .favoritePrimes(action)
    case .signUp: nil
    }
  }

  public var embed: ((Primes.Action) -> App.Action)? {
    { action in
      switch action {
      case let .counter(action): .counter(action)
      case let .primeModal(action): .primeModal(action)
      case let .favoritePrimes(action): .favoritePrimes(action)
      }
    }
  }
}

extension Primes.Action: InternalActions {
  /// The internal actions of the three screens, by their paths in this action.
  public static let internalActions =
    Counter.Action.internalActions.map { "counter.\($0)" }
    + PrimeModal.Action.internalActions.map { "primeModal.\($0)" }
    + FavoritePrimes.Action.internalActions.map { "favoritePrimes.\($0)" }
}
