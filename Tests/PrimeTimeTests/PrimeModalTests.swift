import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

@MainActor
@Suite struct PrimeModalTests {
  @Test func savingAPrimeAddsItAndTellsListeners() async {
    let store = TestStore(initialState: PrimeModal.State(count: 7, favoritePrimes: [2])) { PrimeModal() }
    #expect(store.state.isPrime && !store.state.isFavorite)
    await store.send(.saveFavoritePrimeTapped) { $0.favoritePrimes = [2, 7] }
    await store.receive(.favoritesChanged(.added([7])))
  }

  @Test func removingAFavoriteRemovesItAndTellsListeners() async {
    let store = TestStore(initialState: PrimeModal.State(count: 7, favoritePrimes: [2, 7, 11])) { PrimeModal() }
    await store.send(.removeFavoritePrimeTapped) { $0.favoritePrimes = [2, 11] }
    await store.receive(.favoritesChanged(.removed([7])))
  }

  @Test func nonPrimesAndDuplicatesAreNotSaved() async {
    let store = TestStore(initialState: PrimeModal.State(count: 8, favoritePrimes: [])) { PrimeModal() }
    await store.send(.saveFavoritePrimeTapped)
    let favorite = TestStore(initialState: PrimeModal.State(count: 3, favoritePrimes: [3])) { PrimeModal() }
    await favorite.send(.saveFavoritePrimeTapped)
    await favorite.send(.removeFavoritePrimeTapped) { $0.favoritePrimes = [] }
    await favorite.receive(.favoritesChanged(.removed([3])))
    await favorite.send(.removeFavoritePrimeTapped)
  }
}
