import CasePaths
import SwitchyardRuntime

/// Every feature of the benchmark's applications: a count, as PrimeTime's counter keeps it, with
/// the same action (`incrTapped`), so that the load tool's `Send` is the one it sends PrimeTime.
struct Tally: Reducer {
  struct State: Equatable, Codable, Sendable {
    var count = 0
  }

  @DescribedAction(decoding: .fromCases)
  enum Action: Equatable, Codable, Sendable {
    case incrTapped
    case decrTapped
  }

  var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .incrTapped: state.count += 1
      case .decrTapped: state.count -= 1
      }
      return .none
    }
  }
}
