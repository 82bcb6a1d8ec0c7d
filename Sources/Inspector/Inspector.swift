import NIOCore
import NIOHTTP1
import SwitchyardJSON
import SwitchyardJournal
import SwitchyardMetrics

/// The inspector in the browser, mounted at ``path`` on the daemon's HTTP endpoint: the page
/// (``InspectorPage``), its JSON reads under `/inspector/api/` and the journal's new changes as
/// server-sent events at `/inspector/events`. Read-only unless `http.inspectorSend` is on: then
/// `POST /inspector/api/send` sends an action as the access policy lets the inspector
/// (``InspectorSend``).
///
/// Every request but the page's own files (the same for everyone, holding nothing of the
/// daemon) must carry the ``InspectorToken``, as `?token=` or `Authorization: Bearer`: the
/// endpoint is reachable by every local user, the journal only by admins.
///
/// ```swift
/// let inspector = Inspector(token: InspectorToken(), reads: reads)
/// listening.mounts.mount(inspector, at: Inspector.path)
/// ```
package struct Inspector: HTTPRoute {
  /// What the inspector reads of the running daemon, handed over as values and closures.
  package struct Reads: Sendable {
    /// The journal, when the daemon keeps one: the timeline, past states and the events.
    package var journal: JournalReader?
    /// `Status` and `Describe`'s features, as `switchyard status` reads them.
    package var health: @Sendable () -> JSONValue
    /// The state at a path now, with its seq.
    package var state: @Sendable (JSONPointer) -> (seq: UInt64, value: JSONValue)?
    /// `Replay` from `since` up to `until`, on the journal reader's thread, while the viewer waits.
    package var replay: (@Sendable (_ since: UInt64?, _ until: UInt64?, _ isWanted: @escaping @Sendable () -> Bool) async throws -> JSONValue)?
    /// Sending an action from the page; `nil` keeps the page read-only.
    package var send: InspectorSend?

    package init(
      journal: JournalReader?, health: @escaping @Sendable () -> JSONValue,
      state: @escaping @Sendable (JSONPointer) -> (seq: UInt64, value: JSONValue)?,
      replay: (@Sendable (UInt64?, UInt64?, @escaping @Sendable () -> Bool) async throws -> JSONValue)? = nil
    ) {
      self.journal = journal
      self.health = health
      self.state = state
      self.replay = replay
    }
  }

  package static let path = "/inspector"
  /// The most event streams open at once, over every viewer.
  package static var streamLimit: Int { 8 }

  let token: InspectorToken
  let reads: Reads
  let streams: ChangeStreams?

  package init(token: InspectorToken, reads: Reads) {
    self.token = token
    self.reads = reads
    self.streams = reads.journal.map { ChangeStreams(reader: $0, limit: Self.streamLimit) }
  }

  package func respond(to exchange: HTTPExchange) {
    let route = exchange.path.dropFirst(Self.path.count)
    if route == "/api/send" {
      guard exchange.method == .POST else {
        return exchange.respond(.methodNotAllowed, body: "an action is sent with POST\n", headers: [("Allow", "POST")])
      }
      return self.send(on: exchange)
    }
    guard exchange.method == .GET || exchange.method == .HEAD else {
      return exchange.respond(.methodNotAllowed, body: "only GET, but for POST /inspector/api/send\n", headers: [("Allow", "GET, HEAD")])
    }
    if route.hasPrefix("/assets/") {
      return InspectorPage.serveAsset(named: route.dropFirst("/assets/".count), on: exchange)
    }
    guard self.admits(exchange) else {
      return exchange.respond(
        .unauthorized,
        body: "the inspector needs its token: `switchyard status` prints its URL to the users who may read the journal\n",
        headers: [("WWW-Authenticate", "Bearer")]
      )
    }
    let query: InspectorQuery
    do throws(InspectorQuery.Refusal) {
      query = try InspectorQuery(parsing: exchange.query)
    } catch {
      return exchange.refuse(error)
    }
    switch route {
    case "", "/": InspectorPage.servePage(on: exchange)
    case "/api/health": exchange.respond(json: self.health)
    case "/api/journal": self.journal(query, on: exchange)
    case "/api/state": self.state(query, on: exchange)
    case "/api/replay": self.replay(query, on: exchange)
    case "/events": self.events(query, on: exchange)
    default: exchange.respond(.notFound, body: "not found: \(Self.path) has /api/health, /api/journal, /api/state, /api/replay, /events\n")
    }
  }

  /// The daemon's health, and whether the page may send actions (it shows a form then).
  private var health: JSONValue {
    guard case var .object(health) = self.reads.health() else { return self.reads.health() }
    health["inspector"] = ["send": .bool(self.reads.send?.isOn() ?? false)]
    return .object(health)
  }

  private func admits(_ exchange: HTTPExchange) -> Bool {
    if let bearer = exchange.headers.first(name: "Authorization"), bearer.hasPrefix("Bearer ") {
      return self.token.admits(bearer.dropFirst("Bearer ".count))
    }
    // The only parameter read before the token is known good, and only to compare it.
    for pair in exchange.query.split(separator: "&") where pair.hasPrefix("token=") {
      return self.token.admits(pair.dropFirst("token=".count))
    }
    return false
  }
}

extension HTTPExchange {
  func respond(json: JSONValue) {
    self.respond(.ok, contentType: "application/json", body: ByteBuffer(bytes: json.serializedBytes()))
  }

  func respond(jsonBytes: [UInt8]) {
    self.respond(.ok, contentType: "application/json", body: ByteBuffer(bytes: jsonBytes))
  }

  func refuse(_ refusal: InspectorQuery.Refusal) {
    let name = refusal.parameter.isEmpty ? "the query" : refusal.parameter
    self.respond(.badRequest, body: "\(String(name.prefix(64))): \(refusal.reason)\n")
  }

  /// An error as `{"error": …}`, which the page shows.
  func respond(_ status: HTTPResponseStatus, error: String, headers: [(String, String)] = []) {
    let body = JSONValue.object(["error": .string(error)]).serializedBytes()
    self.respond(status, contentType: "application/json", body: ByteBuffer(bytes: body), headers: headers)
  }
}
