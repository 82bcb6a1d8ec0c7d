import Dependencies
import Foundation
import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

@MainActor
@Suite struct AppTests {
  let now = Date(timeIntervalSince1970: 1_700_000_000)

  func makeStore(_ state: App.State = App.State()) -> TestStore<App.State, App.Action> {
    TestStore(initialState: state) {
      App()
    } withDependencies: { [now] in
      $0.date.now = now
      $0.fileStorage = .inMemory()
    }
  }

  @Test func countToAPrimeSaveItAndSeeItInTheFeed() async {
    let store = self.makeStore()
    await store.send(.counter(.incrTapped)) { $0.primes.count = 1 }
    await store.send(.counter(.incrTapped)) { $0.primes.count = 2 }
    await store.send(.primeModal(.saveFavoritePrimeTapped)) { $0.primes.favoritePrimes = [2] }
    await store.receive(.primeModal(.favoritesChanged(.added([2])))) {
      $0.activityFeed = [Activity(timestamp: self.now, kind: .addedFavoritePrime(2))]
    }
  }

  @Test func deletingFromTheFavoritesScreenIsRecordedToo() async {
    let store = self.makeStore(App.State(primes: Primes.State(count: 3, favoritePrimes: [2, 3, 5])))
    await store.send(.favoritePrimes(.deleteFavoritePrimes([1]))) { $0.primes.favoritePrimes = [2, 5] }
    await store.receive(.favoritePrimes(.favoritesChanged(.removed([3])))) {
      $0.activityFeed = [Activity(timestamp: self.now, kind: .removedFavoritePrime(3))]
    }
    await store.send(.primeModal(.saveFavoritePrimeTapped)) { $0.primes.favoritePrimes = [2, 5, 3] }
    await store.receive(.primeModal(.favoritesChanged(.added([3])))) {
      $0.activityFeed.append(Activity(timestamp: self.now, kind: .addedFavoritePrime(3)))
    }
  }

  @Test func theCounterAndTheModalShareTheCount() async {
    let store = self.makeStore(App.State(primes: Primes.State(count: 4)))
    await store.send(.counter(.decrTapped)) { $0.primes.count = 3 }
    #expect(store.state.primes.primeModal.isPrime)
    #expect(store.state.primes.counter.count == 3)
  }

  @Test func theNthPrimeEffectIsEmbeddedBackIntoAppActions() async {
    let store = TestStore(initialState: App.State(primes: Primes.State(count: 6))) {
      App()
    } withDependencies: {
      $0.primeClient.nthPrime = { try await nthPrime($0) }
    }
    await store.send(.counter(.nthPrimeButtonTapped)) { $0.primes.isNthPrimeRequestInFlight = true }
    await store.receive(.counter(.nthPrimeResponse(n: 6, prime: 13))) {
      $0.primes.isNthPrimeRequestInFlight = false
      $0.primes.alertNthPrime = PrimeAlert(n: 6, prime: 13)
    }
  }

  @Test func theWholeAppRunsInARealStoreAndPublishesPatches() async throws {
    let store = Store(initialState: App.State(primes: Primes.State(count: 1))) {
      App()
    } withDependencies: { [now] in
      $0.date.now = now
      $0.fileStorage = .inMemory()
    }
    let (snapshot, changes) = try await store.changes()
    var replica = snapshot.json
    await store.send(.counter(.incrTapped))
    await store.send(.primeModal(.saveFavoritePrimeTapped))
    var iterator = changes.makeAsyncIterator()
    for _ in 0..<3 {
      try #require(await iterator.next()).patch.apply(to: &replica)
    }
    let state = await store.state
    #expect(state.primes.favoritePrimes == [2])
    #expect(state.activityFeed.count == 1)
    let expected = try JSONValueEncoder().encode(state)
    #expect(replica == expected)
  }

  @Test func thePrimesRouteRoundTrips() {
    let actions: [App.Action] = [.counter(.incrTapped), .primeModal(.saveFavoritePrimeTapped), .favoritePrimes(.saved)]
    for action in actions {
      let local = App.primesRoute.extract(from: action)
      #expect(local.flatMap(App.primesRoute.embed!) == action)
    }
    #expect(App.primesRoute.extract(from: .signUp(.submitTapped)) == nil)
  }
}
