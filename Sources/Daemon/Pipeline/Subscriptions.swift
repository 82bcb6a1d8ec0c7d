import NIOCore
import SwitchyardRuntime
import SwitchyardSynchronization

/// The open subscriptions, by the path they follow: each change is made relative to a path and
/// encoded once, and the same bytes go to every subscriber of that path.
///
/// ```swift
/// let subscriptions = Subscriptions { seq, patch in encodeReply(seq, patch) }
/// // ChangeLog.append → subscriptions.deliver(change, state: composed)
/// ```
///
/// It is fed by the ``ChangeLog`` under the log's lock, so subscribers see changes in order and
/// a new subscription's first items and its registration cannot straddle a change.
final class Subscriptions: Sendable {
  /// Encodes one change as a subscriber receives it: `patch` is relative to the subscription's
  /// path.
  typealias Encode = @Sendable (_ seq: UInt64, _ patch: JSONPatch) -> ByteBuffer

  private struct Contents: ~Copyable {
    var byPath: [JSONPointer: [Int: Subscriber]] = [:]
    var nextID = 0
    var count = 0
  }

  private let contents = Mutex(Contents())
  private let encode: Encode

  init(encode: @escaping Encode) {
    self.encode = encode
  }

  /// A new subscriber to the state at `pointer`; its first item is the caller's to push.
  func add(pointer: JSONPointer, queueLimit: Int) -> Subscriber {
    self.contents.withLock { contents in
      let subscriber = Subscriber(id: contents.nextID, pointer: pointer, limit: queueLimit, encode: self.encode)
      contents.nextID += 1
      contents.byPath[pointer, default: [:]][subscriber.id] = subscriber
      contents.count += 1
      return subscriber
    }
  }

  /// Ends `subscriber`'s subscription: it is cancelled, and gets no more changes.
  func remove(_ subscriber: Subscriber) {
    self.contents.withLock { contents in
      if contents.byPath[subscriber.pointer]?.removeValue(forKey: subscriber.id) != nil {
        contents.count -= 1
        if contents.byPath[subscriber.pointer]?.isEmpty == true { contents.byPath[subscriber.pointer] = nil }
      }
    }
    subscriber.end(.cancelled)
  }

  var count: Int {
    self.contents.withLock { $0.count }
  }

  /// Hands `change` to every subscriber whose path it touches, encoded once per path; those
  /// whose path it removed end with ``SubscriptionEnd/pathRemoved``.
  ///
  /// - Parameter state: The composed state after the change.
  func deliver(_ change: StateChange, state: JSONValue) {
    self.contents.withLock { contents in
      for (pointer, subscribers) in contents.byPath {
        switch Self.relative(change.patch, to: pointer, in: state) {
        case nil:
          for subscriber in subscribers.values { subscriber.end(.pathRemoved) }
        case let patch? where patch.isEmpty:
          continue
        case let patch?:
          let bytes = self.encode(change.seq, patch)
          for subscriber in subscribers.values { subscriber.push(.encoded(seq: change.seq, bytes)) }
        }
      }
    }
  }

  /// Hands `change` to one subscriber: a replay from the history.
  static func deliver(_ change: StateChange, to subscriber: Subscriber, state: JSONValue) {
    switch self.relative(change.patch, to: subscriber.pointer, in: state) {
    case nil: subscriber.end(.pathRemoved)
    case let patch? where patch.isEmpty: break
    case let patch?: subscriber.push(.encoded(seq: change.seq, subscriber.encode(change.seq, patch)))
    }
  }

  private static func relative(_ patch: JSONPatch, to pointer: JSONPointer, in state: JSONValue) -> JSONPatch? {
    pointer.isRoot ? patch : patch.relative(to: pointer, in: state)
  }

  /// Ends every subscription with `reason`.
  func endAll(_ reason: SubscriptionEnd) {
    let subscribers = self.contents.withLock { contents in
      defer {
        contents.byPath.removeAll()
        contents.count = 0
      }
      return contents.byPath.values.flatMap(\.values)
    }
    for subscriber in subscribers { subscriber.end(reason) }
  }
}
