import Foundation
import Logging
import NIOCore
import SwitchyardJSON
import SwitchyardSynchronization
import SwitchyardTestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

@testable import SwitchyardInspector
@testable import SwitchyardMetrics

/// `POST /inspector/api/send` on a real endpoint, with the daemon's side (the policy, the
/// router) stood in for by what it answers: who may reach it, what body it takes, and how each
/// outcome is told to the page. (The daemon's side is tested in StoreResponderInspectorTests,
/// and the whole through a browser in Tests/Python/test_inspector_browser.py.)
@Suite struct InspectorSendTests {
  static let token = "0123456789abcdef"
  static let incr = #"{"action":{"counter":{"incrTapped":{}}}}"#

  /// What the daemon's side was asked, and what it answers.
  final class Daemon: Sendable {
    let isOn: Mutex<Bool>
    let outcome: Mutex<InspectorSend.Outcome>
    let sent = Mutex<[JSONObject]>([])

    init(isOn: Bool, outcome: InspectorSend.Outcome = .sent(["seq": 7])) {
      self.isOn = Mutex(isOn)
      self.outcome = Mutex(outcome)
    }

    var send: InspectorSend {
      InspectorSend(isOn: { self.isOn.withLock { $0 } }) { parameters, answer in
        self.sent.withLock { $0.append(parameters) }
        let outcome = self.outcome.withLock { $0 }
        // From another thread, as the daemon's loop answers.
        DispatchQueue.global().async { answer(outcome) }
      }
    }
  }

  @Test func offItIsRefusedAndThePageIsToldNotToShowItsForm() async throws {
    let daemon = Daemon(isOn: false)
    try await Self.serving(daemon) { port in
      let refused = await HTTPAnswer.post(port, Self.incr)
      #expect(refused.status == 403)
      #expect(refused.json["error"]?.description.contains("http.inspectorSend") == true)
      let health = await HTTPAnswer.get(port, "/inspector/api/health?token=\(Self.token)")
      #expect(health.json["inspector"] == ["send": false])
      daemon.isOn.withLock { $0 = true }
      #expect(await HTTPAnswer.get(port, "/inspector/api/health?token=\(Self.token)").json["inspector"] == ["send": true])
    }
    #expect(daemon.sent.withLock { $0 }.isEmpty)
  }

  @Test func onTheActionGoesToTheDaemonAndItsReplyToThePage() async throws {
    let daemon = Daemon(isOn: true)
    try await Self.serving(daemon) { port in
      let sent = await HTTPAnswer.post(port, Self.incr)
      #expect(sent.status == 200)
      #expect(sent.json == ["seq": 7])
    }
    #expect(daemon.sent.withLock { $0 } == [["action": ["counter": ["incrTapped": [:]]]]])
  }

  @Test func eachRefusalOfTheDaemonHasItsStatusAndReason() async throws {
    let outcomes: [(InspectorSend.Outcome, Int)] = [
      (.denied(reason: "the access policy does not let the inspector send counter.incrTapped", error: .null), 403),
      (.invalid(reason: "counter.nope: no such case", error: .null), 400),
      (.unavailable(reason: "shutting down", error: .null), 503),
    ]
    for (outcome, status) in outcomes {
      let daemon = Daemon(isOn: true, outcome: outcome)
      try await Self.serving(daemon) { port in
        let answer = await HTTPAnswer.post(port, Self.incr)
        #expect(answer.status == status)
        #expect(answer.json["error"] != nil)
      }
    }
  }

  /// Nothing but the page itself, holding the token, gets an action to the daemon: no token, the
  /// token only in the query (as a link could carry it), a form's content type, another origin.
  @Test func onlyTheTokenInAHeaderWithJSONFromTheSameOriginIsTaken() async throws {
    let daemon = Daemon(isOn: true)
    try await Self.serving(daemon) { port in
      #expect(await HTTPAnswer.post(port, Self.incr, headers: ["Content-Type": "application/json"]).status == 401)
      #expect(
        await HTTPAnswer.post(port, Self.incr, path: "/inspector/api/send?token=\(Self.token)", headers: ["Content-Type": "application/json"]).status
          == 401
      )
      let form = Self.authorized.merging(["Content-Type": "application/x-www-form-urlencoded"]) { $1 }
      #expect(await HTTPAnswer.post(port, Self.incr, headers: form).status == 415)
      let foreign = Self.authorized.merging(["Origin": "http://evil.example"]) { $1 }
      #expect(await HTTPAnswer.post(port, Self.incr, headers: foreign).status == 403)
      let own = Self.authorized.merging(["Origin": "http://127.0.0.1:\(port)"]) { $1 }
      #expect(await HTTPAnswer.post(port, Self.incr, headers: own).status == 200)
      #expect(await HTTPAnswer.get(port, "/inspector/api/send?token=\(Self.token)").status == 405)
    }
    #expect(daemon.sent.withLock { $0 }.count == 1)
  }

  /// A body too large, not JSON, too deep, or not `Send`'s parameters is refused before the
  /// daemon sees it, and the endpoint goes on serving.
  @Test func aBadBodyIsRefusedAndTheEndpointGoesOn() async throws {
    let daemon = Daemon(isOn: true)
    try await Self.serving(daemon) { port in
      let large = #"{"action":{"counter":{"incrTapped":{"pad":""# + String(repeating: "x", count: HTTPRequestBody.limit) + #""}}}}"#
      #expect(await HTTPAnswer.post(port, large).status == 413)
      #expect(await HTTPAnswer.post(port, #"{"action":"#).status == 400)
      #expect(await HTTPAnswer.post(port, String(repeating: "[", count: 10_000)).status == 400)
      #expect(await HTTPAnswer.post(port, "\u{FF}\u{FE}").status == 400)
      #expect(await HTTPAnswer.post(port, #"[1, 2]"#).status == 400)
      #expect(await HTTPAnswer.post(port, #"{"action":{},"method":"io.switchyard.Store.Backup"}"#).status == 400)
      #expect(await HTTPAnswer.post(port, "").status == 400)
      #expect(await HTTPAnswer.post(port, Self.incr).status == 200)
    }
    #expect(daemon.sent.withLock { $0 }.count == 1)
  }

  static var authorized: [String: String] {
    ["Authorization": "Bearer \(Self.token)", "Content-Type": "application/json"]
  }

  /// Runs `body` with the port of an endpoint serving an inspector whose sends go to `daemon`.
  static func serving(_ daemon: Daemon, _ body: (Int) async throws -> Void) async throws {
    let bound = AsyncStream.makeStream(of: SocketAddress.self)
    var server = MetricsHTTPServer(host: "127.0.0.1", port: 0, metrics: DaemonMetrics(features: []), logger: Logger(label: "test"))
    server.onListening = { bound.continuation.yield($0) }
    var reads = Inspector.Reads(journal: nil, health: { ["status": [:]] }, state: { _ in nil })
    reads.send = daemon.send
    server.mounts.mount(Inspector(token: InspectorToken(Self.token), reads: reads), at: Inspector.path)
    let running = Task { [server] in try await server.run() }
    defer { running.cancel() }
    var addresses = bound.stream.makeAsyncIterator()
    let port = try #require(await addresses.next()?.port)
    try await body(port)
  }
}

/// One request on a connection of its own to 127.0.0.1, read to its end off the pool (the
/// endpoint's answers need it): its status and body.
struct HTTPAnswer {
  let status: Int
  let body: String
  var json: JSONValue { (try? JSONValue(parsing: Array(self.body.utf8))) ?? .null }

  static func post(
    _ port: Int, _ body: String, path: String = "/inspector/api/send", headers: [String: String] = InspectorSendTests.authorized
  ) async -> Self {
    await offThePool { self.exchange(port, "POST", path, headers: headers, body: Array(body.utf8)) }
  }

  static func get(_ port: Int, _ path: String) async -> Self {
    await offThePool { self.exchange(port, "GET", path, headers: [:], body: []) }
  }

  /// Status 0 when the connection could not be made.
  private static func exchange(_ port: Int, _ method: String, _ path: String, headers: [String: String], body: [UInt8]) -> Self {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(UInt16(port).bigEndian)
    inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard connected == 0 else { return Self(status: 0, body: "") }
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
    for (name, value) in headers { head += "\(name): \(value)\r\n" }
    let request = Array((head + "\r\n").utf8) + body
    _ = request.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    var answer: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = recv(fd, &buffer, buffer.count, 0)
      if count <= 0 { break }
      answer += buffer[..<count]
    }
    let text = String(decoding: answer, as: UTF8.self)
    let status = Int(text.split(separator: " ").dropFirst().first ?? "") ?? 0
    let split = text.range(of: "\r\n\r\n")
    return Self(status: status, body: split.map { String(text[$0.upperBound...]) } ?? "")
  }
}
