import ConcurrencyExtras
import NIOCore
import NIOPosix
import SwitchyardSynchronization
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime

/// The drains stores on one loop ask for while the loop routes a call: run when the routing is
/// done, in the same pass, outside the router's lock; anywhere else, on the loop as before.
@Suite(.timeLimit(.minutes(1))) struct LoopDrainsTests {
  /// Logs the actions it reduces, in order; an action in `sending` sends the action it maps to.
  static func log(on loop: any EventLoop, drains: LoopDrains, sending: [Int: Int] = [:]) -> Store<[Int], Int> {
    Store(initialState: [Int](), executor: EventLoopStoreExecutor(loop, drains: drains)) {
      Reduce<[Int], Int> { log, n in
        log.append(n)
        return sending[n].map { .send($0) } ?? .none
      }
    }
  }

  @Test func aDrainAskedForWhileTheLoopRoutesRunsWhenTheRoutingIsDoneOutsideItsLock() async throws {
    // What a `Send` read on the loop gets: reduced before the routing returns, in the same pass,
    // yet after the router's lock is released — so an effect that routes an action of its own
    // takes the lock like anyone else instead of waiting for itself.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let drains = LoopDrains(loop: loop)
    let routing = Mutex(())
    let routedByEffects = LockIsolated<[Int]>([])
    let store = Store(
      initialState: [Int](), executor: EventLoopStoreExecutor(loop, drains: drains),
      reducer: {
        Reduce<[Int], Int> { log, n in
          log.append(n)
          return n == 1 ? .send(10) : .none
        }
      },
      effectActions: { n in routing.withLock { _ in routedByEffects.withValue { $0.append(n) } } }
    )
    let seen = try await loop.submit {
      let versions = LockIsolated<[UInt64]>([])
      let insideTheRouting = drains.collecting {
        routing.withLock { _ in store.enqueue(1) { version in versions.withValue { $0.append(version) } } }
        return versions.value
      }
      return (insideTheRouting, versions.value, store.assumeIsolated { $0.state })
    }.get()
    #expect(seen.0.isEmpty, "queued while the routing holds its lock")
    #expect(seen.1 == [1], "reduced by the time the routing returned")
    #expect(seen.2 == [1])
    #expect(routedByEffects.value == [10], "the effect's action was routed, the lock free")
    try await group.shutdownGracefully()
  }

  @Test func offTheLoopOrOutsideARoutingADrainGoesToTheLoop() async throws {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let drains = LoopDrains(loop: loop)
    let store = EventLoopStoreExecutorTests.counter(on: loop, drains: drains)
    let reducedAtOnce = try await loop.submit {
      store.enqueue(5)
      return store.assumeIsolated { $0.state.sum }
    }.get()
    #expect(reducedAtOnce == 0, "no routing open: the drain waits for the loop's next turn")
    let collectedOffTheLoop = drains.collecting {
      store.enqueue(7)
      return true
    }
    #expect(collectedOffTheLoop)
    #expect(await store.send(0) == 3)
    #expect(await store.state.sum == 12)
    try await group.shutdownGracefully()
  }

  @Test func anActionEnqueuedOnTheLoopWhileTheStoreIsIdleSkipsTheMailboxAndWhatFollowsQueuesBehindIt() async throws {
    // The first waits in the store itself, not in the mailbox; the second queues behind it, and
    // the action 1's effect sends goes behind both, as with any mailbox.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let drains = LoopDrains(loop: loop)
    let store = Self.log(on: loop, drains: drains, sending: [1: 10])
    let depths = try await loop.submit {
      drains.collecting {
        store.enqueue(1)
        let afterFirst = store.mailboxDepth
        store.enqueue(2)
        return [afterFirst, store.mailboxDepth]
      }
    }.get()
    #expect(depths == [0, 1], "the first skipped the mailbox, the second waits there")
    #expect(await store.state == [1, 2, 10], "the effect's action after what was queued before it")
    try await group.shutdownGracefully()
  }

  @Test func anActionHandedOverBeforeARoutingIsNotOvertakenByOneHandedOverInIt() async throws {
    // 1 comes from the loop outside any routing (a timer, an effect routed on the loop) and waits
    // for the loop's next task; 2 is routed after it, so it must be reduced after it too.
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let loop = group.next()
    let drains = LoopDrains(loop: loop)
    let store = Self.log(on: loop, drains: drains)
    try await loop.submit {
      store.enqueue(1)
      drains.collecting { store.enqueue(2) }
    }.get()
    #expect(await store.state == [1, 2])
    #expect(await store.send(3) == 3, "send reduces after what was handed over before it")
    #expect(await store.state == [1, 2, 3])
    try await group.shutdownGracefully()
  }
}
