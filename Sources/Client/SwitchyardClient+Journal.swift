import Foundation
import SwitchyardJSON
import SwitchyardVarlink

/// One change as the daemon's journal keeps it (`io.switchyard.Store.JournalEntry`).
public struct JournalEntry: Sendable, Equatable, Codable {
  public var seq: UInt64
  /// The feature that made it.
  public var feature: String?
  /// When, in seconds since 1970.
  public var time: Double
  /// Where its action came from: `request`, `effect` or `restart`.
  public var origin: String?
  /// The global action reduced, when the journal can tell it.
  public var action: JSONValue?
  /// The process that sent the request.
  public var uid: UInt32?
  public var pid: Int32?
  /// The client certificate's name, for a request that came over TLS.
  public var certificate: String?
  /// The patch, from the root of the state.
  public var patch: JSONPatch
}

/// What `Replay` found (`io.switchyard.Store.Replay`): the journaled actions reduced again
/// through the reducers the daemon runs now.
public struct ReplayReport: Sendable, Equatable, Codable {
  /// The first change that did not come out as journaled.
  public struct Difference: Sendable, Equatable, Codable {
    public var seq: UInt64
    public var feature: String
    public var action: JSONValue
    public var journaled: JSONPatch
    public var replayed: JSONPatch?
    public var reason: String
  }

  /// The state replay started from, and the last change it looked at.
  public var from: UInt64
  public var to: UInt64
  public var replayed: Int
  /// Changes whose action the journal cannot tell: applied as journaled.
  public var skipped: Int
  public var difference: Difference?
}

extension SwitchyardClient {
  /// The part of the state at a JSON Pointer as it was at `seq`, rebuilt by the daemon from its
  /// journal.
  ///
  /// ```swift
  /// let (_, count) = try await client.get("/primes/count", at: 42)
  /// ```
  ///
  /// - Throws: ``SwitchyardError/seqNotRetained(seq:oldest:latest:)`` when the journal no
  ///   longer holds that state (or not yet), ``SwitchyardError/noJournal`` without a journal.
  public func get(_ pointer: JSONPointer, at seq: UInt64) async throws -> (seq: UInt64, state: JSONValue) {
    var parameters: JSONObject = ["at": .int(Int64(seq))]
    if !pointer.isRoot { parameters["path"] = .string(pointer.description) }
    let reply = try await self.call(method: StoreInterface.Method.get.qualifiedName, parameters: parameters)
    guard case let .int(at)? = reply["seq"], let state = reply["state"] else {
      throw SwitchyardConnectionError.malformedReply("Get replied without \"seq\" and \"state\": \(reply.serialized())")
    }
    return (UInt64(at), state)
  }

  /// A page of the journal: the entries after `since` (after the oldest held without it) up to
  /// `until`, of `feature` only when named, and the `since` of the next page while there may be
  /// more.
  ///
  /// ```swift
  /// var page = try await client.journal(since: 0)
  /// while let next = page.next { page = try await client.journal(since: next) }
  /// ```
  public func journal(
    since: UInt64? = nil, until: UInt64? = nil, feature: String? = nil, limit: Int? = nil
  ) async throws -> (entries: [JournalEntry], next: UInt64?) {
    let reply = try await self.call(
      method: StoreInterface.Method.journal.qualifiedName,
      parameters: Self.journalParameters(since: since, until: until, feature: feature, limit: limit)
    )
    return try Self.page(reply)
  }

  /// Every journal entry after `since`, then every new one as the daemon journals it, on a
  /// connection of its own; it ends when the task iterating it is cancelled, or with `until`.
  ///
  /// ```swift
  /// for try await entry in client.followJournal(since: 100) {
  ///   print(entry.seq, entry.action ?? "an effect's change")
  /// }
  /// ```
  public func followJournal(
    since: UInt64? = nil, until: UInt64? = nil, feature: String? = nil
  ) -> AsyncThrowingStream<JournalEntry, any Error> {
    let (stream, continuation) = AsyncThrowingStream<JournalEntry, any Error>.makeStream()
    let path = self.socketPath
    let maximumMessageBytes = self.configuration.maximumMessageBytes
    let tls = self.configuration.tls
    let parameters = Self.journalParameters(since: since, until: until, feature: feature, limit: nil)
    let task = Task {
      do {
        let connection = try await VarlinkConnection.connect(path: path, tls: tls, maximumMessageBytes: maximumMessageBytes)
        defer { connection.close() }
        for try await reply in connection.callMore(StoreInterface.Method.journal.qualifiedName, parameters: parameters) {
          for entry in try Self.page(reply).entries { continuation.yield(entry) }
        }
        continuation.finish()
      } catch {
        continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// Reduces the journaled actions after `since` (the oldest kept snapshot without it) up to
  /// `until` again through the reducers the daemon runs now, with no effect run: a check that
  /// a new version of a reducer agrees with what the journal recorded.
  ///
  /// ```swift
  /// let report = try await client.replay(since: 0)
  /// report.difference  // nil when every journaled action reduces to what was journaled
  /// ```
  public func replay(since: UInt64? = nil, until: UInt64? = nil) async throws -> ReplayReport {
    var parameters: JSONObject = [:]
    if let since { parameters["since"] = .int(Int64(since)) }
    if let until { parameters["until"] = .int(Int64(until)) }
    let reply = try await self.call(method: StoreInterface.Method.replay.qualifiedName, parameters: parameters)
    return try JSONValueDecoder().decode(ReplayReport.self, from: reply)
  }

  /// Has the daemon write a consistent copy of its whole journal into its state directory
  /// (replacing the copy before): an ordinary SQLite database, to copy from there. The daemon's
  /// own journal cannot be opened by another process while it runs.
  ///
  /// ```swift
  /// let backup = try await client.backup()
  /// backup.path  // "/var/lib/switchyard/backup/journal.sqlite"
  /// ```
  public func backup() async throws -> JournalBackup {
    let reply = try await self.call(method: StoreInterface.Method.backup.qualifiedName, parameters: [:])
    return try JSONValueDecoder().decode(JournalBackup.self, from: reply)
  }

  private static func journalParameters(since: UInt64?, until: UInt64?, feature: String?, limit: Int?) -> JSONObject {
    var parameters: JSONObject = [:]
    if let since { parameters["since"] = .int(Int64(since)) }
    if let until { parameters["until"] = .int(Int64(until)) }
    if let feature { parameters["feature"] = .string(feature) }
    if let limit { parameters["limit"] = .int(Int64(limit)) }
    return parameters
  }

  private static func page(_ reply: JSONValue) throws -> (entries: [JournalEntry], next: UInt64?) {
    let entries = try JSONValueDecoder().decode([JournalEntry].self, from: reply["entries"] ?? [])
    guard case let .int(next)? = reply["next"] else { return (entries, nil) }
    return (entries, UInt64(next))
  }
}

/// A copy of the daemon's journal (``SwitchyardClient/backup()``).
public struct JournalBackup: Sendable, Equatable, Decodable {
  /// Where the daemon wrote it.
  public var path: String
  /// The last change it holds.
  public var seq: UInt64
  /// Its size.
  public var bytes: Int
}
