import NIOCore
import SwitchyardRuntime
import SwitchyardVarlink

extension StoreResponder {
  /// `Subscribe`: a snapshot (or a replay from the history), then every change to the path,
  /// until the subscriber hangs up, the path goes away or the daemon stops.
  func subscribe(
    _ call: VarlinkCall,
    caller: Caller?,
    whenClosed: @Sendable (@escaping @Sendable () -> Void) -> Void,
    reply: PreparedCall.Reply
  ) async throws {
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
    let subscriber: Subscriber
    do {
      subscriber = try self.changeLog.subscribe(
        to: pointer,
        since: since.flatMap { since in history.map { (since, $0) } },
        queueLimit: self.configuration.value.subscriptionQueueLimit
      )
    } catch {
      throw VarlinkError(SwitchyardError(error))
    }
    let subscriptions = self.subscriptions
    self.subscribers.withLock { $0[subscriber.id] = (subscriber, caller) }
    whenClosed { subscriptions.remove(subscriber) }
    defer {
      subscriptions.remove(subscriber)
      _ = self.subscribers.withLock { $0.removeValue(forKey: subscriber.id) }
    }
    while true {
      var item = await subscriber.next()
      if case .overflow = item { item = self.changeLog.resnapshot(subscriber) }
      switch item {
      case let .snapshot(seq, value):
        let parameters: JSONObject = ["seq": .int(Int64(seq)), "history": .string(self.changeLog.historyID), "state": value]
        try await reply(.reply(VarlinkReply(parameters: parameters, continues: true)))
      case let .encoded(_, bytes):
        // Whatever else queued meanwhile goes with it: one write and one flush for a burst.
        let more = subscriber.takeEncoded(limit: Self.deliveryBatchLimit)
        try await reply(more.isEmpty ? .encoded(bytes) : .encodedBatch([bytes] + more))
      case .end(.cancelled):
        return
      case .end(.shuttingDown):
        throw VarlinkError(SwitchyardError.shuttingDown)
      case .end(.pathRemoved):
        throw VarlinkError(SwitchyardError.pathNotFound(path: pointer.description))
      case .end(.permissionRevoked):
        throw VarlinkError(
          SwitchyardError.permissionDenied(
            method: call.method, reason: "the access policy no longer lets you read this", action: nil,
            path: pointer.description
          )
        )
      case .overflow:
        continue
      }
    }
  }

  /// Ends the subscriptions whose caller may no longer read what they follow: called when the
  /// configuration was reloaded.
  func revokeSubscriptions() {
    let open = self.subscribers.withLock { Array($0.values) }
    for (subscriber, caller) in open where !self.grants(for: caller).mayRead(subscriber.pointer) {
      subscriber.end(.permissionRevoked)
    }
  }

  /// The most changes a subscriber writes in one go.
  static var deliveryBatchLimit: Int { 64 }

  /// A change as every subscriber of one path receives it: one `Subscribe` reply, framed.
  static func encodeChange(seq: UInt64, patch: JSONPatch) -> ByteBuffer {
    let reply = VarlinkReply(parameters: ["seq": .int(Int64(seq)), "patch": patch.jsonValue], continues: true)
    return ByteBuffer(bytes: reply.frame())
  }
}
