import NIOCore
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardSynchronization

/// The inspector's event streams (`/inspector/events`): at most ``limit`` open at once, each
/// following the journal as a `Journal` call with `more` does, and all of them waiting for the
/// next commit through one waiter on the journal's writer, so that viewers that come and go
/// leave nothing behind in it.
final class ChangeStreams: Sendable {
  private struct Waiting {
    var next = 0
    var open = 0
    /// The streams caught up, by id, to be read again once a change after their last commits.
    var caughtUp: [Int: @Sendable (_ isClosed: Bool) -> Void] = [:]
    /// Whether a waiter is registered with the writer.
    var isArmed = false
  }

  let limit: Int
  let reader: JournalReader
  private let waiting = Mutex(Waiting())

  init(reader: JournalReader, limit: Int) {
    self.reader = reader
    self.limit = limit
  }

  /// Follows the journal after `since` on `exchange`; `false` when ``limit`` streams are open.
  func follow(after since: UInt64, on exchange: HTTPExchange) -> Bool {
    let id: Int? = self.waiting.withLock { waiting in
      guard waiting.open < self.limit else { return nil }
      waiting.open += 1
      waiting.next += 1
      return waiting.next
    }
    guard let id else { return false }
    exchange.whenClosed {
      self.waiting.withLock { waiting in
        waiting.open -= 1
        waiting.caughtUp[id] = nil
      }
    }
    exchange.startStream(contentType: "text/event-stream; charset=utf-8")
    // How long the browser waits before it reconnects, with the last id it saw.
    exchange.send(ByteBuffer(string: "retry: 1000\n\n")) {
      self.reader.read { await ChangeStream(id: id, streams: self, exchange: exchange).send(after: since) }
    }
    return true
  }

  /// Calls `body` once the journal holds a change after `seq`, unless stream `id` closes first.
  fileprivate func whenCommitted(after seq: UInt64, stream id: Int, _ body: @escaping @Sendable (Bool) -> Void) {
    let arm = self.waiting.withLock { waiting in
      waiting.caughtUp[id] = body
      defer { waiting.isArmed = true }
      return !waiting.isArmed
    }
    if arm { self.arm(after: seq) }
  }

  private func arm(after seq: UInt64) {
    self.reader.progress.whenCommitted(after: seq) { isClosed in
      let woken = self.waiting.withLock { waiting in
        defer {
          waiting.caughtUp = [:]
          waiting.isArmed = false
        }
        return Array(waiting.caughtUp.values)
      }
      for body in woken { body(isClosed) }
    }
  }
}

/// One viewer's stream: a page of changes at a time, each sent once the one before is written,
/// so a slow viewer holds one page in memory; one that reads nothing is closed by the exchange.
private struct ChangeStream: Sendable {
  let id: Int
  let streams: ChangeStreams
  let exchange: HTTPExchange

  static var pageSize: Int { 256 }
  static var pageBytes: Int { 256 << 10 }

  /// On the reader's thread.
  func send(after seq: UInt64) async {
    guard self.exchange.isActive else { return }
    let reader = self.streams.reader
    let changes: [JournaledChange]
    do {
      changes = try await reader.changes(after: seq, through: nil, feature: nil, limit: Self.pageSize, maxBytes: Self.pageBytes)
    } catch {
      // Pruned past it (or unreadable): the page starts again from the newest.
      self.exchange.send(ByteBuffer(string: "event: reset\ndata: {}\n\n")) {}
      return self.exchange.finish()
    }
    guard let last = changes.last?.seq else {
      return self.streams.whenCommitted(after: seq, stream: self.id) { isClosed in
        if isClosed { return self.exchange.finish() }
        reader.read { await self.send(after: seq) }
      }
    }
    var bytes: [UInt8] = []
    for change in changes {
      bytes += Array("id: \(change.seq)\nevent: change\ndata: ".utf8)
      TimelineEntry(change).write(into: &bytes)
      bytes += Array("\n\n".utf8)
    }
    self.exchange.send(ByteBuffer(bytes: bytes)) {
      reader.read { await self.send(after: last) }
    }
  }
}
