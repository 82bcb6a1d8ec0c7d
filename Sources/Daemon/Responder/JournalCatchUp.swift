import NIOCore
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardVarlink

/// Catches a resuming subscriber up from the journal when its `since` is further back than the
/// history in memory: the changes after it, as seen from its path, a page at a time — each
/// written once the client has read the one before, so a long gap costs one page of memory —
/// until the history in memory covers the rest. Then `caughtUp` starts the subscription proper
/// from there, on the connection's event loop.
///
/// When the journal no longer holds the state at `since` (pruned), `caughtUp` gets `nil`: the
/// subscription starts with a snapshot, as etcd tells a watcher to relist. So does one whose
/// catch-up the history in memory cannot take over from.
struct JournalCatchUp: Sendable {
  let reader: JournalReader
  let pointer: JSONPointer
  /// The journal's id, which the first reply names.
  let history: String
  let answer: CallAnswer
  /// How a change is framed as a `Subscribe` reply.
  let encode: @Sendable (_ seq: UInt64, _ patch: JSONPatch) -> ByteBuffer
  /// Called on the event loop with the last change looked at (`nil`: none, start afresh), and
  /// whether a reply was written (and so named the history).
  let caughtUp: @Sendable (_ seq: UInt64?, _ announced: Bool) -> Void

  /// The most changes read and written at a time.
  static var pageSize: Int { 256 }
  /// The most bytes of changes (``JournaledChange/byteCount``) read at a time, though always one.
  static var pageBytes: Int { 1 << 20 }

  /// Starts on the reader's thread: the state at `since`, which the changes after it apply to.
  func start(after since: UInt64) async {
    guard self.answer.isActive else { return }
    let state: JSONValue
    do throws(JournalReadError) {
      state = try await self.reader.state(at: since, while: { self.answer.isActive })
    } catch .abandoned {
      return
    } catch {
      return self.answer.execute { self.caughtUp(nil, false) }
    }
    await self.send(after: since, state: state, announced: false)
  }

  private func send(after seq: UInt64, state: JSONValue, announced: Bool) async {
    guard self.answer.isActive else { return }
    var state = state
    var last = seq
    var replies: [ByteBuffer] = []
    let page: [JournaledChange]
    do {
      page = try await self.reader.changes(after: seq, through: nil, feature: nil, limit: Self.pageSize, maxBytes: Self.pageBytes)
      for change in page {
        let patch = try JSONPatch(jsonValue: JSONValue(parsing: change.patch))
        try patch.apply(to: &state)
        last = change.seq
        guard let relative = self.pointer.isRoot ? patch : patch.relative(to: self.pointer, in: state) else {
          self.write(replies)
          return self.answer.finish(VarlinkError(SwitchyardError.pathNotFound(path: self.pointer.description)))
        }
        if !relative.isEmpty {
          let reply = self.encode(change.seq, relative)
          replies.append(!announced && replies.isEmpty ? SubscribeReply.naming(self.history, in: reply) : reply)
        }
      }
    } catch {
      // A journal that cannot be read now: the subscriber starts afresh instead.
      self.write(replies)
      let (resumed, hasAnnounced) = (last, announced || !replies.isEmpty)
      return self.answer.execute { self.caughtUp(resumed, hasAnnounced) }
    }
    self.write(replies)
    let (caughtUpTo, caughtUpState, hasAnnounced) = (last, state, announced || !replies.isEmpty)
    if page.count < Self.pageSize, page.reduce(0, { $0 + $1.byteCount }) < Self.pageBytes {
      // What is left is in memory (the journal may even lag behind it): the subscription goes
      // on from there, on the loop, where no change can come in between.
      return self.answer.execute { self.caughtUp(caughtUpTo, hasAnnounced) }
    }
    self.answer.whenWritable {
      self.reader.read { await self.send(after: caughtUpTo, state: caughtUpState, announced: hasAnnounced) }
    }
  }

  private func write(_ replies: [ByteBuffer]) {
    switch replies.count {
    case 0: return
    case 1: self.answer.reply(.encoded(replies[0]), flushingNow: true)
    default: self.answer.reply(.encodedBatch(replies), flushingNow: true)
    }
  }
}
