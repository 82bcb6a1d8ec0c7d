import NIOCore
import SwitchyardJournal
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardVarlink

/// The calls that read the journal — `Get` with `at`, `Journal`, `Replay`, `Backup` — answered from the
/// ``JournalReader``'s thread, never on the event loop: read there, and their replies encoded
/// there too, however large. Each stops when its client goes away.
extension StoreResponder {
  /// The most entries a `Journal` reply carries.
  static var journalPageLimit: Int { 1000 }
  /// The most bytes of entries (``JournaledChange/byteCount``) a `Journal` reply carries, though
  /// always one entry, whatever its size: a page of large entries is a few entries.
  static var journalPageBytes: Int { 1 << 20 }

  /// `Get` with `at`: the state at a path as it was at that sequence number.
  func get(_ call: VarlinkCall, at seq: UInt64) -> PreparedCall {
    let pointer: JSONPointer
    do throws(VarlinkError) {
      try Self.refuseParameters(of: call, except: ["path", "at"])
      pointer = try self.pointer(call)
    } catch {
      return .failing(error)
    }
    // The state now needs no journal: it is the one in memory.
    if let (current, value) = self.changeLog.get(pointer), current == seq {
      return .answering { ["seq": .int(Int64(seq)), "state": value] }
    }
    guard let reader = self.journalReader else { return .failing(VarlinkError(SwitchyardError.noJournal)) }
    let current = self.changeLog.currentSeq
    guard seq <= current else {
      return .failing(VarlinkError(SwitchyardError(JournalReadError.notRetained(seq: seq, oldest: nil, latest: current))))
    }
    return PreparedCall(isBarrier: true) { answer in
      // A change already numbered may still be on its way to the journal: read once it is there.
      reader.read(once: seq) {
        guard answer.isActive else { return }
        do throws(JournalReadError) {
          let state = try await reader.state(at: seq, while: { answer.isActive })
          guard let value = state.value(at: pointer) else {
            return answer.finish(VarlinkError(SwitchyardError.pathNotFound(path: pointer.description)))
          }
          let reply = VarlinkReply(parameters: ["seq": .int(Int64(seq)), "state": value])
          answer.reply(.encoded(ByteBuffer(bytes: reply.frame())))
          answer.finish()
        } catch .abandoned {
          return
        } catch {
          answer.finish(VarlinkError(SwitchyardError(error)))
        }
      }
    }
  }

  /// `Journal`: the journal's entries, a page a reply; with `more`, on to every new change.
  func journal(_ call: VarlinkCall) -> PreparedCall {
    let since: UInt64?, until: UInt64?, limit: Int
    let feature: String?
    do throws(VarlinkError) {
      try Self.refuseParameters(of: call, except: ["since", "until", "feature", "limit"])
      since = try Self.seq(call, "since")
      until = try Self.seq(call, "until")
      switch call.parameters["feature"] {
      case nil, .null: feature = nil
      case let .string(name)? where name.utf8.count <= 256: feature = name
      default: throw .invalidParameter("feature")
      }
      switch call.parameters["limit"] {
      case nil, .null: limit = Self.journalPageLimit
      case let .int(value)? where value > 0: limit = Int(min(value, Int64(Self.journalPageLimit)))
      default: throw .invalidParameter("limit")
      }
    } catch {
      return .failing(error)
    }
    guard let reader = self.journalReader else { return .failing(VarlinkError(SwitchyardError.noJournal)) }
    let follows = call.more
    return PreparedCall(isBarrier: true) { answer in
      let page = JournalPage(
        reader: reader, until: until, feature: feature, limit: limit, maxBytes: Self.journalPageBytes, follows: follows,
        answer: answer
      )
      reader.read { await page.send(after: since) }
    }
  }

  /// `Replay`: the journaled actions reduced again through the reducers running now.
  func replay(_ call: VarlinkCall) -> PreparedCall {
    let since: UInt64?, until: UInt64?
    do throws(VarlinkError) {
      try Self.refuseParameters(of: call, except: ["since", "until"])
      since = try Self.seq(call, "since")
      until = try Self.seq(call, "until")
    } catch {
      return .failing(error)
    }
    guard let reader = self.journalReader else { return .failing(VarlinkError(SwitchyardError.noJournal)) }
    let replay = self.replay
    return PreparedCall(isBarrier: true) { answer in
      reader.read {
        guard answer.isActive else { return }
        do throws(JournalReadError) {
          let report = try await replay(reader, since, until, { answer.isActive })
          answer.reply(.encoded(ByteBuffer(bytes: VarlinkReply(parameters: report).frame())))
          answer.finish()
        } catch .abandoned {
          return
        } catch {
          answer.finish(VarlinkError(SwitchyardError(error)))
        }
      }
    }
  }

  /// `Backup`: a consistent copy of the journal, written where the daemon keeps it, on the
  /// reader's thread (one backup at a time, after the reads before it).
  func backup(_ call: VarlinkCall) -> PreparedCall {
    // It takes none: a `path` would say the copy goes there, and it does not.
    do throws(VarlinkError) {
      try Self.refuseParameters(of: call, except: [])
    } catch {
      return .failing(error)
    }
    guard let reader = self.journalReader else { return .failing(VarlinkError(SwitchyardError.noJournal)) }
    return PreparedCall(isBarrier: true) { answer in
      reader.readKept {
        do {
          let backup = try await reader.journal.backup()
          answer.reply(
            .reply(
              VarlinkReply(parameters: [
                "path": .string(backup.path), "seq": .int(Int64(clamping: backup.seq)), "bytes": .int(Int64(backup.bytes)),
              ])
            )
          )
          answer.finish()
        } catch {
          answer.finish(VarlinkError(SwitchyardError.backupFailed(reason: "\(error)")))
        }
      }
    }
  }

  /// Refuses a parameter the method does not take, which the client would otherwise believe
  /// was heeded.
  private static func refuseParameters(of call: VarlinkCall, except known: Set<String>) throws(VarlinkError) {
    if let unknown = call.parameters.keys.first(where: { !known.contains($0) }) {
      throw .invalidParameter(unknown)
    }
  }

  /// A sequence-number parameter: absent, or an integer from 0.
  private static func seq(_ call: VarlinkCall, _ name: String) throws(VarlinkError) -> UInt64? {
    switch call.parameters[name] {
    case nil, .null: return nil
    case let .int(value)? where value >= 0: return UInt64(value)
    default: throw .invalidParameter(name)
    }
  }
}

/// One `Journal` call's pages: each read and encoded on the reader's thread and written when the
/// client has read the one before, so a slow client holds one page in memory, never the journal,
/// and a page is bounded in bytes as well as in entries.
private struct JournalPage: Sendable {
  let reader: JournalReader
  let until: UInt64?
  let feature: String?
  let limit: Int
  let maxBytes: Int
  let follows: Bool
  let answer: CallAnswer

  /// Reads and sends the page after `since` (after the oldest change held, without it).
  func send(after since: UInt64?) async {
    guard self.answer.isActive else { return }
    let entries: [JournaledChange]
    let start: UInt64
    // Read first: what commits while the page is read is the next page's.
    let through = min(self.until ?? .max, self.reader.progress.committedSeq)
    do throws(JournalReadError) {
      if let since { start = since } else { start = try await self.oldest() }
      entries = try await self.reader.changes(
        after: start, through: through, feature: self.feature, limit: self.limit, maxBytes: self.maxBytes
      )
    } catch {
      return self.answer.finish(VarlinkError(SwitchyardError(error)))
    }
    // Full: it stopped at a bound, not at the end of what it looked at.
    let isFull = entries.count == self.limit || entries.reduce(0) { $0 + $1.byteCount } >= self.maxBytes
    // Where the next page starts: after the last entry, or — a feature's entries being
    // sparse — after everything this page looked at.
    let looked = isFull ? entries.last!.seq : through
    let next = max(start, looked)
    let isLast = self.until.map { next >= $0 } ?? false
    if !self.follows {
      var parameters: JSONObject = ["entries": .array(entries.map(\.json))]
      if !isLast, isFull { parameters["next"] = .int(Int64(next)) }
      self.answer.reply(.encoded(ByteBuffer(bytes: VarlinkReply(parameters: parameters).frame())))
      return self.answer.finish()
    }
    if !entries.isEmpty || isLast {
      var parameters: JSONObject = ["entries": .array(entries.map(\.json))]
      if !isLast { parameters["next"] = .int(Int64(next)) }
      let reply = VarlinkReply(parameters: parameters, continues: !isLast)
      self.answer.reply(.encoded(ByteBuffer(bytes: reply.frame())), flushingNow: true)
      if isLast { return self.answer.finish() }
    }
    // Caught up: wait for the next commit. Not caught up: wait for the client to read.
    let caughtUp = !isFull
    self.answer.whenWritable {
      if caughtUp {
        self.reader.progress.whenCommitted(after: next) { isClosed in
          if isClosed { return self.answer.finish(VarlinkError(SwitchyardError.shuttingDown)) }
          self.reader.read { await self.send(after: next) }
        }
      } else {
        self.reader.read { await self.send(after: next) }
      }
    }
  }

  private func oldest() async throws(JournalReadError) -> UInt64 {
    do {
      return (try await self.reader.journal.extent().firstChange ?? 1) - 1
    } catch {
      throw .unreadable("\(error)", underlying: error)
    }
  }
}

extension JournaledChange {
  /// A `JournalEntry`.
  var json: JSONValue {
    var entry: JSONObject = [
      "seq": .int(Int64(self.seq)),
      "time": .double(self.time),
      "patch": (try? JSONValue(parsing: self.patch)) ?? .array([]),
    ]
    if let feature = self.feature { entry["feature"] = .string(feature) }
    if let cause = self.cause {
      entry["origin"] = .string(cause.origin.rawValue)
      if let action = cause.action, let value = try? JSONValue(parsing: action) { entry["action"] = value }
      if let peer = cause.peer {
        entry["uid"] = .int(Int64(peer.uid))
        entry["pid"] = .int(Int64(peer.pid))
        if let certificate = peer.certificate { entry["certificate"] = .string(certificate) }
      }
      if let dependencies = cause.dependencies { entry["dependencies"] = dependencies.json }
    }
    return .object(entry)
  }
}

extension JournalReplay.Report {
  /// `Replay`'s reply.
  var json: JSONObject {
    var reply: JSONObject = [
      "from": .int(Int64(self.from)), "to": .int(Int64(self.to)),
      "replayed": .int(Int64(self.replayed)), "skipped": .int(Int64(self.skipped)),
    ]
    if let difference = self.difference {
      var json: JSONObject = [
        "seq": .int(Int64(difference.seq)), "feature": .string(difference.feature), "action": difference.action,
        "journaled": difference.journaled.jsonValue, "reason": .string(difference.reason),
      ]
      if let replayed = difference.replayed { json["replayed"] = replayed.jsonValue }
      reply["difference"] = .object(json)
    }
    return reply
  }
}

extension SwitchyardError {
  /// The error reply for a read the journal cannot answer.
  init(_ error: JournalReadError) {
    switch error {
    case let .notRetained(seq, oldest, latest):
      self = .seqNotRetained(seq: Int(clamping: seq), oldest: oldest.map { Int(clamping: $0) }, latest: Int(clamping: latest))
    case let .unreadable(reason, _):
      self = .journalUnavailable(reason: "the journal cannot be read: \(reason)")
    case .abandoned:
      self = .journalUnavailable(reason: "the read was abandoned")
    }
  }
}
