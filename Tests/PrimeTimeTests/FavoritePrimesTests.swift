import Dependencies
import Foundation
import Testing

@testable import PrimeTime
@testable import SwitchyardRuntime

@MainActor
@Suite struct FavoritePrimesTests {
  @Test func deletingAtAnIndexSetRemovesThosePrimes() async {
    let store = TestStore(initialState: FavoritePrimes.State(favoritePrimes: [2, 3, 5, 7])) { FavoritePrimes() }
    await store.send(.deleteFavoritePrimes([0, 2])) { $0.favoritePrimes = [3, 7] }
    await store.receive(.favoritesChanged(.removed([2, 5])))
  }

  @Test func indicesOutOfRangeAreIgnored() async {
    let store = TestStore(initialState: FavoritePrimes.State(favoritePrimes: [2])) { FavoritePrimes() }
    await store.send(.deleteFavoritePrimes([4]))
  }

  @Test func saveThenLoadRoundTripsThroughFileStorage() async {
    let storage = FileStorage.inMemory()
    let store = TestStore(initialState: FavoritePrimes.State(favoritePrimes: [2, 3])) {
      FavoritePrimes()
    } withDependencies: {
      $0.fileStorage = storage
    }
    await store.send(.saveButtonTapped) { $0.storage.isBusy = true }
    await store.receive(.saved) { $0.storage.isBusy = false }
    await store.send(.deleteFavoritePrimes([0, 1])) { $0.favoritePrimes = [] }
    await store.receive(.favoritesChanged(.removed([2, 3])))
    await store.send(.loadButtonTapped) { $0.storage.isBusy = true }
    await store.receive(.loaded([2, 3])) {
      $0.favoritePrimes = [2, 3]
      $0.storage.isBusy = false
    }
    await store.receive(.favoritesChanged(.added([2, 3])))
  }

  @Test func loadingWithoutAFileReportsTheFailure() async {
    let store = TestStore(initialState: FavoritePrimes.State()) {
      FavoritePrimes()
    } withDependencies: {
      $0.fileStorage = .inMemory()
    }
    await store.send(.loadButtonTapped) { $0.storage.isBusy = true }
    await store.receive(.storageFailed("No file named favorite-primes.json")) {
      $0.storage.isBusy = false
      $0.storage.lastError = "No file named favorite-primes.json"
    }
  }

  @Test func theLiveStorageWritesRealFiles() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("primetime-\(UUID())")
    defer { try? FileManager.default.removeItem(at: directory) }
    let storage = FileStorage.directory(directory)
    try storage.save(Data("[2,3]".utf8), "favorites.json")
    #expect(try storage.load("favorites.json") == Data("[2,3]".utf8))
    #expect(throws: (any Error).self) { try storage.load("missing.json") }
  }
}
