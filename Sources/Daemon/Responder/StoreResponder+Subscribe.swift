import NIOCore
import SwitchyardChangeFeed
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardVarlink

extension StoreResponder {
  /// `Subscribe`: a snapshot (or a replay from the history), then every change to the path,
  /// until the subscriber hangs up, the path goes away or the daemon stops. Runs on the
  /// connection's event loop when the call's turn comes; the changes are delivered there too
  /// (``SubscriptionDelivery``).
  func subscribe(
    _ call: VarlinkCall,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
    answer: CallAnswer
  ) throws(VarlinkError) {
    guard call.more else { throw VarlinkError.expectedMore() }
    let pointer = try self.pointer(call)
    var since: UInt64?
    switch call.parameters["since"] {
    case nil, .null: since = nil
    case let .int(value)? where value >= 0: since = UInt64(value)
    default: throw VarlinkError.invalidParameter("since")
    }
    // A `since` is a number in one history; without its history's id it may come from a run of
    // the daemon before a restart, so it gets a snapshot rather than an unrelated replay.
    var history: String?
    switch call.parameters["history"] {
    case nil, .null: history = nil
    case let .string(value)? where value.utf8.count <= 64: history = value
    default: throw VarlinkError.invalidParameter("history")
    }
    // Asked for, each change names the feature that made it and why: a field that clients
    // which did not ask never see, so that those who reject unknown fields read on.
    let withCauses: Bool
    switch call.parameters["causes"] {
    case nil, .null: withCauses = false
    case let .bool(value)?: withCauses = value
    default: throw VarlinkError.invalidParameter("causes")
    }
    // A number of this history that it has not reached is the client's mistake, not a loss.
    if let since, history == self.changeLog.historyID, case let current = self.changeLog.currentSeq, since > current {
      throw VarlinkError(SwitchyardError(JournalReadError.notRetained(seq: since, oldest: nil, latest: current)))
    }
    // Further back than the history in memory, or more changes back than the subscriber's queue
    // holds (a replay into it would overflow into a snapshot): caught up from the journal first,
    // a page at a time. Not on a standby, whose changes come in off the loop: nothing would
    // keep them from falling between the catch-up and the history it hands over to.
    let queueLimit = self.configuration.value.subscriptionQueueLimit
    if let since, history == self.changeLog.historyID, self.standby == nil, let reader = self.journalReader,
      since < self.changeLog.currentSeq,
      self.changeLog.currentSeq - since > UInt64(queueLimit) || !self.changeLog.historyCovers(since: since)
    {
      if self.changeLog.get(pointer) == nil { throw VarlinkError(SwitchyardError.pathNotFound(path: pointer.description)) }
      let catchUp = JournalCatchUp(
        reader: reader, pointer: pointer, history: self.changeLog.historyID, answer: answer, encode: Self.encodeChange
      ) { caughtUp, announced in
        do throws(VarlinkError) {
          try self.follow(
            pointer, since: caughtUp.map { ($0, self.changeLog.historyID) }, withCauses: withCauses, method: call.method,
            caller: caller, whenClosed: whenClosed, answer: answer, announcesHistory: !announced
          )
        } catch {
          // Caught up as the daemon hands its connections over: the next process goes on from here.
          guard self.changeLog.isHandingOver, let caughtUp else { return answer.finish(error) }
          answer.handOver(
            resume: SubscribeReply.resuming(
              pointer, withCauses: withCauses, method: call.method, after: caughtUp, history: self.changeLog.historyID
            ),
            otherwise: error
          )
        }
      }
      reader.read { await catchUp.start(after: since) }
      return
    }
    try self.follow(
      pointer, since: since.flatMap { since in history.map { (since, $0) } }, withCauses: withCauses, method: call.method,
      caller: caller, whenClosed: whenClosed, answer: answer
    )
  }

  /// Starts the subscription proper: from the change log, with `since` replayed from the
  /// history in memory when it holds it, or else a snapshot.
  private func follow(
    _ pointer: JSONPointer,
    since: (seq: UInt64, history: String)?,
    withCauses: Bool,
    method: String,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void,
    answer: CallAnswer,
    announcesHistory: Bool = true
  ) throws(VarlinkError) {
    let subscriber: Subscriber
    do {
      // Who sent what is the journal's to tell: causes without the sender for the rest.
      subscriber = try self.changeLog.subscribe(
        to: pointer, since: since, queueLimit: self.configuration.value.subscriptionQueueLimit, withCauses: withCauses,
        withSenders: self.grants(for: caller).isAdmin
      )
    } catch {
      throw VarlinkError(SwitchyardError(error))
    }
    if !announcesHistory { _ = subscriber.takeHistoryAnnouncement() }
    let subscriptions = self.subscriptions
    self.subscribers.withLock { $0[subscriber.id] = (subscriber, caller) }
    whenClosed { subscriptions.remove(subscriber) }
    let delivery = SubscriptionDelivery(
      subscriber: subscriber, method: method, answer: answer, changeLog: self.changeLog, metrics: self.metrics,
      ended: { self.ended($0) }
    )
    // Made once: each delivery scheduled hands the loop this closure, not a new one.
    let deliver: @Sendable () -> Void = { delivery.deliver() }
    subscriber.attach { answer.execute(deliver) }
  }

  /// The subscription is over: it no longer counts.
  func ended(_ subscriber: Subscriber) {
    self.subscriptions.remove(subscriber)
    _ = self.subscribers.withLock { $0.removeValue(forKey: subscriber.id) }
  }

  /// Ends the subscriptions whose caller may no longer read what they follow: called when the
  /// configuration was reloaded.
  func revokeSubscriptions() {
    let open = self.subscribers.withLock { Array($0.values) }
    for (subscriber, caller) in open where !self.grants(for: caller).mayRead(subscriber.pointer) {
      subscriber.end(.permissionRevoked)
    }
  }


  /// A change as every subscriber of one path receives it: one `Subscribe` reply, framed.
  ///
  ///     {"continues":true,"parameters":{"patch":[…],"seq":7}}\0
  ///
  /// Written straight from the patch, as `VarlinkReply.frame()` would write the reply's tree.
  static func encodeChange(seq: UInt64, patch: JSONPatch) -> ByteBuffer {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(96)
    bytes.append(contentsOf: #"{"continues":true,"parameters":{"patch":"#.utf8)
    patch.serialize(appendingTo: &bytes)
    bytes.append(contentsOf: #","seq":"#.utf8)
    JSONValue.int(Int64(seq)).serialize(appendingTo: &bytes)
    bytes.append(contentsOf: "}}\0".utf8)
    return ByteBuffer(bytes: bytes)
  }

  /// A change as the subscribers of one path that asked for causes receive it: with `cause`,
  /// the feature that made it and — when the daemon keeps a journal, which is when it records
  /// them — where its action came from, the action, and who sent it.
  ///
  ///     {"seq":7,"patch":[…],"cause":{"feature":"primes","origin":"request","action":{"counter":{"incrTapped":{}}},"uid":1000,"pid":4242}}
  static func encodeChange(seq: UInt64, patch: JSONPatch, feature: String?, cause: ChangeCause?) -> ByteBuffer {
    var note: JSONObject = [:]
    if let feature { note["feature"] = .string(feature) }
    if let cause {
      note["origin"] = .string(cause.origin.rawValue)
      if let action = cause.action, let value = try? JSONValue(parsing: action) { note["action"] = value }
      if let peer = cause.peer {
        note["uid"] = .int(Int64(peer.uid))
        note["pid"] = .int(Int64(peer.pid))
        if let certificate = peer.certificate { note["certificate"] = .string(certificate) }
      }
    }
    let reply = VarlinkReply(
      parameters: ["seq": .int(Int64(seq)), "patch": patch.jsonValue, "cause": .object(note)], continues: true
    )
    return ByteBuffer(bytes: reply.frame())
  }
}

/// Writes what a subscriber has queued to its connection, on the connection's event loop, as
/// many changes as are queued in one write; until the client leaves too much unread, then again
/// once it has read enough.
struct SubscriptionDelivery: Sendable {
  let subscriber: Subscriber
  let method: String
  let answer: CallAnswer
  /// Where a snapshot comes from after an overflow, and the history a resumed subscription names.
  let changeLog: ChangeLog
  let metrics: DaemonMetrics?
  /// Tells the responder that the subscription is over.
  let ended: @Sendable (Subscriber) -> Void

  /// The most changes written in one go.
  static var batchLimit: Int { 64 }

  func deliver() {
    while self.answer.isActive {
      guard self.answer.isWritable else {
        self.answer.whenWritable { self.deliver() }
        return
      }
      // The first change of a resumed subscription names the history: it goes alone, re-encoded.
      let batch = self.subscriber.takeBatch(limit: self.subscriber.announcesHistoryNext ? 1 : Self.batchLimit)
      if batch.isEmpty { return }
      if let changes = batch.changes {
        let isFirst = self.subscriber.takeHistoryAnnouncement()
        let bytes = isFirst ? SubscribeReply.naming(self.changeLog.historyID, in: changes) : changes
        self.answer.reply(.encoded(bytes), flushingNow: true)
      }
      guard var item = batch.then else {
        if batch.isLast { return }
        continue
      }
      if case .overflow = item {
        item = self.changeLog.resnapshot(self.subscriber)
        self.metrics?.resnapshots.increment()
      }
      switch item {
      case let .snapshot(seq, value):
        _ = self.subscriber.takeHistoryAnnouncement()
        let parameters: JSONObject = [
          "seq": .int(Int64(seq)), "history": .string(self.changeLog.historyID), "state": value,
        ]
        self.answer.reply(.reply(VarlinkReply(parameters: parameters, continues: true)))
        if batch.isLast { return }
      case let .end(.handedOver(seq)):
        self.ended(self.subscriber)
        self.answer.handOver(
          resume: SubscribeReply.resuming(
            self.subscriber.pointer, withCauses: self.subscriber.withCauses, method: self.method, after: seq,
            history: self.changeLog.historyID
          ),
          otherwise: VarlinkError(SwitchyardError.shuttingDown)
        )
        return
      case let .end(reason):
        self.ended(self.subscriber)
        self.answer.finish(self.error(endingWith: reason))
        return
      case let .encoded(_, bytes):
        // A resnapshot is never a change; written all the same rather than lost.
        self.answer.reply(.encoded(bytes), flushingNow: true)
      case .overflow:
        break
      }
    }
  }

  private func error(endingWith reason: SubscriptionEnd) -> VarlinkError? {
    switch reason {
    case .cancelled:
      return nil
    case .shuttingDown, .handedOver:
      return VarlinkError(SwitchyardError.shuttingDown)
    case .pathRemoved:
      return VarlinkError(SwitchyardError.pathNotFound(path: self.subscriber.pointer.description))
    case .permissionRevoked:
      return VarlinkError(
        SwitchyardError.permissionDenied(
          method: self.method, reason: "the access policy no longer lets you read this", action: nil,
          path: self.subscriber.pointer.description
        )
      )
    }
  }
}

/// `Subscribe` replies as bytes.
enum SubscribeReply {
  /// The `Subscribe` call that takes a subscription to `pointer` up after the change numbered `seq` in the next
  /// process, framed: as its client would resume it, with `since` and `history`.
  static func resuming(_ pointer: JSONPointer, withCauses: Bool, method: String, after seq: UInt64, history: String) -> [UInt8] {
    var parameters: JSONObject = ["since": .int(Int64(seq)), "history": .string(history)]
    if !pointer.isRoot { parameters["path"] = .string(pointer.description) }
    if withCauses { parameters["causes"] = true }
    let call: JSONObject = ["method": .string(method), "parameters": .object(parameters), "more": true]
    return VarlinkMessageEncoder.frame(.object(call))
  }

  /// A framed `Subscribe` reply that also names the history: the first of a resumed
  /// subscription, which says which history its numbers are of as a snapshot does. Re-encoded
  /// from the shared bytes, once per resumed subscription.
  static func naming(_ history: String, in frame: ByteBuffer) -> ByteBuffer {
    var bytes = Array(frame.readableBytesView)
    if bytes.last == 0 { bytes.removeLast() }
    guard case var .object(reply)? = try? JSONValue(parsing: bytes), case var .object(parameters)? = reply["parameters"] else {
      return frame
    }
    parameters["history"] = .string(history)
    reply["parameters"] = .object(parameters)
    return ByteBuffer(bytes: VarlinkMessageEncoder.frame(.object(reply)))
  }
}
