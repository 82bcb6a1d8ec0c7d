import Foundation
import Logging
import NIOCore
import PrimeTime
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardVarlink
import SwitchyardWorkers
import Testing

@testable import SwitchyardDaemon
@testable import SwitchyardRuntime
@testable import SwitchyardSystemd

/// The responder without a socket: every method of `io.switchyard.Store` and
/// `org.varlink.service`, and every error it answers with, as a client would read them.
@Suite struct StoreResponderTests {
  typealias Responder = StoreResponder

  /// PrimeTime in actors, and a responder over it; with `routingOnTheLoop`, one that reduces
  /// what it routes on the actors' loop while it routes, as the daemon's does.
  func responder(routingOnTheLoop: Bool = false, configuration: DaemonConfiguration = DaemonConfiguration()) async throws -> Responder {
    let application = Application(
      initialState: App.State(),
      features: [
        .actor("primes", state: \.primes, action: App.primesRoute) { Primes() },
        .actor("activityFeed", state: \.activityFeed, action: App.activityFeedRoute, withDependencies: {
          $0.date.now = Date(timeIntervalSince1970: 0)
        }) { ActivityFeed() },
      ]
    )
    let hosted = try await RunningFeatures.start(
      application,
      configuration: configuration,
      launch: WorkerLaunch(logLevel: SharedLogLevel(.info)),
      encodeChange: { Responder.encodeChange(seq: $0, patch: $1) },
      logger: Logger(label: "test")
    )
    return StoreResponder(
      router: hosted.router, drains: routingOnTheLoop ? hosted.drains : nil,
      changeLog: hosted.changeLog, subscriptions: hosted.subscriptions,
      features: application.features, workers: [:],
      configuration: LiveConfiguration(configuration, logLevel: SharedLogLevel(.info)),
      counters: ServerCounters(), logger: Logger(label: "test")
    )
  }

  /// Root: allowed everything.
  let root = Caller(pid: 1, uid: 0, gid: 0)

  /// An encoded message (one frame, with its NUL) as a tree.
  static func message(_ bytes: ByteBuffer) throws -> JSONValue {
    try bytes.withUnsafeReadableBytes { try JSONValue(parsing: $0.dropLast()) }
  }

  /// What `call` answers: its replies, then its error if it ends with one.
  func answer(
    _ responder: Responder, _ method: String, _ parameters: JSONObject = [:], more: Bool = false,
    caller: Caller? = Caller(pid: 1, uid: 0, gid: 0), replies limit: Int = .max
  ) async -> (replies: [JSONValue], error: SwitchyardError?) {
    let replies = Mutex<[JSONValue]>([])
    let call = VarlinkCall(method: method, parameters: parameters, more: more)
    let prepared = try! VarlinkCallFrame.reading(call) { responder.prepare($0, caller: caller, whenClosed: { _ in }) }
    let finished = AsyncStream.makeStream(of: VarlinkError?.self)
    prepared.start(
      CallAnswer(
        reply: { outgoing in
          let messages: [JSONValue]
          switch outgoing {
          case let .reply(reply): messages = [reply.message]
          case let .integerParameter(name, value): messages = [VarlinkReply(parameters: ["\(name)": .int(Int64(value))]).message]
          case let .encoded(bytes): messages = [try! Self.message(bytes)]
          case let .encodedBatch(buffers): messages = try! buffers.map(Self.message)
          }
          let count = replies.withLock { replies in
            replies.append(contentsOf: messages)
            return replies.count
          }
          if count >= limit { finished.continuation.yield(nil) }
        },
        finish: { error in finished.continuation.yield(error) }
      )
    )
    var outcome = finished.stream.makeAsyncIterator()
    let error = await outcome.next() ?? nil
    return (replies.withLock { $0 }, error.map { SwitchyardError($0) })
  }

  @Test func sendRoutesTheActionAndAnswersWithTheSequenceNumber() async throws {
    let responder = try await self.responder()
    let sent = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    #expect(sent.replies == [["parameters": ["seq": 1]]])
    let batch = await self.answer(
      responder, "io.switchyard.Store.SendBatch",
      ["actions": [["counter": ["incrTapped": [:]]], ["counter": ["decrTapped": [:]]]]]
    )
    #expect(batch.replies == [["parameters": ["seq": 3]]])
    let got = await self.answer(responder, "io.switchyard.Store.Get", ["path": "/primes/count"])
    #expect(got.replies == [["parameters": ["seq": 3, "state": 1]]])
  }

  /// On the loop of the actors it goes to, a `Send` is reduced while it is routed: what answers
  /// it is known as it is read, and it is the same reply.
  @Test func aSendReducedWhileItIsRoutedIsAnsweredAsItIsRead() async throws {
    let responder = try await self.responder(routingOnTheLoop: true)
    let send = VarlinkCall(method: "io.switchyard.Store.Send", parameters: ["action": ["counter": ["incrTapped": [:]]]])
    let prepared = try await responder.drains!.loop.submit {
      try VarlinkCallFrame.reading(send) { responder.prepare($0, caller: self.root, whenClosed: { _ in }) }
    }.get()
    #expect(prepared.sequenceNumber == 1)
    let again = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    #expect(again.replies == [["parameters": ["seq": 2]]])
    let refused = try await responder.drains!.loop.submit {
      try VarlinkCallFrame.reading(VarlinkCall(
        method: "io.switchyard.Store.Send", parameters: ["action": ["counter": ["nthPrimeResponse": ["n": 1, "prime": 2]]]]
      )) { responder.prepare($0, caller: self.root, whenClosed: { _ in }) }
    }.get()
    #expect(refused.sequenceNumber == nil)
  }

  @Test func subscribeStartsWithASnapshotThenSendsEachChange() async throws {
    let responder = try await self.responder()
    let subscription = Task {
      await self.answer(responder, "io.switchyard.Store.Subscribe", ["path": "/primes/count"], more: true, replies: 2)
    }
    while responder.subscriptions.count == 0 { try await Task.sleep(for: .milliseconds(5)) }
    _ = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    let (replies, error) = await subscription.value
    #expect(error == nil)
    #expect(replies.count == 2)
    #expect(replies.first?["parameters"]?["state"] == 0)
    #expect(replies.first?["parameters"]?["history"] == .string(responder.changeLog.historyID))
    #expect(replies.last == ["parameters": ["seq": 1, "patch": [["op": "replace", "path": "", "value": 1]]], "continues": true])
  }

  @Test func aChangeIsFramedAsTheReplyTreeWouldBe() {
    let patch = JSONPatch(operations: [.replace(path: "/primes/count", value: 3), .remove(path: "/a~1b")])
    let tree = VarlinkReply(parameters: ["seq": 12_345, "patch": patch.jsonValue], continues: true)
    #expect(Array(buffer: Responder.encodeChange(seq: 12_345, patch: patch)) == tree.frame())
  }

  @Test func describeStatusAndTheServiceInterfaceAnswer() async throws {
    let responder = try await self.responder()
    let described = await self.answer(responder, "io.switchyard.Store.Describe")
    #expect(described.replies.first?["parameters"]?["features"]?[0]?["name"] == "primes")
    #expect(described.replies.first?["parameters"]?["features"]?[0]?["cases"]?[0]?["payload"]?[0]?["type"] == "Counter.Action")
    #expect(described.replies.first?["parameters"]?["features"]?[1]?["cases"]?[0]?["name"] == "added")
    // The activity feed's timestamps, found from its types: dates are RFC 3339 text.
    #expect(described.replies.first?["parameters"]?["features"]?[1]?["dates"] == ["state": ["/*/timestamp"], "action": []])
    #expect(described.replies.first?["parameters"]?["features"]?[0]?["dates"] == ["state": [], "action": []])
    #expect(described.replies.first?["parameters"]?["access"]?["admin"] == true)
    let status = await self.answer(responder, "io.switchyard.Store.Status")
    #expect(status.replies.first?["parameters"]?["features"] == 2)
    let info = await self.answer(responder, "org.varlink.service.GetInfo")
    #expect(info.replies.first?["parameters"]?["version"] == .string(switchyardVersion))
    let description = await self.answer(
      responder, "org.varlink.service.GetInterfaceDescription", ["interface": "io.switchyard.Store"]
    )
    #expect(description.replies.first?["parameters"]?["description"] == .string(StoreInterface.description))
  }

  @Test("every error, as the client reads it", arguments: [
    ("io.switchyard.Store.Send", ["action": ["counter": ["nope": [:]]]], SwitchyardError.invalidAction(reason: "unknown case \"nope\"", path: "counter.nope")),
    ("io.switchyard.Store.Send", ["action": ["signUp": ["submitTapped": [:]]]], .actionNotRouted(index: 0)),
    ("io.switchyard.Store.Send", ["action": ["counter": ["restarted": [:]]]], .internalAction(index: 0, feature: "primes", action: "counter.restarted")),
    ("io.switchyard.Store.Send", [:], .invalidParameter(parameter: "action")),
    ("io.switchyard.Store.SendBatch", ["actions": 1], .invalidParameter(parameter: "actions")),
    ("io.switchyard.Store.Get", ["path": "/nope"], .pathNotFound(path: "/nope")),
    ("io.switchyard.Store.Get", ["path": "nope"], .invalidParameter(parameter: "path")),
    ("io.switchyard.Store.Subscribe", [:], .expectedMore),
    ("io.switchyard.Store.Explode", [:], .methodNotFound(method: "io.switchyard.Store.Explode")),
    ("org.varlink.service.Explode", [:], .methodNotFound(method: "org.varlink.service.Explode")),
    ("com.example.Nope.Get", [:], .interfaceNotFound(interface: "com.example.Nope")),
    ("org.varlink.service.GetInterfaceDescription", ["interface": "io.nope"], .interfaceNotFound(interface: "io.nope")),
  ] as [(String, JSONObject, SwitchyardError)])
  func errors(_ method: String, _ parameters: JSONObject, _ expected: SwitchyardError) async throws {
    let responder = try await self.responder()
    let (replies, error) = await self.answer(responder, method, parameters)
    #expect(replies.isEmpty)
    #expect(error == expected)
  }

  @Test func aCallerTheKernelDidNotNameMayDoNothing() async throws {
    let responder = try await self.responder()
    let (_, error) = await self.answer(responder, "io.switchyard.Store.Get", caller: nil)
    guard case .permissionDenied(method: "io.switchyard.Store.Get", _, nil, _)? = error else {
      Issue.record("expected PermissionDenied, got \(String(describing: error))")
      return
    }
  }

  @Test func aSubscriptionToAPathThatIsRemovedEndsWithPathNotFound() async throws {
    let responder = try await self.responder()
    _ = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    _ = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["counter": ["incrTapped": [:]]]])
    _ = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["primeModal": ["saveFavoritePrimeTapped": [:]]]])
    let subscription = Task {
      await self.answer(responder, "io.switchyard.Store.Subscribe", ["path": "/primes/favoritePrimes/0"], more: true)
    }
    while responder.subscriptions.count == 0 { try await Task.sleep(for: .milliseconds(5)) }
    _ = await self.answer(responder, "io.switchyard.Store.Send", ["action": ["primeModal": ["removeFavoritePrimeTapped": [:]]]])
    let (replies, error) = await subscription.value
    #expect(replies.count == 1, "the snapshot")
    #expect(error == .pathNotFound(path: "/primes/favoritePrimes/0"))
  }
}
