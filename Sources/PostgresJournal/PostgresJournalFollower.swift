import Logging
import PostgresNIO
import SwitchyardJournal

/// A standby's reading of the journal a leader writes: every change after a cursor, in order,
/// as the leader commits them, without taking the lease.
///
/// NOTIFY is the wake-up, the table the truth: it LISTENs on a connection of its own first, then
/// reads `WHERE seq > cursor` until it has everything, and again at each notification. The one
/// writer gives each change `last_seq + 1` inside its transaction, so seq order is commit order
/// and a read never passes a change still to commit. After a lost connection it connects again,
/// LISTENs again and catches up from its cursor: nothing is missed and nothing given twice.
///
/// ```swift
/// let follower = PostgresJournalFollower(settings, logger: logger)
/// try await follower.follow(after: recovered.seq) { changes in await standby.apply(changes) }
/// ```
package final class PostgresJournalFollower: Sendable {
  /// The channel each append notifies as it commits, with its last seq.
  static let channel = "switchyard_journal"

  private let client: PostgresClient
  private let logger: Logger

  package init(_ settings: PostgresConnectionSettings, logger: Logger) {
    self.client = PostgresClient(
      configuration: settings.clientConfiguration(parameters: [("application_name", "switchyard-follower")]),
      eventLoopGroup: PostgresJournal.eventLoops, backgroundLogger: logger
    )
    self.logger = logger
  }

  /// Hands `deliver` every change after `cursor`, a page at a time and in order, as they are
  /// committed, until the task is cancelled; after a failure it tries again `retryAfter` later.
  package func follow(
    after cursor: UInt64, retryAfter: Duration = .milliseconds(500), _ deliver: @Sendable ([JournaledChange]) async throws -> Void
  ) async {
    let (started, starting) = AsyncStream<Void>.makeStream()
    let running = Task {
      starting.finish()
      await self.client.run()
    }
    defer { running.cancel() }
    for await _ in started {}
    var cursor = cursor
    while !Task.isCancelled {
      do {
        try await self.client.withConnection { connection in
          try await connection.listen(on: Self.channel) { notifications in
            cursor = try await self.catchUp(after: cursor, on: connection, deliver)
            for try await _ in notifications {
              cursor = try await self.catchUp(after: cursor, on: connection, deliver)
            }
          }
        }
      } catch {
        guard !Task.isCancelled else { return }
        self.logger.warning(
          "lost the journal's leader's changes: following again", metadata: ["after": "\(cursor)", "error": "\(String(reflecting: error))"]
        )
        try? await Task.sleep(for: retryAfter)
      }
    }
  }

  /// Reads and delivers every change after `cursor` there is; the last one's seq.
  private func catchUp(
    after cursor: UInt64, on connection: PostgresConnection, _ deliver: @Sendable ([JournaledChange]) async throws -> Void
  ) async throws -> UInt64 {
    var cursor = cursor
    while true {
      let page = try await PostgresJournal.page(after: cursor, through: nil, feature: nil, on: connection, logger: self.logger)
      guard let last = page.last else { return cursor }
      try await deliver(page)
      cursor = last.seq
    }
  }
}
