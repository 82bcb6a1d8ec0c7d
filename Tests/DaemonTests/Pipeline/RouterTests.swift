import CasePaths
import Foundation
import Logging
import NIOCore
import PrimeTime
import SwitchyardSynchronization
import SwitchyardTestSupport
import SwitchyardWorkers
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime
@testable import SwitchyardSystemd

/// The router, in process: routing, ordering and numbering, without the socket in between.
@Suite struct RouterTests {
  /// Starts `features` of PrimeTime the way the daemon does.
  func start(_ features: [Feature<App.State, App.Action>]) async throws -> RunningFeatures {
    try await RunningFeatures.start(
      Application(initialState: App.State(), features: features),
      configuration: DaemonConfiguration(),
      launch: WorkerLaunch(logLevel: SharedLogLevel(.info)),
      encodeChange: { seq, patch in
        ByteBuffer(bytes: JSONValue.object(["seq": .int(Int64(seq)), "patch": patch.jsonValue]).serializedBytes())
      },
      logger: Logger(label: "test")
    )
  }

  @Test func anActionNoRouteTakesIsAnError() async throws {
    let hosted = try await self.start([.actor("primes", state: \.primes, action: App.primesRoute) { Primes() }])
    await #expect(throws: RouterError.actionNotRouted(index: 1)) {
      try await hosted.router.send([App.Action.counter(.incrTapped), .signUp(.submitTapped), .counter(.incrTapped)])
    }
    // The actions before the refused one were routed; the ones after it were not.
    #expect(hosted.changeLog.get(JSONPointer(tokens: ["primes", "count"]))?.value == 1)
  }

  @Test func everyChangeGetsTheNextSequenceNumberAndTheComposedStateFollows() async throws {
    let hosted = try await self.start([
      .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
      .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute, withDependencies: {
        $0.date.now = Date(timeIntervalSince1970: 0)
      }) { ActivityFeed() },
      .actor("signUp", state: \.signUp, action: .case(\App.Action.Cases.signUp)) { SignUp() },
    ])
    let subscriber = try hosted.changeLog.subscribe(to: .root, since: nil, queueLimit: 1_000)
    guard case let .snapshot(0, initial) = await polled({ subscriber.take(limit: 1).first }) else {
      Issue.record("expected a snapshot at 0")
      return
    }
    var replica = initial
    let seq = try await hosted.router.send(
      [App.Action.counter(.incrTapped), .counter(.incrTapped), .signUp(.emailChanged("a@b.c")), .primeModal(.saveFavoritePrimeTapped)]
    )
    #expect(seq >= 4)
    var last: UInt64 = 0
    // The modal's effect reaches the activity feed through the router: one more change.
    while last < 5 {
      guard case let .encoded(next, bytes) = await polled({ subscriber.take(limit: 1).first }) else {
        Issue.record("expected a patch")
        return
      }
      #expect(next == last + 1)
      last = next
      let message = try bytes.withUnsafeReadableBytes { try JSONValue(parsing: $0) }
      try JSONPatch(jsonValue: message["patch"] ?? []).apply(to: &replica)
    }
    #expect(replica == hosted.changeLog.get()?.value)
    #expect(replica["activityFeed"]?[0]?["kind"] == ["addedFavoritePrime": 2])
    hosted.subscriptions.remove(subscriber)
    #expect(hosted.subscriptions.count == 0)
  }

  @Test func everyFeatureSeesActionsInTheOrderTheRouterRoutedThem() async throws {
    let hosted = try await self.start([
      .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
      .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute, withDependencies: {
        $0.date.now = Date(timeIntervalSince1970: 0)
      }) { ActivityFeed() },
    ])
    let router = hosted.router
    // Many senders at once: whatever order the router picks, the feed and the favorites agree.
    await withTaskGroup(of: Void.self) { group in
      for n in [2, 3, 5, 7, 11, 13] {
        group.addTask {
          _ = try? await router.send([App.Action.favoritePrimes(.loaded([n]))])
        }
      }
    }
    try await Task.sleep(for: .milliseconds(100))
    let state = try #require(hosted.changeLog.get()?.value)
    #expect(state["primes"]?["favoritePrimes"]?[0] == state["activityFeed"]?.lastAdded)
  }
}

extension JSONValue {
  /// The prime of the last `addedFavoritePrime` entry of an activity feed.
  fileprivate var lastAdded: JSONValue? {
    guard case let .array(entries) = self else { return nil }
    return entries.last { $0["kind"]?["addedFavoritePrime"] != nil }?["kind"]?["addedFavoritePrime"]
  }
}

/// Which features the router offers an action to, when the application's action tells its case:
/// the features whose routes name the case and those whose routes cannot tell, in declaration
/// order, and no other.
@Suite struct RouterCasesTests {
  @DescribedAction enum Action: Equatable, Sendable { case a(Int), b(Int), c(Int) }

  struct Host: FeatureHost {
    let name: String
    var mailboxDepth: Int { 0 }
    func probe(_ answered: @escaping @Sendable () -> Void) { answered() }
    func stop() async {}
  }

  /// The names of the features offered each action, in the order they were offered it.
  final class Offered: Sendable {
    let names = Mutex<[String]>([])
  }

  /// Features named after the cases their routes name (`any` names none), which record each
  /// offer and take nothing.
  func router(describing: Bool) -> (Router, Offered) {
    let offered = Offered()
    let features = [("a", [0]), ("any", nil), ("b", [1]), ("ab", [0, 1])].map { name, cases in
      var feature = RoutedFeature(
        host: Host(name: name),
        offer: { _, _, _, _ in
          offered.names.withLock { $0.append(name) }
          return false
        },
        internalAction: nil
      )
      feature.rootCases = cases
      return feature
    }
    let router = Router()
    router.attach(features, caseOf: describing ? RoutedAction.caseIndexer(of: Action.self) : nil)
    return (router, offered)
  }

  func offers(_ action: Action, _ router: Router, _ offered: Offered) -> [String] {
    offered.names.withLock { $0 = [] }
    _ = RoutedAction.with(action) { router.route($0) }
    return offered.names.withLock { $0 }
  }

  @Test func anActionGoesOnlyToTheFeaturesOfItsCaseAndThoseThatCannotTell() {
    let (router, offered) = self.router(describing: true)
    #expect(self.offers(.a(1), router, offered) == ["a", "any", "ab"])
    #expect(self.offers(.b(1), router, offered) == ["any", "b", "ab"])
    // A case no route names.
    #expect(self.offers(.c(1), router, offered) == ["any"])
  }

  @Test func withoutCasesEveryFeatureIsOfferedEveryAction() {
    let (router, offered) = self.router(describing: false)
    for action in [Action.a(1), .b(1), .c(1)] {
      #expect(self.offers(action, router, offered) == ["a", "any", "b", "ab"])
    }
  }
}
