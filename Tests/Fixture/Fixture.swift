import Foundation
import IdentifiedCollections
import SwitchyardCommands

/// `switchyard-fixture`: a daemon like `switchyardd`, hosting features that misbehave on purpose,
/// for tests of what the daemon does when a feature goes wrong. Declared only through
/// ``DaemonMain``, as any application's daemon is: its tests are also the tests of
/// that entry point (serve, worker processes, options, name and version).
///
/// - `tally`: a counter that behaves.
/// - `wedge`: `{"wedge": {"block": 2.5}}` blocks its actor's thread for that many seconds, as a
///   reducer stuck in a system call or a deadlock would.
/// - `alpha`, `beta`, `gamma`: three features in worker processes, in that order, that count,
///   append, trap (`{"alpha": {"trap": {}}}`), exit with a status, or trap later in an effect,
///   and count their restarts through their lifecycle action.
/// - `reminders`: durable timers: `{"reminders": {"remind": {"id": "tea", "after": 1.5}}}` notes
///   "tea" in `fired` once 1.5 seconds have passed, unless `{"reminders": {"cancel": {"id": "tea"}}}`;
///   a timer the daemon refuses (`timers.maxPending`) is noted in `refused`.
/// - `flags`: feature flags in an `IdentifiedArray`, each with the date it last changed, which
///   the action brings: `{"flags": {"add": {"id": "beta", "isOn": false, "changed": "2024-05-01T12:00:00Z"}}}`,
///   `{"flags": {"insertFirst": {…}}}`, `{"flags": {"set": {"id": "beta", "isOn": true, "at": "…"}}}`,
///   `{"flags": {"remove": "beta"}}`: for the client's typed paths, `\.flags[id: "beta"]`.
@main
struct SwitchyardFixture: DaemonMain {
  static let application = Application(
    initialState: FixtureState(),
    features: [
      .actor("tally", state: \.tally, action: .case(\FixtureAction.Cases.tally)) { Tally() },
      .actor("wedge", state: \.wedge, action: .case(\FixtureAction.Cases.wedge)) { Wedge() },
      .process("alpha", state: \.alpha, action: .case(\FixtureAction.Cases.alpha), afterRestart: .restarted) { Crashable() },
      .process("beta", state: \.beta, action: .case(\FixtureAction.Cases.beta), afterRestart: .restarted) { Crashable() },
      .process("gamma", state: \.gamma, action: .case(\FixtureAction.Cases.gamma), afterRestart: .restarted) { Crashable() },
      .actor("reminders", state: \.reminders, action: .case(\FixtureAction.Cases.reminders), timerRefused: { .refused($0) }) {
        Reminders()
      },
      .actor("flags", state: \.flags, action: .case(\FixtureAction.Cases.flags)) { Flags() },
    ]
  )
}

struct FixtureState: Codable, Equatable, Sendable {
  var tally = Tally.State()
  var wedge = Wedge.State()
  var alpha = Crashable.State()
  var beta = Crashable.State()
  var gamma = Crashable.State()
  var reminders = Reminders.State()
  var flags: Flags.State = []
}

@DescribedAction
enum FixtureAction: Codable, Equatable, Sendable {
  case tally(Tally.Action)
  case wedge(Wedge.Action)
  case alpha(Crashable.Action)
  case beta(Crashable.Action)
  case gamma(Crashable.Action)
  case reminders(Reminders.Action)
  case flags(Flags.Action)
}

/// A feature that fails on request, for the supervisor's tests.
struct Crashable: Reducer {
  struct State: Codable, Equatable, Sendable {
    var count = 0
    var log: [Int] = []
    var restarts = 0
  }

  @DescribedAction
  enum Action: Codable, Equatable, Sendable {
    case increment
    case append(Int)
    case trap
    case exit(Int32)
    case trapLater
    case restarted
    case block(Double)
    /// Counts once more after `after` seconds: a durable timer in a worker process.
    case remind(after: Double)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case .increment:
      state.count += 1
    case let .append(value):
      state.log.append(value)
    case .trap:
      fatalError("trapped on purpose")
    case let .exit(status):
      Foundation.exit(status)
    case .trapLater:
      return .run { _ in
        try await Task.sleep(for: .milliseconds(50))
        fatalError("an effect trapped on purpose")
      }
    case .restarted:
      state.restarts += 1
    case let .block(seconds):
      Thread.sleep(forTimeInterval: seconds)
    case let .remind(after):
      return .schedule(.increment, after: .milliseconds(Int(after * 1000)), id: "remind")
    }
    return .none
  }
}

struct Tally: Reducer {
  struct State: Codable, Equatable, Sendable {
    var count = 0
  }

  @DescribedAction
  enum Action: Codable, Equatable, Sendable {
    case increment
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    state.count += 1
    return .none
  }
}

struct Wedge: Reducer {
  struct State: Codable, Equatable, Sendable {
    var blocks = 0
  }

  @DescribedAction
  enum Action: Codable, Equatable, Sendable {
    case block(Double)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case let .block(seconds):
      // Blocks the thread, not just the task: the store's actor cannot run anything else.
      Thread.sleep(forTimeInterval: seconds)
      state.blocks += 1
      return .none
    }
  }
}

/// Durable timers: each reminder is noted in `fired` when it falls due, and in `refused` when
/// the daemon refused its timer (`timers.maxPending`).
struct Reminders: Reducer {
  struct State: Codable, Equatable, Sendable {
    var fired: [String] = []
    var refused: [String] = []
  }

  @DescribedAction
  enum Action: Codable, Equatable, Sendable {
    case remind(id: String, after: Double)
    case cancel(id: String)
    case due(String)
    case refused(String)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case let .remind(id, after):
      return .schedule(.due(id), after: .milliseconds(Int(after * 1000)), id: id)
    case let .cancel(id):
      return .cancel(id: id)
    case let .due(id):
      state.fired.append(id)
      return .none
    case let .refused(id):
      state.refused.append(id)
      return .none
    }
  }
}

/// Feature flags addressed by id, each with when it last changed.
struct Flags: Reducer {
  struct Flag: Codable, Equatable, Identifiable, Sendable {
    var id: String
    var isOn: Bool
    var changed: Date
  }

  typealias State = IdentifiedArrayOf<Flag>

  @CasePathable
  enum Action: Codable, Equatable, Sendable {
    case add(Flag)
    case insertFirst(Flag)
    case set(id: String, isOn: Bool, at: Date)
    case remove(String)
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action> {
    switch action {
    case let .add(flag):
      state.append(flag)
    case let .insertFirst(flag):
      state.insert(flag, at: 0)
    case let .set(id, isOn, at):
      state[id: id]?.isOn = isOn
      state[id: id]?.changed = at
    case let .remove(id):
      state.remove(id: id)
    }
    return .none
  }
}
