import CasePaths
import Dependencies
import SwitchyardRuntime

/// A flag's rollout in production: the share of subjects it is on for, set at once or raised
/// step by step by a ramp.
///
/// The ramp is an effect: it sleeps on the injected clock, computes each step's percentage and
/// sends it back as ``Action/advanced(to:)``. In a test a `TestClock` moves it; in the daemon it
/// runs on the real clock, and ``Release`` cancels it when the flag leaves production.
///
/// ```swift
/// // From 0 % to 50 %, 10 points every 5 minutes:
/// store.send(.startRamp(Ramp(target: 50, step: 10, intervalSeconds: 300)))
/// ```
public struct Rollout: Reducer {
  public struct State: Equatable, Codable, Sendable {
    /// The share of production subjects the flag is on for, 0 to 100.
    public var percent: Int
    /// The ramp raising ``percent``, while one runs.
    public var ramp: Ramp?

    public init(percent: Int = 0, ramp: Ramp? = nil) {
      self.percent = percent
      self.ramp = ramp
    }
  }

  @DescribedAction
  public enum Action: Equatable, Codable, Sendable {
    /// Sets the percentage at once, ending a ramp.
    case setPercent(Int)
    /// Raises the percentage to the ramp's target, a step at a time.
    case startRamp(Ramp)
    /// Ends the ramp where it is.
    case stopRamp
    /// Starts the ramp in the state again: its effect died with the process that ran it.
    case resumeRamp
    /// The ramp's next step, computed by its effect.
    case advanced(to: Int)
  }

  enum CancelID { case ramp }

  @Dependency(\.continuousClock) var clock

  public init() {}

  public var body: some ReducerOf<Self> {
    Reduce { state, action in
      switch action {
      case let .setPercent(percent):
        guard (0...100).contains(percent) else { return .none }
        state.percent = percent
        state.ramp = nil
        return .cancel(id: CancelID.ramp)

      case let .startRamp(ramp):
        guard ramp.isValid, ramp.target > state.percent else { return .none }
        state.ramp = ramp
        return self.run(ramp, from: state.percent)

      case .stopRamp:
        state.ramp = nil
        return .cancel(id: CancelID.ramp)

      case .resumeRamp:
        guard let ramp = state.ramp else { return .none }
        return self.run(ramp, from: state.percent)

      case let .advanced(percent):
        // A step already on its way when the ramp was stopped changes nothing.
        guard let ramp = state.ramp else { return .none }
        state.percent = percent
        if percent >= ramp.target { state.ramp = nil }
        return .none
      }
    }
  }

  /// The ramp's effect: one step each interval until the target, the percentage computed here.
  /// Starting a ramp again replaces the one running (`cancelInFlight`).
  private func run(_ ramp: Ramp, from start: Int) -> Effect<Action> {
    .run { [clock] send in
      var percent = start
      while percent < ramp.target {
        try await clock.sleep(for: .seconds(ramp.intervalSeconds))
        percent = ramp.step(after: percent)
        send(.advanced(to: percent))
      }
    }
    .cancellable(id: CancelID.ramp, cancelInFlight: true)
  }
}

/// How a ramp raises a rollout: to `target` percent, `step` points every `intervalSeconds`.
public struct Ramp: Equatable, Codable, Sendable {
  public var target: Int
  public var step: Int
  public var intervalSeconds: Int

  public init(target: Int, step: Int, intervalSeconds: Int) {
    self.target = target
    self.step = step
    self.intervalSeconds = intervalSeconds
  }

  /// Whether a client sent something a ramp can be: a target and a step from 1 to 100, an
  /// interval from a second to a day.
  public var isValid: Bool {
    (1...100).contains(self.target) && (1...100).contains(self.step) && (1...86_400).contains(self.intervalSeconds)
  }

  /// The percentage one step after `percent`: never past the target.
  public func step(after percent: Int) -> Int {
    min(percent + self.step, self.target)
  }
}

extension Rollout.Action: InternalActions {
  /// What the ramp's effect sends, and what the catalog sends after a restart.
  public static let internalActions = ["advanced", "resumeRamp"]
}
