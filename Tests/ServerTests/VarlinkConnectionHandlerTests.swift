import Logging
import NIOCore
import NIOEmbedded
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardVarlink
import Testing

@testable import SwitchyardServer

/// One connection's handler on an embedded channel: the order it answers in, what waits behind
/// a barrier, and what it reads while calls wait.
@Suite struct VarlinkConnectionHandlerTests {
  /// Answers `test.Now` at once with its parameters, and `test.Known` with `{"n":7}` known as it
  /// is read; holds `test.Later` and `test.Barrier` (a barrier) until the test finishes them.
  final class Responder: VarlinkResponder {
    let started = Mutex<[(method: String, answer: CallAnswer)]>([])
    /// The calls read so far: a `Send` is routed as it is read.
    let read = Mutex<[String]>([])

    func prepare(
      _ call: VarlinkCallFrame, caller: Caller?, whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> PreparedCall {
      let method = call.method
      self.read.withLock { $0.append(method) }
      let parameters = call.tree().parameters
      if method == "test.Known" { return .answered(.integerParameter("n", 7)) }
      if method == "test.Denied" {
        var denied = PreparedCall.failing(VarlinkError("test.Denied", [:]))
        denied.isDeniedByPolicy = true
        return denied
      }
      if method == "test.Now" {
        return PreparedCall { (answer: CallAnswer) in
          answer.reply(.reply(VarlinkReply(parameters: parameters)))
          answer.finish()
        }
      }
      return PreparedCall(isBarrier: method == "test.Barrier") { (answer: CallAnswer) in
        self.started.withLock { $0.append((method, answer)) }
      }
    }

    func error(for refusal: ServerRefusal) -> VarlinkError {
      VarlinkError("test.Refused", ["refusal": .string("\(refusal)")])
    }

    var startedMethods: [String] { self.started.withLock { $0.map(\.method) } }

    func finish(_ index: Int, with parameters: JSONObject) {
      let answer = self.started.withLock { $0[index].answer }
      answer.reply(.reply(VarlinkReply(parameters: parameters)))
      answer.finish()
    }
  }

  /// Counts the reads that reach the socket.
  final class ReadCounter: ChannelOutboundHandler {
    typealias OutboundIn = Never
    var reads = 0
    func read(context: ChannelHandlerContext) {
      self.reads += 1
      context.read()
    }
  }

  let responder = Responder()
  let reads = ReadCounter()
  let requests = RequestsInFlight()
  let channel = EmbeddedChannel()
  let server: ServerChannels

  /// - Parameter counts: Where the connection's refusals are counted, as listener 0's, for `uid 1000`.
  init(capacity: Int = 4, connectionLimit: Int = 10, counts: ListenerConnections? = nil) throws {
    let logger = Logger(label: "test")
    self.server = ServerChannels(counters: ServerCounters(), loop: self.channel.eventLoop)
    try self.channel.pipeline.syncOperations.addHandlers(
      self.reads,
      VarlinkConnectionHandler(
        responder: self.responder, server: self.server, caller: nil,
        log: ConnectionLog(logger: logger, peer: nil), capacity: capacity, connectionLimit: connectionLimit,
        refusals: ConnectionRefusals(log: ConnectionLog(logger: logger, peer: nil), counts: counts, identity: "uid 1000"),
        requests: self.requests
      )
    )
    try self.channel.connect(to: SocketAddress(unixDomainSocketPath: "/test")).wait()
  }

  func call(_ method: String, _ parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false) throws {
    let call = VarlinkCall(method: method, parameters: parameters, more: more, oneway: oneway)
    try self.channel.writeInbound(ByteBuffer(bytes: call.message.serializedBytes()))
  }

  /// Everything written and flushed so far, as messages.
  func replies() throws -> [JSONValue] {
    self.channel.embeddedEventLoop.run()
    var messages: [JSONValue] = []
    while var buffer = try self.channel.readOutbound(as: ByteBuffer.self) {
      let bytes = buffer.readBytes(length: buffer.readableBytes) ?? []
      for frame in bytes.split(separator: 0) { messages.append(try JSONValue(parsing: frame)) }
    }
    return messages
  }

  @Test func repliesComeInCallOrderWhateverOrderTheCallsAreDoneIn() throws {
    try self.call("test.Later", ["n": 1])
    try self.call("test.Now", ["n": 2])
    #expect(try self.replies() == [], "the second waits for the first")
    self.responder.finish(0, with: ["n": 1])
    #expect(try self.replies() == [["parameters": ["n": 1]], ["parameters": ["n": 2]]])
  }

  /// What tells the batched journal whether the loop has other requests than the one at hand.
  @Test func callsReadAndNotAnsweredAreCountedSubscriptionsLeftOut() throws {
    try self.call("test.Later", more: true)
    #expect(self.requests.count == 0, "a subscription lasts as long as its client wants")
    self.responder.finish(0, with: [:])
    let subscription = self.responder.started.withLock { $0[0].answer }
    subscription.finish()
    try self.call("test.Later")
    try self.call("test.Later")
    #expect(self.requests.count == 2 && self.requests.othersWaiting)
    self.responder.finish(1, with: [:])
    #expect(self.requests.count == 1 && !self.requests.othersWaiting)
    try self.channel.close().wait()
    #expect(self.requests.count == 0, "a call its client hung up on will never be answered")
  }

  @Test func nothingAfterABarrierIsReadUntilItIsAnswered() throws {
    try self.call("test.Barrier")
    try self.call("test.Later")
    #expect(self.responder.read.withLock { $0 } == ["test.Barrier"])
    self.responder.finish(0, with: [:])
    #expect(self.responder.read.withLock { $0 } == ["test.Barrier", "test.Later"])
    #expect(self.responder.startedMethods == ["test.Barrier", "test.Later"])
    #expect(try self.replies() == [["parameters": [:]]])
  }

  @Test func pastItsCapacityTheConnectionStopsReadingTheSocket() throws {
    let handler = try Self(capacity: 2)
    try handler.call("test.Later")
    try handler.call("test.Later")
    let readsWhileFull = handler.reads.reads
    handler.channel.read()
    #expect(handler.reads.reads == readsWhileFull, "two calls wait: no read reaches the socket")
    try handler.call("test.Later")
    #expect(handler.responder.startedMethods.count == 1, "the third frame waits unread")
    handler.responder.finish(0, with: [:])
    #expect(handler.reads.reads == readsWhileFull, "the waiting frame took the room")
    handler.responder.finish(1, with: [:])
    #expect(handler.reads.reads == readsWhileFull + 1, "room again: the held read goes on")
  }

  @Test func aOnewayCallIsAnsweredWithNothingNotEvenAnError() throws {
    try self.call("test.Now", ["n": 1], oneway: true)
    try self.call("test.Later", oneway: true)
    let answer = self.responder.started.withLock { $0[0].answer }
    answer.finish(.methodNotFound("test.Later"))
    try self.call("test.Now", ["n": 3])
    #expect(try self.replies() == [["parameters": ["n": 3]]])
  }

  @Test func anAnswerAfterTheCallFinishedIsDropped() throws {
    try self.call("test.Later")
    let answer = self.responder.started.withLock { $0[0].answer }
    answer.finish()
    answer.reply(.reply(VarlinkReply(parameters: ["late": true])))
    answer.finish(.methodNotFound("x"))
    try self.call("test.Now", ["n": 2])
    #expect(try self.replies() == [["parameters": ["n": 2]]])
  }

  @Test func aReplyKnownAsTheCallWasReadIsWrittenInItsTurn() throws {
    try self.call("test.Later")
    try self.call("test.Known")
    #expect(try self.replies() == [], "it waits for the call before it")
    self.responder.finish(0, with: ["n": 1])
    #expect(try self.replies() == [["parameters": ["n": 1]], ["parameters": ["n": 7]]])
  }

  @Test func aDrainingServerRefusesTheCallsItReadAndDidNotStartThenCloses() throws {
    let handler = try Self(capacity: 1)
    try handler.call("test.Later")
    try handler.call("test.Now", ["n": 2])
    try handler.call("test.Now", ["n": 3], oneway: true)
    handler.server.drain()
    handler.channel.embeddedEventLoop.run()
    #expect(handler.channel.isActive, "a call is in flight: it is answered first")
    handler.responder.finish(0, with: ["n": 1])
    let refused: JSONValue = ["error": "test.Refused", "parameters": ["refusal": "shuttingDown"]]
    #expect(try handler.replies() == [["parameters": ["n": 1]], refused], "the one-way call is refused with nothing written")
    #expect(handler.responder.startedMethods == ["test.Later"], "the responder never saw the calls refused")
    #expect(!handler.channel.isActive, "closed once every call is answered")
  }

  @Test func aCloseFromOutsideSendsWhatThisTurnWroteFirst() throws {
    try self.call("test.Later")
    // Answered and not flushed yet (the flush is due at the end of this turn), then a drain
    // closes the connection as idle before that flush runs.
    self.responder.finish(0, with: ["n": 1])
    self.channel.close(promise: nil)
    #expect(try self.replies() == [["parameters": ["n": 1]]])
    #expect(!self.channel.isActive)
  }

  @Test func aConnectionOverTheLimitIsCountedUnderItsListener() throws {
    let counts = ListenerConnections()
    _ = counts.register("unix:/test")
    _ = try Self(connectionLimit: 0, counts: counts)
    #expect(counts.snapshot[0].refusedConnections == 1)
    #expect(counts.snapshot[0].deniedCalls.isEmpty)
  }

  @Test func aCallThePolicyDeniesIsCountedUnderItsListenerAndIdentityAndNoOtherCallIs() throws {
    let counts = ListenerConnections()
    _ = counts.register("unix:/test")
    let handler = try Self(counts: counts)
    try handler.call("test.Denied")
    try handler.call("test.Now")
    try handler.call("test.Denied")
    #expect(try handler.replies().count == 3)
    #expect(counts.snapshot[0].deniedCalls == ["uid 1000": 2])
    #expect(counts.snapshot[0].refusedConnections == 0)
  }

  @Test func aConnectionOverTheLimitGetsTheRespondersErrorAndCloses() throws {
    let handler = try Self(connectionLimit: 0)
    #expect(try handler.replies() == [["error": "test.Refused", "parameters": ["refusal": "tooManyConnections(limit: 0)"]]])
    #expect(!handler.channel.isActive)
  }
}
