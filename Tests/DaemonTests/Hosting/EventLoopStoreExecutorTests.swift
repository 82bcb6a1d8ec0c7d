import ConcurrencyExtras
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime

/// A NIO event loop as a store's executor: the store's isolation is the loop's.
@Suite(.timeLimit(.minutes(1))) struct EventLoopStoreExecutorTests {
  /// Counts to the sum of its actions, and the actions it reduced anywhere but on `loop`.
  static func counter(on loop: any EventLoop, drains: LoopDrains? = nil) -> Store<Tally, Int> {
    Store(initialState: Tally(), executor: EventLoopStoreExecutor(loop, drains: drains)) {
      Reduce<Tally, Int> { state, n in
        state.sum += n
        if !loop.inEventLoop { state.offTheLoop += 1 }
        return .none
      }
    }
  }

  struct Tally: Equatable, Codable, Sendable {
    var sum = 0
    var offTheLoop = 0
  }

  @Test func actionsEnqueuedFromAnywhereAreReducedOnTheLoop() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let store = Self.counter(on: loop)
    let answeredOnTheLoop = LockIsolated(false)
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      for n in 1...1_000 { store.enqueue(n) }
      store.probe {
        answeredOnTheLoop.setValue(loop.inEventLoop)
        done.resume()
      }
    }
    #expect(answeredOnTheLoop.value)
    #expect(await store.send(1) == 1_001)
    #expect(await store.state == Tally(sum: 500_501, offTheLoop: 0))
    try await group.shutdownGracefully()
  }

  @Test func codeTheLoopRunsHoldsTheStoresIsolation() async throws {
    // What a channel handler on the loop can do: reduce at once, synchronously.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let store = Self.counter(on: loop)
    let state = try await loop.submit {
      store.assumeIsolated { store in
        store.send(2)
        store.send(3)
        return store.state
      }
    }.get()
    #expect(state == Tally(sum: 5, offTheLoop: 0))
    try await group.shutdownGracefully()
  }
}
