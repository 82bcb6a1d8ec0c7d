import PrimeTime
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime

/// What `Describe` says of a feature's actions, derived from the action enums (`@DescribedAction`):
/// no list to keep in step by hand.
@Suite struct ActionCasesTests {
  static let primeTime = Application(
    initialState: App.State(),
    features: [
      .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
      .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
      .actor("signUp", state: \.signUp, action: .case(\App.Action.Cases.signUp)) { SignUp() },
    ]
  )

  @Test func eachFeatureHasItsActionTypesCases() {
    let features = Self.primeTime.features
    #expect(features.map { $0.actionCases.map(\.name) } == [
      ["counter", "primeModal", "favoritePrimes"],
      ["added", "removed"],
      ["emailChanged", "passwordChanged", "submitTapped"],
    ])
    #expect(Counter.Action.actionCases.map(\.description) == [
      "decrTapped", "incrTapped", "nthPrimeButtonTapped", "nthPrimeResponse(n: Int, prime: Int?)",
      "cancelNthPrimeTapped", "alertDismissButtonTapped", "restarted",
    ])
    #expect(FavoritePrimes.Action.actionCases.first?.description == "deleteFavoritePrimes(IndexSet)")
  }

  /// `counter(Counter.Action)`: the payload lists the counter's cases; internal ones are marked
  /// at the path `InternalActions` names them by.
  @Test func theDescriptionNestsActionsAndMarksInternalCases() throws {
    let primes = Self.primeTime.features[0].describedCases
    let counter = try #require(primes[0])
    #expect(counter["name"] == "counter")
    #expect(counter["internal"] == false)
    let counterPayload = try #require(counter["payload"]?[0])
    #expect(counterPayload["type"] == "Counter.Action")
    #expect(counterPayload["label"] == nil)
    let counterCases = try #require(counterPayload["cases"])
    #expect(counterCases[0] == ["name": "decrTapped", "internal": false, "payload": []])
    #expect(
      counterCases[3] == [
        "name": "nthPrimeResponse", "internal": true,
        "payload": [["label": "n", "type": "Int"], ["label": "prime", "type": "Int?"]],
      ]
    )
    #expect(counterCases[6]?["internal"] == true, "counter.restarted")
    let favorites = try #require(primes[2]?["payload"]?[0]?["cases"])
    #expect(favorites[0] == ["name": "deleteFavoritePrimes", "internal": false, "payload": [["type": "IndexSet"]]])
    // favoritesChanged(FavoritesChange): internal itself, and so is everything below it.
    #expect(favorites[6]?["internal"] == true)
    #expect(favorites[6]?["payload"]?[0]?["cases"]?[0] == ["name": "added", "internal": true, "payload": [["type": "[Int]"]]])
    // The activity feed's whole action type is internal, case by case.
    #expect(Self.primeTime.features[1].describedCases == [
      ["name": "added", "internal": true, "payload": [["type": "[Int]"]]],
      ["name": "removed", "internal": true, "payload": [["type": "[Int]"]]],
    ])
  }

  /// A name in `internalActions` that matches no case protected nothing before; now the daemon
  /// refuses to start with it.
  @Test func anInternalActionThatNamesNoCaseIsRefused() {
    let application = Application(
      initialState: Host(),
      features: [.actor("sample", state: \.sample, action: .case(\HostAction.Cases.sample)) { SampleFeature() }]
    )
    #expect {
      try application.validate()
    } throws: { error in
      "\(error)".contains(#"feature "sample" declares internal actions that"#)
        && "\(error)".contains("counter.nthPrimeRespons, nope, counter.incrTapped.deeper; a name that matches no case protects nothing")
    }
  }

  /// What the check accepts: real cases at any depth, labels of labeled payloads, and anything
  /// below a payload whose type it cannot see into.
  @Test func theCheckFollowsPayloads() {
    let visibility = ActionVisibility(of: Sample.self)
    #expect(visibility.undeclaredInternalActions(in: Sample.actionCases) == ["counter.nthPrimeRespons", "nope", "counter.incrTapped.deeper"])
  }

  /// An action type without `@DescribedAction` has no cases to show, and nothing to check.
  @Test func anActionTypeWithoutTheMacroDescribesNothing() throws {
    let application = Application(
      initialState: PlainHost(),
      features: [.actor("plain", state: \.plain, action: .case(\PlainHostAction.Cases.plain)) { PlainFeature() }]
    )
    #expect(application.features[0].actionCases.isEmpty)
    #expect(application.features[0].describedCases == [])
    _ = try application.validate()
  }
}

@DescribedAction
private enum Sample: Codable, Sendable {
  case counter(Counter.Action)
  case labeled(first: Counter.Action, second: Int)
  case opaque(JSONValue)
}

extension Sample: InternalActions {
  static let internalActions = [
    "counter.nthPrimeResponse", "counter.nthPrimeRespons", "labeled.first.restarted", "labeled.second",
    "opaque.anything.at.all", "nope", "counter.incrTapped.deeper",
  ]
}

private struct SampleFeature: Reducer {
  func reduce(into state: inout Int, action: Sample) -> Effect<Sample> { .none }
}

private struct Host: Codable, Sendable { var sample = 0 }

@CasePathable
private enum HostAction: Codable, Sendable { case sample(Sample) }

private struct PlainFeature: Reducer {
  func reduce(into state: inout Int, action: PlainAction) -> Effect<PlainAction> { .none }
}

private enum PlainAction: Codable, Sendable { case tap }

private struct PlainHost: Codable, Sendable { var plain = 0 }

@CasePathable
private enum PlainHostAction: Codable, Sendable { case plain(PlainAction) }
