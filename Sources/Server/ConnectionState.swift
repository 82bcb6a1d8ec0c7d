import DequeModule

/// What the state of a connection needs to know of a call it has started.
protocol ConnectionCall {
  /// Nothing read after the call starts until it is answered.
  var isBarrier: Bool { get }
  /// The client wants no reply: nothing is written for the call.
  var oneway: Bool { get }
  /// The client wants every reply until one without `continues` (a subscription).
  var more: Bool { get }
}

/// One connection's state, and what it goes through: frames read, calls started in order and
/// answered in that order one at a time, reads held, a drain, the close.
///
/// A value with no I/O in it: each transition says what the connection does next, and
/// ``VarlinkConnectionHandler`` does it. The connection:
/// - starts each frame as a call as soon as it is read, unless `capacity` calls are started and
///   not answered, or a barrier call (one the responder wants answered before anything after it
///   is read) waits: then frames wait unread;
/// - answers its calls one after another, in call order, each once the one before it is
///   finished and the client reads what it was sent (``writabilityChanged(_:)``);
/// - reads the socket only while no frame waits and there is room for another call, so a client
///   that pipelines without end fills its own socket buffer;
/// - when the server drains, starts nothing more: each frame read and not started is answered
///   with a refusal, in its turn, and the connection closes once its last call is answered;
/// - once closed, takes no frame and no answer.
///
/// ```swift
/// var state = ConnectionState<Frame, Call>(capacity: 16)
/// state.read(frame)
/// while true {
///   switch state.next() {
///   case let .startCall(frame): state.started(call(from: frame))
///   case let .answer(call, number): answer(call, number)   // later: state.finish(number)
///   case .resumeReading: socket.read()
///   case .close: socket.close(); return
///   case .wait: return
///   }
/// }
/// ```
struct ConnectionState<Frame, Call: ConnectionCall> {
  /// What the connection does next, as ``next()`` says.
  enum Step {
    /// Make a call of `frame` (read its envelope, hand it to the responder), and give it back to
    /// ``started(_:)``.
    case startCall(Frame)
    /// The server drains: make of `frame` a call that refuses, untouched by the responder (the
    /// client then knows it did nothing), and give it back to ``started(_:)``.
    case refuseCall(Frame)
    /// The first call's turn: answer it. Its replies are for call `number`
    /// (``isAnswering(_:)``), and it ends with ``finish(_:)``.
    case answer(Call, number: UInt64)
    /// Read the socket again: reads were held, and there is room now.
    case resumeReading
    /// The connection drained: flush what was written, and close.
    case close
    /// The calls started are answered: flush what was written, and hand the connection over
    /// with the frames read and not started (``handOver()``).
    case handOver
    /// Nothing to do until a frame is read, a call is answered or the client reads.
    case wait
  }

  /// Whether the socket is read when the channel asks (``readRequested()``).
  enum ReadDecision: Equatable {
    case read
    /// Held until ``next()`` says ``Step/resumeReading``.
    case hold
  }

  /// The most calls started and not answered.
  let capacity: Int
  private(set) var phase = ConnectionPhase.open
  /// Frames read and not started, behind a barrier or past the capacity.
  private var frames = Deque<Frame>()
  /// Calls started and not answered, in call order; the first is the one being answered.
  private var calls = Deque<Call>()
  /// The number of the first of `calls`: calls are numbered in the order they are read.
  private(set) var firstCall: UInt64 = 0
  /// The first call was handed out to be answered.
  private(set) var isFirstAnswering = false
  /// The channel asked for a read that was not made.
  private(set) var isReadHeld = false
  /// The client leaves at most `maxUnwrittenBytes` unread.
  private(set) var isWritable = true
  /// Frames are being read: what is written meanwhile is flushed when the read is complete.
  private(set) var isReading = false
  /// Something was written and not flushed.
  private(set) var isFlushDue = false
  /// A flush after this turn of the event loop was asked for.
  private(set) var isFlushScheduled = false

  init(capacity: Int) {
    self.capacity = max(1, capacity)
  }

  /// Frames read and not started.
  var framesWaiting: Int { self.frames.count }
  /// Calls started and not answered, the one being answered included.
  var callsInFlight: Int { self.calls.count }

  /// Whether there is room for what another read brings.
  private var hasRoom: Bool {
    self.frames.isEmpty && self.calls.count < self.capacity
  }

  // MARK: Reading

  /// A frame was read; it starts when ``next()`` says so.
  mutating func read(_ frame: Frame) {
    guard self.phase != .closed else { return }
    self.isReading = true
    self.frames.append(frame)
  }

  /// The read is complete; returns whether to flush now (what was written while reading).
  mutating func readComplete() -> Bool {
    self.isReading = false
    return self.isFlushDue && self.phase != .closed
  }

  /// The channel asks to read the socket: it may while there is room for what a read brings.
  mutating func readRequested() -> ReadDecision {
    if self.hasRoom && (self.phase == .open || self.phase == .draining) { return .read }
    self.isReadHeld = true
    return .hold
  }

  /// Whether the client leaves at most `maxUnwrittenBytes` unread; no call is answered while
  /// it does not.
  mutating func writabilityChanged(_ isWritable: Bool) {
    self.isWritable = isWritable
  }

  // MARK: Calls

  /// What the connection does next. Called until it says ``Step/wait`` (or ``Step/close``):
  /// frames become calls while there is room and no barrier waits, then the first call is
  /// answered once the one before it is finished and the client reads.
  mutating func next() -> Step {
    guard self.phase != .closed else { return .wait }
    if self.phase == .open, self.calls.count < self.capacity, self.calls.last?.isBarrier != true,
      let frame = self.frames.popFirst()
    {
      return .startCall(frame)
    }
    if self.phase == .draining, self.calls.count < self.capacity, let frame = self.frames.popFirst() {
      return .refuseCall(frame)
    }
    if !self.isFirstAnswering, self.isWritable, let first = self.calls.first {
      self.isFirstAnswering = true
      return .answer(first, number: self.firstCall)
    }
    if self.phase == .draining && self.calls.isEmpty {
      self.close()
      return .close
    }
    if self.phase == .handingOver && self.calls.isEmpty {
      return .handOver
    }
    if self.isReadHeld && self.hasRoom {
      self.isReadHeld = false
      return .resumeReading
    }
    return .wait
  }

  /// The call made of the frame ``next()`` handed out: it is answered after the calls before it.
  mutating func started(_ call: Call) {
    guard self.phase != .closed else { return }
    self.calls.append(call)
  }

  /// Whether a reply to call `number` is written: only to the call being answered, and only
  /// when its client wants replies.
  func isAnswering(_ number: UInt64) -> Bool {
    number == self.firstCall && self.isFirstAnswering && self.calls.first?.oneway == false
  }

  /// Ends call `number`, and returns it; `nil` when it is not the call being answered (it
  /// finished already, or the connection closed): then nothing changes.
  mutating func finish(_ number: UInt64) -> Call? {
    guard number == self.firstCall, self.isFirstAnswering, let first = self.calls.popFirst() else { return nil }
    self.firstCall &+= 1
    self.isFirstAnswering = false
    return first
  }

  // MARK: Flushing

  /// Something was written; returns whether to schedule a flush after this turn of the event
  /// loop. Written while reading, the read's end flushes instead (``readComplete()``).
  mutating func wrote() -> Bool {
    self.isFlushDue = true
    guard !self.isReading, !self.isFlushScheduled, self.phase != .closed else { return false }
    self.isFlushScheduled = true
    return true
  }

  /// The flush scheduled by ``wrote()`` runs; returns whether something is still to flush.
  mutating func scheduledFlushRuns() -> Bool {
    self.isFlushScheduled = false
    return self.isFlushDue && self.phase != .closed
  }

  /// What was written went out.
  mutating func flushed() {
    self.isFlushDue = false
  }

  // MARK: Ending

  /// The server drains: no call starts any more, frames read are refused in their turn
  /// (``Step/refuseCall(_:)``), and the connection closes once every call is answered.
  ///
  /// Refused rather than dropped: a client whose call goes unanswered cannot tell whether it
  /// was carried out, and must not make it again; a refusal says it was not.
  mutating func drain() {
    guard self.phase == .open else { return }
    self.phase = .draining
  }

  /// The server hands the connection over: no call starts any more, frames read are kept for
  /// the next process, nothing more is read, and ``next()`` says ``Step/handOver`` once the
  /// calls started are answered.
  mutating func startHandingOver() {
    guard self.phase == .open else { return }
    self.phase = .handingOver
  }

  /// The connection goes to the next process: returns the frames read and not started, and
  /// takes nothing more.
  mutating func handedOver() -> Deque<Frame> {
    let frames = self.frames
    self.close()
    return frames
  }

  /// The connection closed; returns the calls that will never be answered.
  @discardableResult
  mutating func close() -> Deque<Call> {
    self.phase = .closed
    self.frames.removeAll()
    self.isFirstAnswering = false
    self.isReadHeld = false
    let unanswered = self.calls
    self.calls.removeAll()
    return unanswered
  }

  /// The state as plain data, for a log line or to hand the connection over.
  var snapshot: ConnectionSnapshot {
    var calls: [ConnectionSnapshot.Call] = []
    calls.reserveCapacity(self.calls.count)
    for (offset, call) in self.calls.enumerated() {
      calls.append(
        .init(
          number: self.firstCall &+ UInt64(offset), isBarrier: call.isBarrier, oneway: call.oneway, more: call.more,
          isAnswering: offset == 0 && self.isFirstAnswering
        )
      )
    }
    return ConnectionSnapshot(
      phase: self.phase, capacity: self.capacity, framesWaiting: self.frames.count, firstCall: self.firstCall, calls: calls,
      isReadHeld: self.isReadHeld, isWritable: self.isWritable, isReading: self.isReading, isFlushDue: self.isFlushDue
    )
  }
}
