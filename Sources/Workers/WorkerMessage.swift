import NIOCore
import SwitchyardJSON

/// What the daemon and a worker process say to each other over their link (two pipes).
///
/// Each message is one frame: a 4-byte big-endian length, then that many bytes: a kind byte,
/// an 8-byte big-endian number (an action's id, a probe's id, or 0), and a JSON body (the
/// compact text of a state, an action or a patch; empty when there is none). A `reduced`
/// frame has a second 8-byte number before its body: the reducer's time in nanoseconds. Frames are read
/// and written in order on one stream, so each side sees the other's messages in FIFO order.
package enum WorkerMessage: Equatable, Sendable {
  // Daemon → worker.
  /// The state to start from; `restarted` when a previous worker of the feature ended.
  case start(state: JSONValue, restarted: Bool)
  /// A local action to reduce; `reduced` with the same id answers it.
  case action(id: UInt64, action: JSONValue)
  /// A global action as a client sent it, its JSON text untouched: the worker decodes it and
  /// takes its own action out along the feature's route. `reduced` with the same id answers it.
  case globalAction(id: UInt64, text: [UInt8])
  /// A health probe; `probeAnswer` with the same id answers it once the store got to it.
  case probe(id: UInt64)

  // Worker → daemon.
  /// The worker's store runs from the state it was handed.
  case ready
  /// The action `id` is reduced; `patch` is the change it made, if any, and `nanoseconds` how
  /// long the reducer took (0 when it did not run: the action did not decode). The change and
  /// the acknowledgement travel in one frame, so the daemon never holds one without the other.
  case reduced(id: UInt64, patch: JSONPatch?, nanoseconds: UInt64 = 0)
  /// A change that no action from the daemon caused (a child reducer's effect on a read-only
  /// route reduced in place).
  case change(JSONPatch)
  /// An action an effect sent, for the daemon to route.
  case effect(action: JSONValue)
  case probeAnswer(id: UInt64)
  /// A durable timer the store scheduled (`Effect.schedule`), for the daemon to keep: its local
  /// action, its deadline in seconds since 1970, and the ids it is cancellable by.
  case schedule(action: JSONValue, deadline: Double, ids: [String])
  /// The store cancelled the timers scheduled under `id`.
  case cancelTimers(id: String)
  /// What the reduction of action `id` read of the date and UUIDs (the journal's `DependencyReadings`):
  /// sent just before its `reduced`, only when it read one of them.
  case dependencies(id: UInt64, readings: JSONValue)

  private enum Kind: UInt8 {
    case start = 1, action, probe, globalAction
    case ready = 0x11, reduced, change, effect, probeAnswer, schedule, cancelTimers, dependencies
  }

  /// The largest frame either side accepts: a state may be large, but not unbounded.
  package static let maximumFrameLength = 256 << 20

  /// The frame, length prefix included.
  package func encoded() -> [UInt8] {
    Array(self.frame().readableBytesView)
  }

  /// The frame, length prefix included, as the buffer a link writes: written straight into it,
  /// so that a frame costs one allocation however it travels (queued for a worker, kept to send
  /// again to the next one, written).
  package func frame(allocator: ByteBufferAllocator = ByteBufferAllocator()) -> ByteBuffer {
    let parts = self.parts
    var frame = allocator.buffer(capacity: parts.length)
    parts.write(into: &frame)
    return frame
  }

  /// The frame of ``globalAction(id:text:)`` with `text` read in place (a `Send`'s action, from
  /// the call's bytes): copied once, into the frame.
  package static func globalActionFrame(id: UInt64, text: UnsafeRawBufferPointer) -> ByteBuffer {
    let header = Header(kind: .globalAction, number: id, time: nil)
    var frame = ByteBufferAllocator().buffer(capacity: 4 + header.length + text.count)
    header.write(textCount: text.count, into: &frame)
    frame.writeBytes(text)
    return frame
  }

  /// Appends the frame, length prefix included, to `frame`: what a link that gathers its frames
  /// into one buffer writes.
  package func write(into frame: inout ByteBuffer) {
    let parts = self.parts
    frame.reserveCapacity(minimumWritableBytes: parts.length)
    parts.write(into: &frame)
  }

  /// Appends the frame as ``write(into:)`` does, a patch's text written in `scratch` first: a
  /// buffer the writer keeps, so that a worker's answer allocates nothing for its text.
  package func write(into frame: inout ByteBuffer, scratch: inout [UInt8]) {
    guard case let .reduced(id, patch?, nanoseconds) = self else { return self.write(into: &frame) }
    scratch.removeAll(keepingCapacity: true)
    patch.serialize(appendingTo: &scratch)
    let header = Header(kind: .reduced, number: id, time: nanoseconds)
    frame.reserveCapacity(minimumWritableBytes: 4 + header.length + scratch.count)
    header.write(textCount: scratch.count, into: &frame)
    frame.writeBytes(scratch)
  }

  /// What comes before a frame's text: its kind, its number, and a reducer's time for `reduced`.
  private struct Header {
    let kind: Kind
    let number: UInt64
    let time: UInt64?

    /// Its length, without the length prefix.
    var length: Int { 9 + (self.time == nil ? 0 : 8) }

    /// Writes the length prefix for a text of `textCount` bytes, then the header.
    func write(textCount: Int, into frame: inout ByteBuffer) {
      frame.writeInteger(UInt32(self.length + textCount))
      frame.writeInteger(self.kind.rawValue)
      frame.writeInteger(self.number)
      if let time = self.time { frame.writeInteger(time) }
    }
  }

  /// What a frame is made of: its header and its text.
  private struct Parts {
    let header: Header
    let text: [UInt8]

    /// The frame's length, prefix included.
    var length: Int { 4 + self.header.length + self.text.count }

    func write(into frame: inout ByteBuffer) {
      self.header.write(textCount: self.text.count, into: &frame)
      frame.writeBytes(self.text)
    }
  }

  private var parts: Parts {
    let (kind, number, text): (Kind, UInt64, [UInt8]) =
      switch self {
      case let .start(state, restarted): (.start, restarted ? 1 : 0, state.serializedBytes())
      case let .action(id, action): (.action, id, action.serializedBytes())
      case let .globalAction(id, text): (.globalAction, id, text)
      case let .probe(id): (.probe, id, [])
      case .ready: (.ready, 0, [])
      case let .reduced(id, patch, _): (.reduced, id, patch?.serializedBytes() ?? [])
      case let .change(patch): (.change, 0, patch.serializedBytes())
      case let .effect(action): (.effect, 0, action.serializedBytes())
      case let .probeAnswer(id): (.probeAnswer, id, [])
      case let .schedule(action, deadline, ids):
        (
          .schedule, deadline.bitPattern,
          JSONValue.object(["action": action, "ids": .array(ids.map(JSONValue.string))]).serializedBytes()
        )
      case let .cancelTimers(id): (.cancelTimers, 0, JSONValue.string(id).serializedBytes())
      case let .dependencies(id, readings): (.dependencies, id, readings.serializedBytes())
      }
    var time: UInt64?
    if case let .reduced(_, _, nanoseconds) = self { time = nanoseconds }
    return Parts(header: Header(kind: kind, number: number, time: time), text: text)
  }

  /// Decodes a frame's content (what follows the length prefix).
  ///
  /// - Parameter pointer: Where the feature's state lies in the composed state: the paths of
  ///   the patches in `reduced` and `change` frames are read under it, ready for the change log.
  package init(frame bytes: UnsafeRawBufferPointer, patchesUnder pointer: JSONPointer = .root) throws(WorkerError) {
    guard bytes.count >= 9, let kind = Kind(rawValue: bytes[0]) else {
      throw WorkerError.protocolViolation("a frame of \(bytes.count) bytes with kind \(bytes.first.map(String.init) ?? "none")")
    }
    var number: UInt64 = 0
    for byte in bytes[1..<9] { number = number << 8 | UInt64(byte) }
    let text = UnsafeRawBufferPointer(rebasing: bytes[9...])
    func body() throws(WorkerError) -> JSONValue {
      do {
        return try JSONValue(parsing: text)
      } catch {
        throw WorkerError.protocolViolation("a \(kind) frame whose body is not JSON: \(error)")
      }
    }
    func patch(_ text: UnsafeRawBufferPointer) throws(WorkerError) -> JSONPatch {
      do {
        return try JSONPatch(parsing: text, under: pointer)
      } catch {
        throw WorkerError.protocolViolation("a \(kind) frame whose body is not a JSON Patch: \(error)")
      }
    }
    switch kind {
    case .start: self = .start(state: try body(), restarted: number != 0)
    case .action: self = .action(id: number, action: try body())
    case .globalAction: self = .globalAction(id: number, text: Array(text))
    case .probe: self = .probe(id: number)
    case .ready: self = .ready
    case .reduced:
      guard text.count >= 8 else { throw WorkerError.protocolViolation("a reduced frame without the reducer's time") }
      let nanoseconds = text.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      let body = UnsafeRawBufferPointer(rebasing: text[8...])
      guard !body.isEmpty else {
        self = .reduced(id: number, patch: nil, nanoseconds: nanoseconds)
        return
      }
      self = .reduced(id: number, patch: try patch(body), nanoseconds: nanoseconds)
    case .change: self = .change(try patch(text))
    case .effect: self = .effect(action: try body())
    case .probeAnswer: self = .probeAnswer(id: number)
    case .schedule:
      let body = try body()
      guard let action = body["action"], case let .array(ids)? = body["ids"] else {
        throw WorkerError.protocolViolation("a schedule frame without an action and ids")
      }
      let names = ids.compactMap { if case let .string(id) = $0 { id } else { nil } }
      self = .schedule(action: action, deadline: Double(bitPattern: number), ids: names)
    case .cancelTimers:
      guard case let .string(id) = try body() else { throw WorkerError.protocolViolation("a cancelTimers frame without an id") }
      self = .cancelTimers(id: id)
    case .dependencies: self = .dependencies(id: number, readings: try body())
    }
  }

  /// The id and the body of an `action` or `globalAction` frame's content, the body left as
  /// text: the worker decodes its action straight from it. `nil` for a frame of another kind.
  package static func action(inFrame bytes: UnsafeRawBufferPointer) -> (id: UInt64, body: UnsafeRawBufferPointer, isGlobal: Bool)? {
    guard bytes.count >= 9, bytes[0] == Kind.action.rawValue || bytes[0] == Kind.globalAction.rawValue else { return nil }
    let id = bytes[1..<9].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    return (id, UnsafeRawBufferPointer(rebasing: bytes[9...]), bytes[0] == Kind.globalAction.rawValue)
  }

  /// The JSON text of an encoded `action` or `globalAction` frame, for a log line.
  package static func actionText(ofEncoded frame: ByteBuffer) -> String {
    String(decoding: frame.readableBytesView.dropFirst(4 + 9), as: UTF8.self)
  }

  /// `length`, read from a frame's 4-byte prefix, when it is a length either side accepts.
  package static func frameLength(_ length: Int) throws(WorkerError) -> Int {
    guard (9...Self.maximumFrameLength).contains(length) else {
      throw WorkerError.protocolViolation("a frame length of \(length) bytes")
    }
    return length
  }
}
