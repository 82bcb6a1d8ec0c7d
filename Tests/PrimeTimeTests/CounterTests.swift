import Dependencies
import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

@MainActor
@Suite struct CounterTests {
  @Test func incrementAndDecrement() async {
    let store = TestStore(initialState: Counter.State()) { Counter() }
    await store.send(.incrTapped) { $0.count = 1 }
    await store.send(.incrTapped) { $0.count = 2 }
    await store.send(.decrTapped) { $0.count = 1 }
  }

  @Test func nthPrimeShowsAnAlertAndDisablesTheButtonWhileItRuns() async {
    let store = TestStore(initialState: Counter.State(count: 5)) {
      Counter()
    } withDependencies: {
      $0.primeClient.nthPrime = { try await PrimeTime.nthPrime($0) }
    }
    await store.send(.nthPrimeButtonTapped) {
      $0.isNthPrimeRequestInFlight = true
      #expect($0.isNthPrimeButtonDisabled)
    }
    await store.receive(.nthPrimeResponse(n: 5, prime: 11)) {
      $0.isNthPrimeRequestInFlight = false
      $0.alertNthPrime = PrimeAlert(n: 5, prime: 11)
    }
    #expect(store.state.alertNthPrime?.title == "The 5th prime is 11")
    await store.send(.alertDismissButtonTapped) { $0.alertNthPrime = nil }
  }

  @Test func aRestartRunsTheRequestThatWasInFlightAgain() async {
    let store = TestStore(initialState: Counter.State(count: 6, isNthPrimeRequestInFlight: true)) {
      Counter()
    } withDependencies: {
      $0.primeClient.nthPrime = { try await PrimeTime.nthPrime($0) }
    }
    await store.send(.restarted)
    await store.receive(.nthPrimeResponse(n: 6, prime: 13)) {
      $0.isNthPrimeRequestInFlight = false
      $0.alertNthPrime = PrimeAlert(n: 6, prime: 13)
    }
  }

  @Test func aRestartWithNoRequestInFlightDoesNothing() async {
    let store = TestStore(initialState: Counter.State(count: 6)) { Counter() }
    await store.send(.restarted)
  }

  @Test func tappingAgainWhileARequestRunsDoesNothing() async {
    let gate = AsyncStream.makeStream(of: Int?.self)
    let store = TestStore(initialState: Counter.State(count: 3)) {
      Counter()
    } withDependencies: {
      $0.primeClient.nthPrime = { _ in
        for await prime in gate.stream { return prime }
        return nil
      }
    }
    await store.send(.nthPrimeButtonTapped) { $0.isNthPrimeRequestInFlight = true }
    await store.send(.nthPrimeButtonTapped)
    gate.continuation.yield(5)
    await store.receive(.nthPrimeResponse(n: 3, prime: 5)) {
      $0.isNthPrimeRequestInFlight = false
      $0.alertNthPrime = PrimeAlert(n: 3, prime: 5)
    }
  }

  @Test func theRequestCanBeCancelled() async {
    let store = TestStore(initialState: Counter.State(count: 1_000_000)) {
      Counter()
    } withDependencies: {
      $0.primeClient.nthPrime = { try await PrimeTime.nthPrime($0) }
    }
    await store.send(.nthPrimeButtonTapped) { $0.isNthPrimeRequestInFlight = true }
    await store.send(.cancelNthPrimeTapped) { $0.isNthPrimeRequestInFlight = false }
    await store.finish()
  }

  @Test func primes() async throws {
    #expect((0...30).filter(isPrime) == [2, 3, 5, 7, 11, 13, 17, 19, 23, 29])
    #expect(try await nthPrime(1) == 2)
    #expect(try await nthPrime(1_000) == 7_919)
    #expect(try await nthPrime(0) == nil)
    #expect(ordinal(1) == "1st" && ordinal(12) == "12th" && ordinal(22) == "22nd" && ordinal(103) == "103rd")
  }
}
