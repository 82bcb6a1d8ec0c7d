import CasePaths
import SwitchyardRuntime

/// How far a flag is released: its state is an enum whose cases are the environments.
///
/// A flag starts in development, is promoted to staging, then to production, where a
/// ``Rollout`` decides what share of subjects it is on for. `ifCaseLet` runs the rollout only
/// while the release is in production: rolling back out of production ends the rollout, and
/// cancels a ramp in progress with it.
///
/// On the wire: `{"development":{}}`, `{"staging":{}}`, `{"production":{"percent":20}}`.
public struct Release: Reducer {
  @DescribedAction
  public enum State: Equatable, Codable, Sendable {
    /// On in development only.
    case development
    /// On in development and staging.
    case staging
    /// On in development and staging, and in production for the rollout's share of subjects.
    case production(Rollout.State)
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    /// On to the next environment; production starts at 0 %.
    case promote
    /// Back to the environment before.
    case rollBack
    /// The rollout's actions, for a flag in production.
    case production(Rollout.Action)
  }

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case .promote:
        switch state {
        case .development: state = .staging
        case .staging: state = .production(Rollout.State())
        case .production: break
        }
        return .none

      case .rollBack:
        switch state {
        case .development: break
        case .staging: state = .development
        case .production: state = .staging
        }
        return .none

      case .production:
        return .none
      }
    }
    .ifCaseLet(\.production, action: \.production) {
      Rollout()
    }
  }
}

extension Release.State {
  /// The last environment the flag is released to.
  public var environment: Environment {
    switch self {
    case .development: .development
    case .staging: .staging
    case .production: .production
    }
  }

  /// The rollout, when the flag is in production.
  public var rollout: Rollout.State? {
    guard case let .production(rollout) = self else { return nil }
    return rollout
  }
}

extension Release.Action: InternalActions {
  /// The rollout's internal actions, under `production`.
  public static let internalActions = Rollout.Action.internalActions.map { "production.\($0)" }
}
