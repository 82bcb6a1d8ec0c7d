import Foundation
import Logging
import SwitchyardSynchronization
import SwitchyardRuntime

/// Answers Varlink calls: `org.varlink.service` and `io.switchyard.Store`.
final class StoreService<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
  let router: Router<Action>
  let features: [Feature<State, Action>]
  let logger: Logger
  let configuration: LiveConfiguration
  let started = ContinuousClock.now
  let actionCount = Atomic<Int>(0)
  let connectionCount = Atomic<Int>(0)

  /// The features hosted in worker processes, by name: how their workers are doing.
  let workers: [String: @Sendable () -> WorkerSnapshot]
  /// The group that owns the socket file (by default, the group that may read and write),
  /// known once the socket listens; -1 before.
  let socketGroup = Atomic<Int64>(-1)
  /// The open subscriptions and who holds them, so that a reload can end those whose caller
  /// may no longer read what they follow.
  private let subscriptions = Mutex<[Int: (subscriber: Subscriber, caller: Caller?)]>([:])

  init(
    router: Router<Action>,
    features: [Feature<State, Action>],
    workers: [String: @Sendable () -> WorkerSnapshot],
    configuration: LiveConfiguration,
    logger: Logger
  ) {
    self.workers = workers
    self.router = router
    self.features = features
    self.configuration = configuration
    self.logger = logger
  }

  /// Starts `call` now and returns what answers it later, in call order.
  ///
  /// `Send` and `SendBatch` are decoded and routed here, as the call is read, so pipelined sends
  /// keep their order and reduce while earlier replies are still being written. Every other call
  /// is a barrier: it runs when its turn to answer comes, and the connection reads nothing after
  /// it until it is answered, so a `Get` sees exactly the sends before it.
  ///
  /// - Parameter caller: Who sent the call (`SO_PEERCRED`); `nil`, when the kernel did not say,
  ///   may do nothing.
  func prepare(
    _ call: VarlinkCall,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) -> PreparedCall {
    let grants = self.grants(for: caller)
    if let denial = grants.denial(of: call) {
      return PreparedCall { _ in throw denial }
    }
    if call.interface == StoreInterface.name, call.name == "Send" || call.name == "SendBatch" {
      let ticket: RouteTicket
      let count: Int
      do {
        let actions: [Action]
        if call.name == "Send" {
          guard let action = call.parameters["action"] else { throw VarlinkError.invalidParameter("action") }
          actions = [try self.decode(action)]
        } else {
          guard case let .array(values)? = call.parameters["actions"] else { throw VarlinkError.invalidParameter("actions") }
          actions = try values.map(self.decode)
        }
        count = actions.count
        ticket = self.router.route(actions)
      } catch {
        return PreparedCall { _ in throw error }
      }
      return PreparedCall { reply in
        let seq: UInt64
        do {
          seq = try await ticket.reduced()
        } catch let error as RouterError {
          throw self.varlinkError(error)
        }
        self.actionCount.add(count, ordering: .relaxed)
        try await reply(VarlinkReply(parameters: ["seq": .int(Int64(seq))]))
      }
    }
    return PreparedCall(isBarrier: true) { reply in
      try await self.handle(call, caller: caller, grants: grants, whenClosed: whenClosed, reply: reply)
    }
  }

  /// What `caller` may do under the policy in force now: a reload applies from the next call.
  func grants(for caller: Caller?) -> Grants {
    guard let caller else { return Grants() }
    let group = self.socketGroup.load(ordering: .relaxed)
    return self.configuration.value.access.grants(for: caller, socketGroup: group < 0 ? nil : gid_t(group))
  }

  /// Answers `call` through `reply`; throws the error reply.
  ///
  /// - Parameter whenClosed: Registers work to do when the connection closes, so a
  ///   subscription notices a subscriber that hung up even while nothing changes.
  func handle(
    _ call: VarlinkCall,
    caller: Caller?,
    grants: Grants,
    whenClosed: @Sendable (@escaping @Sendable () -> Void) -> Void,
    reply: (VarlinkReply) async throws -> Void
  ) async throws {
    switch call.interface {
    case ServiceInterface.name:
      try await reply(VarlinkReply(parameters: try self.service(call)))
    case StoreInterface.name:
      if call.name == "Subscribe" {
        try await self.subscribe(call, caller: caller, whenClosed: whenClosed, reply: reply)
      } else {
        try await reply(VarlinkReply(parameters: try await self.store(call, grants: grants)))
      }
    default:
      throw VarlinkError.interfaceNotFound(call.interface)
    }
  }

  private func service(_ call: VarlinkCall) throws(VarlinkError) -> JSONObject {
    switch call.name {
    case "GetInfo":
      return [
        "vendor": "Switchyard",
        "product": "switchyardd",
        "version": .string(switchyardVersion),
        "url": "https://github.com/switchyard/switchyard",
        "interfaces": [.string(ServiceInterface.name), .string(StoreInterface.name)],
      ]
    case "GetInterfaceDescription":
      guard case let .string(interface)? = call.parameters["interface"] else {
        throw .invalidParameter("interface")
      }
      switch interface {
      case ServiceInterface.name: return ["description": .string(ServiceInterface.description)]
      case StoreInterface.name: return ["description": .string(StoreInterface.description)]
      default: throw .interfaceNotFound(interface)
      }
    default:
      throw .methodNotFound(call.method)
    }
  }

  private func store(_ call: VarlinkCall, grants: Grants) async throws(VarlinkError) -> JSONObject {
    switch call.name {
    case "Send":
      guard let action = call.parameters["action"] else { throw .invalidParameter("action") }
      return ["seq": .int(Int64(try await self.send([try self.decode(action)])))]
    case "SendBatch":
      guard case let .array(actions)? = call.parameters["actions"] else { throw .invalidParameter("actions") }
      return ["seq": .int(Int64(try await self.send(try actions.map(self.decode))))]
    case "Get":
      let pointer = try self.pointer(call)
      guard let (seq, value) = self.router.get(pointer) else {
        throw VarlinkError("\(StoreInterface.name).PathNotFound", ["path": .string(pointer.description)])
      }
      return ["seq": .int(Int64(seq)), "state": value]
    case "Describe":
      return [
        "features": .array(
          self.features.map { feature in
            var description: JSONObject = [
              "name": .string(feature.name),
              "state": .string(feature.pointer.description),
              "readOnly": .bool(feature.isReadOnly),
              "action": .string(feature.actionType),
              "actions": .array(feature.visibility.publicCases(feature.actionCases).map(JSONValue.string)),
              "internalActions": .array(feature.visibility.internalActions.map(JSONValue.string)),
              "isolation": .string(self.workers[feature.name] == nil ? "actor" : "process"),
            ]
            if let worker = self.workers[feature.name] { description["worker"] = worker().json }
            return .object(description)
          }
        ),
        "access": grants.json,
      ]
    case "Status":
      return [
        "uptime": .double(Double((ContinuousClock.now - self.started).components.seconds)),
        "features": .int(Int64(self.features.count)),
        "connections": .int(Int64(self.connectionCount.load(ordering: .relaxed))),
        "subscribers": .int(Int64(self.router.subscriberCount)),
        "actions": .int(Int64(self.actionCount.load(ordering: .relaxed))),
        "seq": .int(Int64(self.router.currentSeq)),
        "workers": .array(
          self.features.compactMap { feature in self.workers[feature.name].map { $0().json } }
        ),
      ]
    default:
      throw .methodNotFound(call.method)
    }
  }

  private func subscribe(
    _ call: VarlinkCall,
    caller: Caller?,
    whenClosed: @Sendable (@escaping @Sendable () -> Void) -> Void,
    reply: (VarlinkReply) async throws -> Void
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
      subscriber = try self.router.subscribe(
        to: pointer,
        since: since.flatMap { since in history.map { (since, $0) } },
        queueLimit: self.configuration.value.subscriptionQueueLimit
      )
    } catch {
      throw self.varlinkError(error)
    }
    let router = self.router
    self.subscriptions.withLock { $0[subscriber.id] = (subscriber, caller) }
    whenClosed { router.unsubscribe(subscriber) }
    defer {
      router.unsubscribe(subscriber)
      _ = self.subscriptions.withLock { $0.removeValue(forKey: subscriber.id) }
    }
    while true {
      var item = await subscriber.next()
      if case .overflow = item { item = router.resnapshot(subscriber) }
      switch item {
      case let .snapshot(seq, value):
        try await reply(
          VarlinkReply(
            parameters: ["seq": .int(Int64(seq)), "history": .string(router.historyID), "state": value],
            continues: true
          )
        )
      case let .patch(seq, patch):
        try await reply(VarlinkReply(parameters: ["seq": .int(Int64(seq)), "patch": patch.jsonValue], continues: true))
      case .end(.cancelled):
        return
      case .end(.shuttingDown):
        throw VarlinkError("\(StoreInterface.name).ShuttingDown")
      case .end(.pathRemoved):
        throw VarlinkError("\(StoreInterface.name).PathNotFound", ["path": .string(pointer.description)])
      case .end(.permissionRevoked):
        throw VarlinkError.permissionDenied(call.method, "the access policy no longer lets you read this", path: pointer.description)
      case .overflow:
        continue
      }
    }
  }

  /// Ends the subscriptions whose caller may no longer read what they follow: called when the
  /// configuration was reloaded.
  func revokeSubscriptions() {
    let open = self.subscriptions.withLock { Array($0.values) }
    for (subscriber, caller) in open where !self.grants(for: caller).mayRead(subscriber.pointer) {
      subscriber.end(.permissionRevoked)
    }
  }

  private func send(_ actions: [Action]) async throws(VarlinkError) -> UInt64 {
    do {
      let seq = try await self.router.send(actions)
      self.actionCount.add(actions.count, ordering: .relaxed)
      return seq
    } catch {
      throw self.varlinkError(error)
    }
  }

  private func decode(_ action: JSONValue) throws(VarlinkError) -> Action {
    do {
      let decoded = try JSONValueDecoder().decode(Action.self, from: action)
      // Decoding ignores keys the action does not have; a client that sends one has a typo or
      // the wrong version of the action, which it should hear about.
      if let unknown = Self.unknownKey(in: action, comparedTo: try JSONValueEncoder().encode(decoded), at: []) {
        throw VarlinkError(
          "\(StoreInterface.name).InvalidAction",
          ["reason": .string("unknown key \"\(unknown.last ?? "")\""), "path": .string(unknown.joined(separator: "."))]
        )
      }
      return decoded
    } catch let error as VarlinkError {
      throw error
    } catch let error as DecodingError {
      let (reason, path) = Self.describe(error, in: action)
      throw VarlinkError("\(StoreInterface.name).InvalidAction", ["reason": .string(reason), "path": .string(path)])
    } catch {
      throw VarlinkError("\(StoreInterface.name).InvalidAction", ["reason": .string("\(error)"), "path": ""])
    }
  }

  private func pointer(_ call: VarlinkCall) throws(VarlinkError) -> JSONPointer {
    switch call.parameters["path"] {
    case nil, .null:
      return .root
    case let .string(path)?:
      do { return try JSONPointer(parsing: path) } catch { throw .invalidParameter("path") }
    default:
      throw .invalidParameter("path")
    }
  }

  private func varlinkError(_ error: RouterError) -> VarlinkError {
    switch error {
    case let .actionNotRouted(index):
      VarlinkError("\(StoreInterface.name).ActionNotRouted", ["index": .int(Int64(index))])
    case let .pathNotFound(pointer):
      VarlinkError("\(StoreInterface.name).PathNotFound", ["path": .string(pointer.description)])
    case .shuttingDown:
      VarlinkError("\(StoreInterface.name).ShuttingDown")
    case let .featureCrashed(feature, reason):
      VarlinkError("\(StoreInterface.name).FeatureCrashed", ["feature": .string(feature), "reason": .string(reason)])
    case let .internalAction(index, feature, action):
      VarlinkError(
        "\(StoreInterface.name).InternalAction",
        ["index": .int(Int64(index)), "feature": .string(feature), "action": .string(action)]
      )
    }
  }

  /// The path of the first object key in `sent` that the action's own encoding lacks.
  private static func unknownKey(in sent: JSONValue, comparedTo encoded: JSONValue, at path: [String]) -> [String]? {
    switch (sent, encoded) {
    case let (.object(sent), _) where sent.count == 1 && sent["_0"] != nil && encoded.isObjectWithout("_0"):
      return self.unknownKey(in: sent["_0"]!, comparedTo: encoded, at: path)
    case let (.object(sent), .object(encoded)):
      for (key, value) in sent {
        guard let counterpart = encoded[key] else {
          if value.isNull { continue }
          return path + [key]
        }
        if let unknown = self.unknownKey(in: value, comparedTo: counterpart, at: path + [key]) { return unknown }
      }
      return nil
    case let (.array(sent), .array(encoded)) where sent.count == encoded.count:
      for (index, (value, counterpart)) in zip(sent, encoded).enumerated() {
        if let unknown = self.unknownKey(in: value, comparedTo: counterpart, at: path + ["\(index)"]) { return unknown }
      }
      return nil
    default:
      return nil
    }
  }

  private static func describe(_ error: DecodingError, in action: JSONValue) -> (reason: String, path: String) {
    switch error {
    case let .typeMismatch(_, context):
      // An enum met an object whose one key is none of its cases: name that key.
      let tokens = context.codingPath.compactMap { key -> String? in
        key.stringValue == "_0" ? nil : key.intValue.map(String.init) ?? key.stringValue
      }
      if case let .object(object)? = action.value(at: JSONPointer(tokens: tokens)), object.count == 1,
        let name = object.keys.first
      {
        return ("unknown case \"\(name)\"", jsonPathDescription(context.codingPath) + (tokens.isEmpty ? name : ".\(name)"))
      }
      fallthrough
    default:
      return self.describe(error)
    }
  }

  private static func describe(_ error: DecodingError) -> (reason: String, path: String) {
    switch error {
    case let .typeMismatch(type, context):
      ("expected \(type): \(context.debugDescription)", jsonPathDescription(context.codingPath))
    case let .valueNotFound(type, context):
      ("missing \(type): \(context.debugDescription)", jsonPathDescription(context.codingPath))
    case let .keyNotFound(key, context):
      ("missing key \"\(key.stringValue)\"", jsonPathDescription(context.codingPath + [key]))
    case let .dataCorrupted(context):
      (context.debugDescription, jsonPathDescription(context.codingPath))
    @unknown default:
      ("\(error)", "")
    }
  }
}

/// The version the daemon reports.
public let switchyardVersion = "0.1.0"

extension JSONValue {
  fileprivate func isObjectWithout(_ key: String) -> Bool {
    if case let .object(object) = self { object[key] == nil } else { true }
  }
}

/// A call that has been read: running it writes its replies through the given function.
struct PreparedCall: Sendable {
  /// Whether the connection must not read further calls until this one is answered.
  let isBarrier: Bool
  let run: @Sendable (_ reply: @Sendable (VarlinkReply) async throws -> Void) async throws -> Void

  init(
    isBarrier: Bool = false,
    _ run: @escaping @Sendable (_ reply: @Sendable (VarlinkReply) async throws -> Void) async throws -> Void
  ) {
    self.isBarrier = isBarrier
    self.run = run
  }
}
