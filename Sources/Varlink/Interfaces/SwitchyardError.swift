import SwitchyardJSON

/// An error reply from the daemon, typed: one of the errors of `io.switchyard.Store` or of
/// `org.varlink.service`, with the parameters that say why. The daemon makes its error replies
/// from these cases and the client reads them back into them, so the two cannot drift apart.
///
/// ```swift
/// do {
///   _ = try await client.get("/nope")
/// } catch SwitchyardError.pathNotFound(let path) {
///   print("nothing at \(path)")
/// }
/// ```
///
/// Errors the client does not know are kept whole in ``unknown(name:parameters:)``.
public enum SwitchyardError: Error, Sendable, Equatable, CustomStringConvertible {
  /// `io.switchyard.Store.InvalidAction`: the action is not one the application knows. `path`
  /// says where in the action (for example `counter.incrTapped.by`).
  case invalidAction(reason: String, path: String)
  /// `io.switchyard.Store.ActionNotRouted`: no feature takes the action at `index` of the batch.
  case actionNotRouted(index: Int)
  /// `io.switchyard.Store.PathNotFound`: the state has nothing at the JSON Pointer `path`.
  case pathNotFound(path: String)
  /// `io.switchyard.Store.ShuttingDown`: the daemon is shutting down.
  case shuttingDown
  /// `io.switchyard.Store.TooManyConnections`: the daemon serves as many connections as it may
  /// (`limit`) and closed this one.
  case tooManyConnections(limit: Int)
  /// `io.switchyard.Store.Timeout`: this process began a call and did not finish sending it
  /// within `seconds`; the daemon closed the connection.
  case timeout(seconds: Double)
  /// `io.switchyard.Store.FeatureCrashed`: the worker process of `feature` ended while it
  /// applied the action (or was killed for not answering its health probe), which was
  /// therefore not applied.
  case featureCrashed(feature: String, reason: String)
  /// `io.switchyard.Store.InternalAction`: the action at `index` is one only the effects of
  /// `feature` send; nothing of the request was applied.
  case internalAction(index: Int, feature: String, action: String)
  /// `io.switchyard.Store.PermissionDenied`: the daemon's access policy does not let this
  /// process make the call; `action` or `path` names what was refused.
  case permissionDenied(method: String, reason: String, action: String?, path: String?)
  /// `io.switchyard.Store.JournalUnavailable`: the daemon cannot write its journal (a full disk,
  /// a failed fsync), so it acknowledges no change until it can again.
  case journalUnavailable(reason: String)
  /// `io.switchyard.Store.AppliedNotDurable`: the action was applied (the state at `seq`
  /// includes it) but the journal could not take the change (`reason`); the daemon journals it
  /// once it can. Not to be sent again: it would be applied twice.
  case appliedNotDurable(seq: Int, reason: String)
  /// `io.switchyard.Store.BackupFailed`: the daemon could not write the copy of its journal
  /// `Backup` asked for (`reason` says why); the journal itself is as it was.
  case backupFailed(reason: String)
  /// `io.switchyard.Store.NoJournal`: the daemon keeps no journal (it runs without a state
  /// directory), so it has no past to read.
  case noJournal
  /// `io.switchyard.Store.SeqNotRetained`: the journal does not hold what `seq` asks for: it was
  /// pruned, or is not there yet. The journal holds from `oldest` to `latest`.
  case seqNotRetained(seq: Int, oldest: Int?, latest: Int)
  /// `io.switchyard.Store.NotLeader`: the daemon is a standby of a cluster; `leader` holds the
  /// journal's lease and is reached at `address`. Nothing of the `Send` was applied.
  case notLeader(leader: String, address: String)
  /// `io.switchyard.Store.InvalidRequest`: the call was not a well-formed Varlink call.
  case invalidRequest(reason: String)
  /// `org.varlink.service.MethodNotFound`.
  case methodNotFound(method: String)
  /// `org.varlink.service.InterfaceNotFound`.
  case interfaceNotFound(interface: String)
  /// `org.varlink.service.InvalidParameter`: the named parameter is missing or has the wrong type.
  case invalidParameter(parameter: String)
  /// `org.varlink.service.ExpectedMore`: the method must be called with `more`.
  case expectedMore
  /// Any other error reply, by its qualified name.
  case unknown(name: String, parameters: JSONValue)

  /// Reads an error reply: `{"error": name, "parameters": {…}}`. An error whose parameters
  /// lack what its case needs is kept whole in ``unknown(name:parameters:)``.
  public init(name: String, parameters: JSONValue) {
    func string(_ key: String) -> String? {
      if case let .string(value)? = parameters[key] { value } else { nil }
    }
    func int(_ key: String) -> Int? {
      if case let .int(value)? = parameters[key] { Int(value) } else { nil }
    }
    let unknown = Self.unknown(name: name, parameters: parameters)
    if let error = StoreInterface.ErrorName(qualifiedName: name) {
      switch error {
      case .invalidAction: self = .invalidAction(reason: string("reason") ?? "", path: string("path") ?? "")
      case .actionNotRouted: self = int("index").map { .actionNotRouted(index: $0) } ?? unknown
      case .pathNotFound: self = .pathNotFound(path: string("path") ?? "")
      case .shuttingDown: self = .shuttingDown
      case .tooManyConnections: self = int("limit").map { .tooManyConnections(limit: $0) } ?? unknown
      case .timeout:
        switch parameters["seconds"] {
        case let .double(seconds)?: self = .timeout(seconds: seconds)
        case let .int(seconds)?: self = .timeout(seconds: Double(seconds))
        default: self = unknown
        }
      case .featureCrashed: self = .featureCrashed(feature: string("feature") ?? "", reason: string("reason") ?? "")
      case .journalUnavailable: self = .journalUnavailable(reason: string("reason") ?? "")
      case .appliedNotDurable: self = .appliedNotDurable(seq: int("seq") ?? 0, reason: string("reason") ?? "")
      case .backupFailed: self = .backupFailed(reason: string("reason") ?? "")
      case .internalAction:
        self = int("index").map { .internalAction(index: $0, feature: string("feature") ?? "", action: string("action") ?? "") } ?? unknown
      case .permissionDenied:
        self = .permissionDenied(
          method: string("method") ?? "", reason: string("reason") ?? "", action: string("action"), path: string("path")
        )
      case .invalidRequest: self = .invalidRequest(reason: string("reason") ?? "")
      case .noJournal: self = .noJournal
      case .seqNotRetained:
        self = .seqNotRetained(seq: int("seq") ?? 0, oldest: int("oldest"), latest: int("latest") ?? 0)
      case .notLeader: self = .notLeader(leader: string("leader") ?? "", address: string("address") ?? "")
      }
    } else if let error = ServiceInterface.ErrorName(qualifiedName: name) {
      switch error {
      case .methodNotFound: self = .methodNotFound(method: string("method") ?? "")
      case .interfaceNotFound: self = .interfaceNotFound(interface: string("interface") ?? "")
      case .invalidParameter: self = .invalidParameter(parameter: string("parameter") ?? "")
      case .expectedMore: self = .expectedMore
      case .methodNotImplemented, .permissionDenied: self = unknown
      }
    } else {
      self = unknown
    }
  }

  /// Reads an error reply.
  public init(_ error: VarlinkError) {
    self.init(name: error.name, parameters: .object(error.parameters))
  }

  /// The error's qualified Varlink name, such as `io.switchyard.Store.PathNotFound`.
  public var name: String {
    switch self {
    case .invalidAction: StoreInterface.ErrorName.invalidAction.qualifiedName
    case .actionNotRouted: StoreInterface.ErrorName.actionNotRouted.qualifiedName
    case .pathNotFound: StoreInterface.ErrorName.pathNotFound.qualifiedName
    case .shuttingDown: StoreInterface.ErrorName.shuttingDown.qualifiedName
    case .tooManyConnections: StoreInterface.ErrorName.tooManyConnections.qualifiedName
    case .timeout: StoreInterface.ErrorName.timeout.qualifiedName
    case .featureCrashed: StoreInterface.ErrorName.featureCrashed.qualifiedName
    case .journalUnavailable: StoreInterface.ErrorName.journalUnavailable.qualifiedName
    case .appliedNotDurable: StoreInterface.ErrorName.appliedNotDurable.qualifiedName
    case .backupFailed: StoreInterface.ErrorName.backupFailed.qualifiedName
    case .internalAction: StoreInterface.ErrorName.internalAction.qualifiedName
    case .permissionDenied: StoreInterface.ErrorName.permissionDenied.qualifiedName
    case .invalidRequest: StoreInterface.ErrorName.invalidRequest.qualifiedName
    case .noJournal: StoreInterface.ErrorName.noJournal.qualifiedName
    case .seqNotRetained: StoreInterface.ErrorName.seqNotRetained.qualifiedName
    case .notLeader: StoreInterface.ErrorName.notLeader.qualifiedName
    case .methodNotFound: ServiceInterface.ErrorName.methodNotFound.qualifiedName
    case .interfaceNotFound: ServiceInterface.ErrorName.interfaceNotFound.qualifiedName
    case .invalidParameter: ServiceInterface.ErrorName.invalidParameter.qualifiedName
    case .expectedMore: ServiceInterface.ErrorName.expectedMore.qualifiedName
    case let .unknown(name, _): name
    }
  }

  /// The error's parameters, as the daemon sent them.
  public var parameters: JSONValue {
    switch self {
    case let .invalidAction(reason, path): ["reason": .string(reason), "path": .string(path)]
    case let .actionNotRouted(index): ["index": .int(Int64(index))]
    case let .pathNotFound(path): ["path": .string(path)]
    case .shuttingDown, .expectedMore, .noJournal: [:]
    case let .seqNotRetained(seq, oldest, latest):
      {
        var parameters: JSONObject = ["seq": .int(Int64(seq)), "latest": .int(Int64(latest))]
        if let oldest { parameters["oldest"] = .int(Int64(oldest)) }
        return .object(parameters)
      }()
    case let .tooManyConnections(limit): ["limit": .int(Int64(limit))]
    case let .timeout(seconds): ["seconds": .double(seconds)]
    case let .featureCrashed(feature, reason): ["feature": .string(feature), "reason": .string(reason)]
    case let .appliedNotDurable(seq, reason): ["seq": .int(Int64(seq)), "reason": .string(reason)]
    case let .internalAction(index, feature, action):
      ["index": .int(Int64(index)), "feature": .string(feature), "action": .string(action)]
    case let .permissionDenied(method, reason, action, path):
      {
        var parameters: JSONObject = ["method": .string(method), "reason": .string(reason)]
        if let action { parameters["action"] = .string(action) }
        if let path { parameters["path"] = .string(path) }
        return .object(parameters)
      }()
    case let .invalidRequest(reason), let .journalUnavailable(reason), let .backupFailed(reason): ["reason": .string(reason)]
    case let .notLeader(leader, address): ["leader": .string(leader), "address": .string(address)]
    case let .methodNotFound(method): ["method": .string(method)]
    case let .interfaceNotFound(interface): ["interface": .string(interface)]
    case let .invalidParameter(parameter): ["parameter": .string(parameter)]
    case let .unknown(_, parameters): parameters
    }
  }

  public var description: String {
    "\(self.name) \(self.parameters.serialized())"
  }
}

extension VarlinkError {
  /// The error reply for `error`.
  public init(_ error: SwitchyardError) {
    guard case let .object(parameters) = error.parameters else {
      self.init(error.name)
      return
    }
    self.init(error.name, parameters)
  }
}
