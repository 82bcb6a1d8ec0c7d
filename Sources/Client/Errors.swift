import SwitchyardRuntime

/// An error reply from the daemon: one of the errors of `io.switchyard.Store` or of
/// `org.varlink.service`, with the parameters that say why.
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

  /// Reads an error reply: `{"error": name, "parameters": {…}}`.
  public init(name: String, parameters: JSONValue) {
    func string(_ key: String) -> String? {
      if case let .string(value)? = parameters[key] { value } else { nil }
    }
    switch name {
    case "io.switchyard.Store.InvalidAction":
      self = .invalidAction(reason: string("reason") ?? "", path: string("path") ?? "")
    case "io.switchyard.Store.ActionNotRouted":
      if case let .int(index)? = parameters["index"] {
        self = .actionNotRouted(index: Int(index))
      } else {
        self = .unknown(name: name, parameters: parameters)
      }
    case "io.switchyard.Store.PathNotFound": self = .pathNotFound(path: string("path") ?? "")
    case "io.switchyard.Store.ShuttingDown": self = .shuttingDown
    case "io.switchyard.Store.TooManyConnections":
      guard case let .int(limit)? = parameters["limit"] else {
        self = .unknown(name: name, parameters: parameters)
        return
      }
      self = .tooManyConnections(limit: Int(limit))
    case "io.switchyard.Store.Timeout":
      switch parameters["seconds"] {
      case let .double(seconds)?: self = .timeout(seconds: seconds)
      case let .int(seconds)?: self = .timeout(seconds: Double(seconds))
      default: self = .unknown(name: name, parameters: parameters)
      }
    case "io.switchyard.Store.FeatureCrashed":
      self = .featureCrashed(feature: string("feature") ?? "", reason: string("reason") ?? "")
    case "io.switchyard.Store.InternalAction":
      guard case let .int(index)? = parameters["index"] else {
        self = .unknown(name: name, parameters: parameters)
        return
      }
      self = .internalAction(index: Int(index), feature: string("feature") ?? "", action: string("action") ?? "")
    case "io.switchyard.Store.PermissionDenied":
      self = .permissionDenied(
        method: string("method") ?? "", reason: string("reason") ?? "", action: string("action"), path: string("path")
      )
    case "io.switchyard.Store.InvalidRequest": self = .invalidRequest(reason: string("reason") ?? "")
    case "org.varlink.service.MethodNotFound": self = .methodNotFound(method: string("method") ?? "")
    case "org.varlink.service.InterfaceNotFound": self = .interfaceNotFound(interface: string("interface") ?? "")
    case "org.varlink.service.InvalidParameter": self = .invalidParameter(parameter: string("parameter") ?? "")
    case "org.varlink.service.ExpectedMore": self = .expectedMore
    default: self = .unknown(name: name, parameters: parameters)
    }
  }

  /// The error's qualified Varlink name, such as `io.switchyard.Store.PathNotFound`.
  public var name: String {
    switch self {
    case .invalidAction: "io.switchyard.Store.InvalidAction"
    case .actionNotRouted: "io.switchyard.Store.ActionNotRouted"
    case .pathNotFound: "io.switchyard.Store.PathNotFound"
    case .shuttingDown: "io.switchyard.Store.ShuttingDown"
    case .tooManyConnections: "io.switchyard.Store.TooManyConnections"
    case .timeout: "io.switchyard.Store.Timeout"
    case .featureCrashed: "io.switchyard.Store.FeatureCrashed"
    case .internalAction: "io.switchyard.Store.InternalAction"
    case .permissionDenied: "io.switchyard.Store.PermissionDenied"
    case .invalidRequest: "io.switchyard.Store.InvalidRequest"
    case .methodNotFound: "org.varlink.service.MethodNotFound"
    case .interfaceNotFound: "org.varlink.service.InterfaceNotFound"
    case .invalidParameter: "org.varlink.service.InvalidParameter"
    case .expectedMore: "org.varlink.service.ExpectedMore"
    case let .unknown(name, _): name
    }
  }

  /// The error's parameters, as the daemon sent them.
  public var parameters: JSONValue {
    switch self {
    case let .invalidAction(reason, path): ["reason": .string(reason), "path": .string(path)]
    case let .actionNotRouted(index): ["index": .int(Int64(index))]
    case let .pathNotFound(path): ["path": .string(path)]
    case .shuttingDown, .expectedMore: [:]
    case let .tooManyConnections(limit): ["limit": .int(Int64(limit))]
    case let .timeout(seconds): ["seconds": .double(seconds)]
    case let .featureCrashed(feature, reason): ["feature": .string(feature), "reason": .string(reason)]
    case let .internalAction(index, feature, action):
      ["index": .int(Int64(index)), "feature": .string(feature), "action": .string(action)]
    case let .permissionDenied(method, reason, action, path):
      {
        var parameters: JSONObject = ["method": .string(method), "reason": .string(reason)]
        if let action { parameters["action"] = .string(action) }
        if let path { parameters["path"] = .string(path) }
        return .object(parameters)
      }()
    case let .invalidRequest(reason): ["reason": .string(reason)]
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

/// Something went wrong with the connection itself, rather than with a call.
public enum SwitchyardConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The socket could not be connected to: it does not exist, nobody listens, or access is denied.
  case cannotConnect(path: String, reason: String)
  /// The connection closed before the call was answered.
  case connectionClosed
  /// A reply was larger than the client accepts.
  case messageTooLarge(limit: Int)
  /// A reply was not the JSON a Varlink reply is.
  case malformedReply(String)
  /// A subscription's daemon numbers its changes, in the same history, from below a change the
  /// subscription already delivered. (A daemon that restarted with a new history answers with a
  /// snapshot of it instead, which the subscription takes.)
  case sequenceWentBackwards(delivered: UInt64, received: UInt64)

  public var description: String {
    switch self {
    case let .cannotConnect(path, reason): "cannot connect to \(path): \(reason)"
    case .connectionClosed: "the connection closed"
    case let .messageTooLarge(limit): "a reply exceeds the limit of \(limit) bytes"
    case let .malformedReply(reason): "malformed reply: \(reason)"
    case let .sequenceWentBackwards(delivered, received):
      "the daemon's sequence went back from \(delivered) to \(received)"
    }
  }
}
