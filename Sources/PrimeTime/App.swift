import CasePaths
import Foundation
import SwitchyardRuntime

/// PrimeTime, the demo application of the reference material, composed from its features.
///
/// The counter and the prime modal are pulled back along computed properties that assemble their
/// state from the app's fields; the activity feed listens, through a read-only `anyOf` route, to
/// the `favoritesChanged` actions that both the modal and the favorites screen send.
public struct App: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var count: Int
    public var favoritePrimes: [Int]
    public var alertNthPrime: PrimeAlert?
    public var isNthPrimeRequestInFlight: Bool
    public var storage: StorageStatus
    public var activityFeed: [Activity]
    public var signUp: SignUp.State

    public init(
      count: Int = 0,
      favoritePrimes: [Int] = [],
      alertNthPrime: PrimeAlert? = nil,
      isNthPrimeRequestInFlight: Bool = false,
      storage: StorageStatus = StorageStatus(),
      activityFeed: [Activity] = [],
      signUp: SignUp.State = SignUp.State()
    ) {
      self.count = count
      self.favoritePrimes = favoritePrimes
      self.alertNthPrime = alertNthPrime
      self.isNthPrimeRequestInFlight = isNthPrimeRequestInFlight
      self.storage = storage
      self.activityFeed = activityFeed
      self.signUp = signUp
    }

    /// The counter's view of the app.
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

  @CasePathable
  public enum Action: Equatable, Codable, Sendable {
    case counter(Counter.Action)
    case primeModal(PrimeModal.Action)
    case favoritePrimes(FavoritePrimes.Action)
    case signUp(SignUp.Action)
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
    Scope(state: \.activityFeed, action: .anyOf(\.primeModal.favoritesChanged, \.favoritePrimes.favoritesChanged)) {
      ActivityFeed()
    }
    Scope(state: \.signUp, action: \.signUp) {
      SignUp()
    }
  }
}
