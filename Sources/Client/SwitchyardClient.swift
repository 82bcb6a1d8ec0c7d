import Logging
import SwitchyardSynchronization
import SwitchyardJSON
import SwitchyardVarlink

/// A client of `switchyardd`: sends actions to the application's features, reads its state and
/// follows every change to it, over Varlink (`io.switchyard.Store`) on a Unix socket.
///
/// The client is generic over the application's actions and state, which travel as the JSON of
/// their `Codable` encoding:
///
/// ```swift
/// import PrimeTime
/// import SwitchyardClient
///
/// let client = SwitchyardClient<App.Action, App.State>(socketPath: "run/switchyard.sock")
/// let seq = try await client.send(.counter(.incrTapped))
/// let (_, state) = try await client.get()
/// print(seq, state.primes.count)
///
/// for try await (seq, state) in client.subscribe() {
///   print(seq, state.primes.favoritePrimes)
/// }
/// ```
///
/// Calls share one connection and are pipelined: each is written at once and the replies come
/// back in call order. Each subscription has a connection of its own, so sends are never queued
/// behind a stream, and resumes by itself when its connection drops.
///
/// To talk to a daemon without the application's types, use `JSONValue` for both:
/// `SwitchyardClient<JSONValue, JSONValue>`.
public final class SwitchyardClient<Action: Encodable & Sendable, State: Decodable & Sendable>: Sendable {
  /// How a client connects and reconnects.
  public struct Configuration: Sendable {
    /// The largest reply the client accepts, in bytes; a larger one closes its connection.
    public var maximumMessageBytes: Int = 64 << 20
    /// How long a subscription waits before its first attempt to reconnect; each failed attempt
    /// doubles the wait, up to ``maximumReconnectDelay``.
    public var reconnectDelay: Duration = .milliseconds(50)
    /// The longest wait between two attempts to reconnect a subscription.
    public var maximumReconnectDelay: Duration = .seconds(2)
    /// Where the client logs reconnections.
    public var logger = Logger(label: "switchyard.client")
    /// How a `tcp:` address's TLS is done: the CA the daemon's certificate chains to, and the
    /// client's certificate and key. `nil`: the system's CAs, and no client certificate.
    public var tls: SwitchyardTLS?
    /// Told when a subscription's connection drops and when it is back (``ReconnectionEvent``).
    /// Called from the subscription's task, before it yields anything more: keep it short. When
    /// it is set, a subscription that reconnects asks the daemon's `Status` first, which answers
    /// at once, where the subscription may hear nothing until the next change.
    public var onReconnection: (@Sendable (ReconnectionEvent) -> Void)?

    public init() {}
  }

  /// Where the client connects: the Unix socket's path, or the address it was made with.
  public let socketPath: String
  /// How the client connects and reconnects.
  public let configuration: Configuration

  /// The calls' connection, and the address it was made to.
  private let connection = Mutex<(connection: VarlinkConnection, address: String)?>(nil)
  private let subscriptions = SubscriptionRegistry()
  /// Where the daemons are, and the one the calls go to now.
  private let endpoints: Endpoints

  /// A client of the daemon listening at `socketPath`.
  ///
  /// Creating a client does not connect: the first call does, or ``connect()``.
  public init(socketPath: String, configuration: Configuration = Configuration()) {
    self.socketPath = socketPath
    self.configuration = configuration
    self.endpoints = Endpoints([socketPath])
  }

  /// A client of the daemons of a cluster on the PostgreSQL journal, at `addresses` (in
  /// Varlink's syntax, as ``init(address:configuration:)`` takes one). Calls go to one of them;
  /// when it cannot be reached they go to the next, and a `Send` a standby refuses
  /// (``SwitchyardError/notLeader(leader:address:)``) goes to the leader it names, so that the
  /// application sees neither. Subscriptions move on to the next address when theirs drops.
  ///
  /// ```swift
  /// let client = SwitchyardClient<App.Action, App.State>(addresses: ["tcp:node-a:7001", "tcp:node-b:7001"])
  /// ```
  ///
  /// A `Send` whose connection closed before its reply is not sent again, unless a standby
  /// answered on that connection: whether the leader applied it is unknown, and it fails with
  /// ``SwitchyardConnectionError/connectionClosed``.
  public init(addresses: [String], configuration: Configuration = Configuration()) {
    let addresses = addresses.isEmpty ? ["unix:/run/switchyard/switchyard.sock"] : addresses
    self.socketPath = addresses[0]
    self.configuration = configuration
    self.endpoints = Endpoints(addresses)
  }

  /// A client of the daemon at `address`, in Varlink's syntax: `unix:/run/switchyard.sock` (or
  /// a path), or `tcp:host:port` for a TLS listener (``Configuration/tls``).
  ///
  /// ```swift
  /// let client = try SwitchyardClient<App.Action, App.State>(address: "tcp:127.0.0.1:7501", configuration: configuration)
  /// ```
  ///
  /// - Throws: ``SwitchyardConnectionError/cannotConnect(path:reason:)`` when `address` is neither.
  public convenience init(address: String, configuration: Configuration = Configuration()) throws {
    do {
      if case let .unix(path) = try VarlinkAddress(parsing: address) {
        self.init(socketPath: path, configuration: configuration)
        return
      }
    } catch {
      throw SwitchyardConnectionError.cannotConnect(path: address, reason: "\(error)")
    }
    self.init(socketPath: address, configuration: configuration)
  }

  deinit {
    // Subscriptions hold what they need and go on until their iteration ends.
    self.connection.withLock { $0 }?.connection.close()
  }

  /// Connects now, rather than on the first call, so that a missing daemon shows at once.
  ///
  /// ```swift
  /// do {
  ///   try await client.connect()
  /// } catch let error as SwitchyardConnectionError {
  ///   print(error)  // cannot connect to run/switchyard.sock: no such socket (ENOENT)
  /// }
  /// ```
  public func connect() async throws {
    _ = try await self.callConnection()
  }

  /// Closes every connection: calls still waiting fail with
  /// ``SwitchyardConnectionError/connectionClosed`` and subscriptions end.
  ///
  /// A later call connects again.
  public func close() {
    self.connection.withLock { $0 }?.connection.close()
    self.subscriptions.closeAll(ending: true)
  }

  // MARK: - Calls

  /// Calls any Varlink method and returns the parameters of its reply.
  ///
  /// ```swift
  /// let info = try await client.call(method: "org.varlink.service.GetInfo")
  /// info["interfaces"]  // ["org.varlink.service","io.switchyard.Store"]
  /// ```
  ///
  /// - Throws: ``SwitchyardError`` when the daemon answers with an error,
  ///   ``SwitchyardConnectionError`` when it cannot be reached.
  @discardableResult
  public func call(method: String, parameters: JSONObject) async throws -> JSONValue {
    guard self.endpoints.hasOthers else { return try await self.callConnection().call(method, parameters: parameters) }
    return try await self.callFollowingTheLeader(method: method, parameters: parameters)
  }

  /// Calls a Varlink method without parameters; see ``call(method:parameters:)``.
  @discardableResult
  public func call(method: String) async throws -> JSONValue {
    try await self.call(method: method, parameters: JSONObject())
  }

  /// Routes an action to every feature that takes it, and returns the sequence number of the
  /// state that includes it once they have applied it.
  ///
  /// ```swift
  /// let seq = try await client.send(.favoritePrimes(.deleteFavoritePrimes([0])))
  /// ```
  ///
  /// - Throws: ``SwitchyardError/actionNotRouted(index:)`` when no feature takes it,
  ///   ``SwitchyardError/invalidAction(reason:path:)`` when the daemon does not know it.
  @discardableResult
  public func send(_ action: Action) async throws -> UInt64 {
    try Self.seq(of: await self.call(method: StoreInterface.Method.send.qualifiedName, parameters: ["action": self.encode(action)]))
  }

  /// Routes several actions in order, with one reply once all are applied.
  ///
  /// ```swift
  /// try await client.send(batch: [.counter(.incrTapped), .counter(.incrTapped)])
  /// ```
  @discardableResult
  public func send(batch actions: [Action]) async throws -> UInt64 {
    let encoded = try actions.map(self.encode)
    return try Self.seq(of: await self.call(method: StoreInterface.Method.sendBatch.qualifiedName, parameters: ["actions": .array(encoded)]))
  }

  /// The whole state, and the sequence number it is at.
  ///
  /// ```swift
  /// let (seq, state) = try await client.get()
  /// ```
  public func get() async throws -> (seq: UInt64, state: State) {
    let (seq, value) = try await self.get(.root)
    return (seq, try JSONValueDecoder.daemonOutput.decode(State.self, from: value))
  }

  /// The part of the state at a JSON Pointer, as JSON, and the sequence number it is at.
  ///
  /// ```swift
  /// let (_, count) = try await client.get("/primes/count")  // 2
  /// ```
  ///
  /// - Throws: ``SwitchyardError/pathNotFound(path:)`` when the state has nothing there.
  public func get(_ pointer: JSONPointer) async throws -> (seq: UInt64, state: JSONValue) {
    var parameters: JSONObject = [:]
    if !pointer.isRoot { parameters["path"] = .string(pointer.description) }
    let reply = try await self.call(method: StoreInterface.Method.get.qualifiedName, parameters: parameters)
    guard let state = reply["state"] else {
      throw SwitchyardConnectionError.malformedReply("Get replied without \"state\": \(reply.serialized())")
    }
    return (try Self.seq(of: reply), state)
  }

  /// The part of the state at a JSON Pointer, decoded.
  ///
  /// ```swift
  /// let (_, favorites) = try await client.get("/primes/favoritePrimes", as: [Int].self)
  /// ```
  public func get<Value: Decodable>(_ pointer: JSONPointer, as type: Value.Type) async throws -> (seq: UInt64, state: Value) {
    let (seq, value) = try await self.get(pointer)
    return (seq, try JSONValueDecoder.daemonOutput.decode(Value.self, from: value))
  }

  /// The features the daemon hosts.
  public func describe() async throws -> [FeatureDescription] {
    let reply = try await self.call(method: StoreInterface.Method.describe.qualifiedName)
    return try JSONValueDecoder().decode([FeatureDescription].self, from: reply["features"] ?? [])
  }

  /// How the daemon is doing.
  public func status() async throws -> DaemonStatus {
    try JSONValueDecoder().decode(DaemonStatus.self, from: await self.call(method: StoreInterface.Method.status.qualifiedName))
  }

  /// Every metric the daemon keeps, as Prometheus text (exposition format 0.0.4).
  ///
  /// ```swift
  /// let text = try await client.metrics()
  /// // # TYPE switchyard_calls_total counter
  /// // switchyard_calls_total{method="io.switchyard.Store.Send",result="ok"} 3
  /// ```
  public func metrics() async throws -> String {
    let reply = try await self.call(method: StoreInterface.Method.metrics.qualifiedName)
    guard case let .string(text)? = reply["text"] else {
      throw SwitchyardConnectionError.malformedReply("Metrics replied without \"text\": \(reply.serialized())")
    }
    return text
  }

  // MARK: - Subscriptions

  /// Every change to the state at `pointer`: a snapshot, then each change as a patch.
  ///
  /// ```swift
  /// for try await event in client.changes(at: "/primes/count") {
  ///   print(event.jsonValue)  // {"seq":3,"patch":[{"op":"replace","path":"","value":3}]}
  /// }
  /// ```
  ///
  /// The subscription starts at once on a connection of its own. When that connection drops —
  /// the daemon restarts, a network namespace hiccups — it reconnects, waiting longer after each
  /// failed attempt (see ``Configuration``), and resumes with `since` the last change it
  /// delivered: the daemon replays what was missed, or sends a fresh snapshot. Events never go
  /// back: one at or before a delivered sequence number is skipped, and a daemon that numbers
  /// from below it (it restarted without its history) ends the sequence with
  /// ``SwitchyardConnectionError/sequenceWentBackwards(delivered:received:)``.
  ///
  /// The sequence ends with an error when the first connection fails, or when the daemon refuses
  /// the subscription (``SwitchyardError/pathNotFound(path:)``, for instance); it ends when the
  /// task iterating it is cancelled, which closes the connection.
  public func changes(at pointer: JSONPointer = .root) -> AsyncThrowingStream<SubscriptionEvent, any Error> {
    self.follow(pointer, withCauses: false) { event, _ in event }
  }

  /// Every change to the state at `pointer`, as ``changes(at:)`` gives them, each with what made
  /// it: the feature, and — when the daemon keeps a journal — where the action came from, the
  /// action, and who sent it.
  ///
  /// ```swift
  /// for try await change in client.changesWithCauses(at: "/primes") {
  ///   print(change.cause?["action"])  // {"counter":{"incrTapped":{}}}
  /// }
  /// ```
  ///
  /// Snapshots, and changes the daemon replays after a reconnection, come without a cause.
  public func changesWithCauses(at pointer: JSONPointer = .root) -> AsyncThrowingStream<CausedEvent, any Error> {
    self.follow(pointer, withCauses: true) { event, reply in CausedEvent(event: event, cause: reply["cause"]) }
  }

  private func follow<Element: Sendable>(
    _ pointer: JSONPointer, withCauses: Bool, element: @escaping @Sendable (SubscriptionEvent, JSONValue) -> Element
  ) -> AsyncThrowingStream<Element, any Error> {
    let (stream, continuation) = AsyncThrowingStream<Element, any Error>.makeStream()
    let endpoints = self.endpoints
    let configuration = self.configuration
    let registry = self.subscriptions
    let task = Task {
      await Self.runSubscription(
        pointer, withCauses: withCauses, endpoints: endpoints, configuration: configuration, registry: registry,
        into: continuation, element: element
      )
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  /// The state, after every change to it, with its sequence number.
  ///
  /// ```swift
  /// for try await (seq, state) in client.subscribe() {
  ///   print(seq, state.primes.count)
  /// }
  /// ```
  ///
  /// It keeps a ``Replica`` that applies the daemon's patches and decodes the state after each;
  /// see ``changes(at:)`` for how it reconnects.
  public func subscribe() -> Subscription<State> {
    Subscription(events: self.changes(at: .root), path: .root)
  }

  /// The part of the state at `pointer`, decoded as `Value`, after every change to it.
  ///
  /// ```swift
  /// for try await (_, count) in client.subscribe(path: "/primes/count", as: Int.self) {
  ///   print(count)
  /// }
  /// ```
  public func subscribe<Value: Decodable & Sendable>(path pointer: JSONPointer, as type: Value.Type = Value.self) -> Subscription<Value> {
    Subscription(events: self.changes(at: pointer), path: pointer)
  }

  /// Closes the connections of live subscriptions, as a dropped connection would; they
  /// reconnect and resume by themselves. For tests.
  @_spi(Testing)
  public func dropSubscriptionConnections() {
    self.subscriptions.closeAll(ending: false)
  }

  /// How many subscription connections are open. For tests.
  @_spi(Testing)
  public var subscriptionConnectionCount: Int {
    self.subscriptions.count
  }

  /// How many subscription connections the client has opened in all. For tests.
  @_spi(Testing)
  public var subscriptionConnectionsOpened: Int {
    self.subscriptions.opened
  }

  // MARK: - Internals

  func callConnection() async throws -> VarlinkConnection {
    let address = self.endpoints.current
    if let current = self.connection.withLock({ $0 }), current.address == address, !current.connection.isClosed {
      return current.connection
    }
    let fresh = try await VarlinkConnection.connect(
      path: address, tls: self.configuration.tls, maximumMessageBytes: self.configuration.maximumMessageBytes
    )
    let (chosen, spare, left) = self.connection.withLock { current -> (VarlinkConnection, VarlinkConnection?, VarlinkConnection?) in
      if let current, current.address == address, !current.connection.isClosed { return (current.connection, fresh, nil) }
      let left = current?.connection
      current = (fresh, address)
      return (fresh, nil, left)
    }
    spare?.close()
    if let left, !left.isClosed {
      // A daemon the calls left (a standby, for its leader) first answers the calls still on it.
      Task {
        try? await Task.sleep(for: .seconds(10))
        left.close()
      }
    }
    return chosen
  }

  var currentAddress: String { self.endpoints.current }

  func follow(_ address: String) { self.endpoints.follow(address) }

  func advance(from address: String) { self.endpoints.advance(from: address) }

  private func encode(_ action: Action) throws -> JSONValue {
    try JSONValueEncoder().encode(action)
  }

  static func seq(of reply: JSONValue) throws -> UInt64 {
    guard case let .int(seq)? = reply["seq"], seq >= 0 else {
      throw SwitchyardConnectionError.malformedReply("expected \"seq\" in \(reply.serialized())")
    }
    return UInt64(seq)
  }
}
