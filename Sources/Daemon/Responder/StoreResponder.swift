import Foundation
import Logging
import NIOCore
import SwitchyardAccess
import SwitchyardChangeFeed
import SwitchyardCluster
import SwitchyardDaemonConfiguration
import SwitchyardJournal
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardSynchronization
import SwitchyardVarlink
import SwitchyardWorkers

/// Answers the calls of `org.varlink.service` and `io.switchyard.Store`: decodes actions and
/// hands them to the ``Router``, reads the state from the ``ChangeLog``, follows it through the
/// ``Subscriptions``, and checks every call against the access policy first.
///
/// `Send` and `SendBatch` are decoded and routed as the call is read, so pipelined sends keep
/// their order and reduce while earlier replies are still being written. Every other call is a
/// barrier: it runs when its turn to answer comes, and the connection reads nothing after it
/// until it is answered, so a `Get` sees exactly the sends before it.
final class StoreResponder: VarlinkResponder {
  let router: Router
  /// The actor features' drains, run as soon as a call read on the loop is routed.
  let drains: LoopDrains?
  let changeLog: ChangeLog
  /// What `Status` says of durability.
  let durability: DurabilityStatus
  /// The durable timers, for `Status` and the metrics.
  let timers: DurableTimers?
  let subscriptions: Subscriptions
  /// What `Describe` says of each feature, in declaration order.
  let features: [ServedFeature]
  /// `Replay`: the journal read by `reader` reduced again through the features' reducers, from
  /// after `since` up to `until`, while `isWanted` says so; its report.
  let replay: @Sendable (
    _ reader: JournalReader, _ since: UInt64?, _ until: UInt64?, _ isWanted: @escaping @Sendable () -> Bool
  ) async throws(JournalReadError) -> JSONObject
  /// The features hosted in worker processes, by name: how their workers are doing.
  let workers: [String: @Sendable () -> WorkerSnapshot]
  let configuration: LiveConfiguration
  let counters: ServerCounters
  /// Every metric the daemon keeps, for `Metrics`; `nil` keeps none.
  let metrics: DaemonMetrics?
  let logger: Logger
  /// The daemon's name and version in `GetInfo`.
  let product: String
  let version: String
  let started = ContinuousClock.now
  let actionCount = Atomic<Int>(0)
  let decoder: ActionDecoder
  /// Reads the journal, when there is one: `Get` at a seq, `Journal`, `Replay`. The change log's
  /// writer's, or on a standby the journal the leader writes.
  let journalReader: JournalReader?
  /// The group that owns the socket file (by default, the group that may read and write),
  /// known once the socket listens; -1 before.
  let socketGroup = Atomic<Int64>(-1)
  /// The open subscriptions and who holds them, so that a reload can end those whose caller
  /// may no longer read what they follow.
  let subscribers = Mutex<[Int: (subscriber: Subscriber, caller: Caller?)]>([:])
  /// The inspector's URL, once the HTTP endpoint serves it.
  let inspectorLink = InspectorLink()
  /// This daemon in the cluster on the PostgreSQL journal, for `Status`.
  let cluster: ClusterView?
  /// A standby's: `Send` and `SendBatch` are refused with the leader's name.
  let standby: ClusterView?

  /// The responder for the application whose features are `features`: the one place it knows
  /// their types, which it erases.
  init<State: Codable & Sendable, Action: Codable & Sendable>(
    router: Router,
    drains: LoopDrains? = nil,
    changeLog: ChangeLog,
    subscriptions: Subscriptions,
    features: [Feature<State, Action>],
    workers: [String: @Sendable () -> WorkerSnapshot],
    configuration: LiveConfiguration,
    counters: ServerCounters,
    durability: DurabilityStatus = .none,
    timers: DurableTimers? = nil,
    product: String = "switchyardd",
    version: String = switchyardVersion,
    metrics: DaemonMetrics? = nil,
    cluster: ClusterView? = nil,
    journalReader: JournalReader? = nil,
    logger: Logger
  ) {
    self.cluster = cluster
    self.standby = cluster?.role == .standby ? cluster : nil
    self.product = product
    self.version = version
    self.durability = durability
    self.timers = timers
    self.metrics = metrics
    self.journalReader = journalReader ?? changeLog.journalWriter.map(JournalReader.init(writer:))
    self.router = router
    self.drains = drains
    self.changeLog = changeLog
    self.subscriptions = subscriptions
    self.features = features.map(ServedFeature.init)
    self.decoder = ActionDecoder(Action.self)
    let reducing = Dictionary(
      uniqueKeysWithValues: features.map { ($0.name, JournalReplay<Action>.Reducing(pointer: $0.pointer, reduce: $0.reduceAgain)) }
    )
    self.replay = { reader, since, until, isWanted throws(JournalReadError) in
      try await JournalReplay(features: reducing, reader: reader).run(since: since, until: until, while: isWanted).json
    }
    self.workers = workers
    self.configuration = configuration
    self.counters = counters
    self.logger = logger
  }

  func prepare(
    _ call: VarlinkCallFrame,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) -> PreparedCall {
    let grants = self.grants(for: caller)
    if let denial = grants.denial(of: call) {
      var refused = PreparedCall.failing(denial)
      refused.kind = CountedMethod(method: call.method)
      refused.isDeniedByPolicy = true
      return refused
    }
    guard let method = call.storeMethod else {
      let call = call.tree()
      var prepared = PreparedCall.answering { () throws(VarlinkError) in try self.service(call) }
      prepared.kind = CountedMethod(method: call.method)
      return prepared
    }
    if let standby = self.standby, method == .send || method == .sendBatch {
      let leader = standby.leader
      return .failing(VarlinkError(SwitchyardError.notLeader(leader: leader?.holder ?? "", address: leader?.address ?? "")))
    }
    var prepared = self.prepare(call, method, grants: grants, caller: caller, whenClosed: whenClosed)
    switch method {
    case .send: prepared.kind = .send
    case .sendBatch: prepared.kind = .sendBatch
    default: prepared.kind = CountedMethod(method)
    }
    return prepared
  }

  /// The server's own refusals, as `io.switchyard.Store`'s errors.
  func error(for refusal: ServerRefusal) -> VarlinkError {
    switch refusal {
    case let .tooManyConnections(limit): VarlinkError(SwitchyardError.tooManyConnections(limit: limit))
    case let .timeout(seconds): VarlinkError(SwitchyardError.timeout(seconds: seconds))
    case .shuttingDown: VarlinkError(SwitchyardError.shuttingDown)
    }
  }

  /// A failed call's action, as the client sent it, in its log line.
  func logMetadata(ofFailed call: VarlinkCallFrame) -> Logger.Metadata {
    guard let action = call.parameter("action")?.serialized() else { return [:] }
    return ["action": "\(String(action.prefix(512)))"]
  }

  /// Starts a call of one of `io.switchyard.Store`'s methods.
  private func prepare(
    _ call: VarlinkCallFrame,
    _ method: StoreInterface.Method,
    grants: Grants,
    caller: Caller?,
    whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
  ) -> PreparedCall {
    switch method {
    case .send, .sendBatch:
      return self.route(call, method, caller: caller)
    case .subscribe:
      let call = call.tree()
      return PreparedCall(isBarrier: true) { (answer: CallAnswer) in
        do throws(VarlinkError) {
          try self.subscribe(call, caller: caller, whenClosed: whenClosed, answer: answer)
        } catch {
          answer.finish(error)
        }
      }
    case .get:
      let call = call.tree()
      switch call.parameters["at"] {
      case nil, .null: return .answering { () throws(VarlinkError) in try self.get(call) }
      case let .int(seq)? where seq >= 0: return self.get(call, at: UInt64(seq))
      default: return .failing(.invalidParameter("at"))
      }
    case .journal:
      return self.journal(call.tree())
    case .replay:
      return self.replay(call.tree())
    case .backup:
      return self.backup(call.tree())
    case .describe:
      return .answering { self.describe(grants: grants) }
    case .status:
      return .answering { self.status(for: grants) }
    case .metrics:
      return .answering { self.metricsText() }
    }
  }

  /// What `caller` may do under the policy in force now: a reload applies from the next call.
  func grants(for caller: Caller?) -> Grants {
    guard let caller else { return Grants() }
    let group = self.socketGroup.load(ordering: .relaxed)
    return self.configuration.access.grants(for: caller, socketGroup: group < 0 ? nil : gid_t(group))
  }

  /// Routes with `route`, then reduces at once what the actor features it reached queued: the
  /// reply can be written in the same pass as the read.
  private func routeNow(_ route: () -> RouteTicket) -> RouteTicket {
    guard let drains = self.drains else { return route() }
    return drains.collecting(route)
  }

  /// Decodes the actions of a `Send` or `SendBatch` straight from the call's bytes and routes
  /// them now; the reply waits for them.
  private func route(_ call: VarlinkCallFrame, _ method: StoreInterface.Method, caller: Caller?) -> PreparedCall {
    let ticket: RouteTicket
    let count: Int
    do throws(VarlinkError) {
      if method == .send {
        guard let layout = call.parameterLayout("action") else { throw .invalidParameter("action") }
        ticket = try self.decoder.decode(layout, of: call) { action throws(VarlinkError) in
          try self.checkJournalIsWritable()
          let cause = self.cause(of: layout, in: call, caller: caller)
          return self.routeNow { self.router.route(action, text: { call.bytes(of: layout) }, cause: cause) }
        }
        count = 1
      } else {
        guard let batch = call.parameterLayout("actions"), call.isArray(batch) else { throw .invalidParameter("actions") }
        let layouts = call.elements(of: batch)
        ticket = try self.decoder.decode(layouts, of: call) { actions throws(VarlinkError) in
          try self.checkJournalIsWritable()
          let causes = self.changeLog.isJournaled ? layouts.compactMap { self.cause(of: $0, in: call, caller: caller) } : nil
          return self.routeNow { self.router.route(actions, texts: { call.bytes(of: layouts[$0]) }, causes: causes) }
        }
        count = layouts.count
      }
    } catch {
      return .failing(error)
    }
    // Reduced while it was routed, and nothing to wait for on the disk: the answer is known now,
    // and the connection writes it with no closure or `CallAnswer` made for it.
    if !self.changeLog.answersWaitForTheJournal, let outcome = ticket.outcomeIfDone {
      switch outcome {
      case let .success(seq):
        self.actionCount.add(count, ordering: .relaxed)
        return .answered(sequenceNumber: seq)
      case let .failure(error):
        return .failing(VarlinkError(SwitchyardError(error)))
      }
    }
    return PreparedCall { (answer: CallAnswer) in
      ticket.whenReduced { outcome in
        switch outcome {
        case let .success(seq):
          self.actionCount.add(count, ordering: .relaxed)
          // Answered once the change is kept as the durability mode asks (strict: on the disk).
          self.changeLog.whenDurable(seq) { unavailable in
            if let unavailable {
              // Applied already: a refusal would have the client send it again.
              answer.finish(VarlinkError(SwitchyardError.appliedNotDurable(seq: Int(clamping: seq), reason: unavailable)))
            } else {
              answer.reply(.sequenceNumber(seq))
              answer.finish()
            }
          }
        case let .failure(error):
          answer.finish(VarlinkError(SwitchyardError(error)))
        }
      }
    }
  }

  /// While the journal cannot be written, nothing new is accepted: reads go on.
  private func checkJournalIsWritable() throws(VarlinkError) {
    if let reason = self.changeLog.journalUnavailable {
      throw VarlinkError(SwitchyardError.journalUnavailable(reason: reason))
    }
  }

  /// Why the action at `layout` is sent, for the journal: its bytes as the client sent them, and
  /// who sent it. `nil` without a journal, which is the only one that asks.
  private func cause(of layout: JSONLayout.Value, in call: VarlinkCallFrame, caller: Caller?) -> ChangeCause? {
    guard self.changeLog.isJournaled else { return nil }
    // The inspector's page is named where a remote client's certificate is: it has no uid either.
    let sender = caller.map { ChangeCause.Peer(uid: $0.uid, pid: $0.pid, certificate: $0.isInspector ? $0.identity : $0.certificate?.name) }
    return .request(call.text(of: layout), peer: sender)
  }

  /// `org.varlink.service`, and any interface the daemon does not have.
  private func service(_ call: VarlinkCall) throws(VarlinkError) -> JSONObject {
    guard call.interface == ServiceInterface.name else {
      if call.interface == StoreInterface.name { throw .methodNotFound(call.method) }
      throw .interfaceNotFound(call.interface)
    }
    switch ServiceInterface.Method(rawValue: call.name) {
    case .getInfo:
      return [
        "vendor": "Switchyard",
        "product": .string(self.product),
        "version": .string(self.version),
        "url": "https://github.com/switchyard/switchyard",
        "interfaces": [.string(ServiceInterface.name), .string(StoreInterface.name)],
      ]
    case .getInterfaceDescription:
      guard case let .string(interface)? = call.parameters["interface"] else {
        throw .invalidParameter("interface")
      }
      switch interface {
      case ServiceInterface.name: return ["description": .string(ServiceInterface.description)]
      case StoreInterface.name: return ["description": .string(StoreInterface.description)]
      default: throw .interfaceNotFound(interface)
      }
    case nil:
      throw .methodNotFound(call.method)
    }
  }

  /// The `path` parameter: the root when absent.
  func pointer(_ call: VarlinkCall) throws(VarlinkError) -> JSONPointer {
    switch call.parameters["path"] {
    case nil, .null:
      return .root
    case let .string(path)?:
      do { return try JSONPointer(parsing: path) } catch { throw .invalidParameter("path") }
    default:
      throw .invalidParameter("path")
    }
  }
}

extension SwitchyardError {
  /// The error reply for a request the router refused.
  init(_ error: RouterError) {
    switch error {
    case let .actionNotRouted(index): self = .actionNotRouted(index: index)
    case let .featureCrashed(feature, reason): self = .featureCrashed(feature: feature, reason: reason)
    case let .internalAction(index, feature, action): self = .internalAction(index: index, feature: feature, action: action)
    }
  }

  /// The error reply for a subscription that could not start.
  init(_ error: SubscriptionError) {
    switch error {
    case let .pathNotFound(pointer): self = .pathNotFound(path: pointer.description)
    case .shuttingDown: self = .shuttingDown
    }
  }
}

extension VarlinkOutgoing {
  /// What a `Send` and a `SendBatch` answer: `{"parameters":{"seq":N}}`, the change's number.
  static func sequenceNumber(_ seq: UInt64) -> Self {
    .integerParameter("seq", seq)
  }
}

extension PreparedCall {
  /// A `Send` reduced while it was routed: the connection writes its reply when the call's turn
  /// comes, with nothing made for it meanwhile.
  static func answered(sequenceNumber seq: UInt64) -> PreparedCall {
    .answered(.sequenceNumber(seq))
  }

  /// The sequence number that answers the call, when it was known as the call was read.
  var sequenceNumber: UInt64? {
    guard case let .integerParameter(_, seq)? = self.knownReply else { return nil }
    return seq
  }
}
