import Foundation

/// Runs `body`, which blocks its thread (a socket read, `waitpid`, a poll loop), on a thread of
/// its own and waits for it without holding one of the concurrency pool's threads.
///
/// The pool has as many threads as the machine has cores (two here). A test that blocks one while
/// it waits for something that itself needs the pool — an in-process server answering from a
/// task, a store that has to reduce — stops every test in the process once another test holds
/// the other thread, until a timeout lets go.
///
/// ```swift
/// let answer = try await offThePool { client.get("/metrics") }
/// ```
public func offThePool<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
  try await withCheckedThrowingContinuation { continuation in
    let thread = Thread { continuation.resume(with: Swift.Result { try body() }) }
    thread.name = "test-blocking"
    thread.start()
  }
}

/// ``offThePool(_:)`` for a body that cannot throw.
public func offThePool<Result: Sendable>(_ body: @escaping @Sendable () -> Result) async -> Result {
  await withCheckedContinuation { continuation in
    let thread = Thread { continuation.resume(returning: body()) }
    thread.name = "test-blocking"
    thread.start()
  }
}
