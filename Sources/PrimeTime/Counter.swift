import CasePaths
import Dependencies
import SwitchyardRuntime

/// The counter screen: a count, and "what is the nth prime?" computed by an effect.
public struct Counter: Reducer {
  public struct State: Equatable, Codable, Sendable {
    public var count: Int
    public var alertNthPrime: PrimeAlert?
    public var isNthPrimeRequestInFlight: Bool

    public init(count: Int = 0, alertNthPrime: PrimeAlert? = nil, isNthPrimeRequestInFlight: Bool = false) {
      self.count = count
      self.alertNthPrime = alertNthPrime
      self.isNthPrimeRequestInFlight = isNthPrimeRequestInFlight
    }

    /// The nth-prime button is disabled while a request runs.
    public var isNthPrimeButtonDisabled: Bool { self.isNthPrimeRequestInFlight }
  }

  @DescribedAction(decoding: .fromCases)
  public enum Action: Equatable, Codable, Sendable {
    case decrTapped
    case incrTapped
    case nthPrimeButtonTapped
    case nthPrimeResponse(n: Int, prime: Int?)
    case cancelNthPrimeTapped
    case alertDismissButtonTapped
    /// The feature's worker process was restarted: a request that was in flight died with the
    /// old one, so it starts again.
    case restarted
  }

  enum CancelID { case nthPrime }

  @Dependency(\.primeClient) var primeClient

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .decrTapped:
        state.count -= 1
        return .none

      case .incrTapped:
        state.count += 1
        return .none

      case .nthPrimeButtonTapped:
        guard !state.isNthPrimeRequestInFlight else { return .none }
        state.isNthPrimeRequestInFlight = true
        return self.requestNthPrime(state.count)

      case .restarted:
        guard state.isNthPrimeRequestInFlight else { return .none }
        return self.requestNthPrime(state.count)

      case let .nthPrimeResponse(n, prime):
        state.isNthPrimeRequestInFlight = false
        state.alertNthPrime = prime.map { PrimeAlert(n: n, prime: $0) }
        return .none

      case .cancelNthPrimeTapped:
        state.isNthPrimeRequestInFlight = false
        return .cancel(id: CancelID.nthPrime)

      case .alertDismissButtonTapped:
        state.alertNthPrime = nil
        return .none
      }
    }
  }
}

extension Counter {
  private func requestNthPrime(_ n: Int) -> Effect<Action> {
    .run { [primeClient] send in
      send(.nthPrimeResponse(n: n, prime: try await primeClient.nthPrime(n)))
    }
    .cancellable(id: CancelID.nthPrime, cancelInFlight: true)
  }
}

/// "The 5th prime is 11."
public struct PrimeAlert: Equatable, Codable, Sendable {
  public var n: Int
  public var prime: Int

  public init(n: Int, prime: Int) {
    self.n = n
    self.prime = prime
  }

  public var title: String { "The \(ordinal(self.n)) prime is \(self.prime)" }
}

func ordinal(_ n: Int) -> String {
  let suffix: String
  switch (n % 10, n % 100) {
  case (_, 11...13): suffix = "th"
  case (1, _): suffix = "st"
  case (2, _): suffix = "nd"
  case (3, _): suffix = "rd"
  default: suffix = "th"
  }
  return "\(n)\(suffix)"
}

extension Counter.Action: InternalActions {
  /// The answer to a request, and the restart notice only the daemon sends.
  public static let internalActions = ["nthPrimeResponse", "restarted"]
}
