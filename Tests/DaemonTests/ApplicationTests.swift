import CasePaths
import PrimeTime
import SwitchyardDaemon
import SwitchyardRuntime
import Testing

/// The checks the daemon makes before it starts an application.
@Suite struct ApplicationTests {
  @Test func primeTimeIsValid() throws {
    let application = Application(
      initialState: App.State(),
      features: [
        .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
        .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute) { ActivityFeed() },
      ]
    )
    let json = try application.validate()
    #expect(json["primes"]?["count"] == 0)
  }

  @Test func overlappingPartsAreRefused() {
    let application = Application(
      initialState: App.State(),
      features: [
        .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
        .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
      ]
    )
    #expect {
      try application.validate()
    } throws: { error in
      let error = error as? ApplicationError
      return error?.code == .overlappingStates && error?.feature == "primes"
        && "\(error!)".contains("own overlapping parts of the state")
    }
  }

  @Test func aNameThatIsNotTheKeyPathsPropertyIsRefused() {
    let application = Application(
      initialState: App.State(),
      features: [
        .actor("signUp", state: \.primes, action: App.primesRoute) { Primes() }
      ]
    )
    #expect {
      try application.validate()
    } throws: { error in
      "\(error)".contains("its state key path leads to another part of the state")
    }
    let missing = Application(
      initialState: App.State(),
      features: [.actor("nowhere", state: \.primes, action: App.primesRoute) { Primes() }]
    )
    #expect {
      try missing.validate()
    } throws: { error in
      (error as? ApplicationError)?.code == .stateKeyPathMismatch && "\(error)".contains("the state has no such key")
    }
  }
}
