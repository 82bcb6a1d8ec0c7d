import OrderedCollections
import SwitchyardRuntime

/// A Varlink method call: `{"method": "iface.Method", "parameters": {…}, "more": true, "oneway": false}`.
struct VarlinkCall: Sendable {
  var method: String
  var parameters: JSONObject
  var more: Bool
  var oneway: Bool

  /// The interface part of `method`.
  var interface: String {
    guard let dot = self.method.lastIndex(of: ".") else { return "" }
    return String(self.method[..<dot])
  }

  /// The method's own name.
  var name: String {
    guard let dot = self.method.lastIndex(of: ".") else { return self.method }
    return String(self.method[self.method.index(after: dot)...])
  }

  init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false) {
    self.method = method
    self.parameters = parameters
    self.more = more
    self.oneway = oneway
  }

  /// Reads a call from a message's JSON, or says what is wrong with it.
  init(parsing message: JSONValue) throws(VarlinkError) {
    guard case let .object(object) = message else {
      throw .invalidRequest("a call must be a JSON object")
    }
    guard case let .string(method)? = object["method"] else {
      throw .invalidRequest("a call needs \"method\", a string")
    }
    self.method = method
    switch object["parameters"] {
    case nil, .null: self.parameters = [:]
    case let .object(parameters)?: self.parameters = parameters
    default: throw .invalidRequest("\"parameters\" must be an object")
    }
    self.more = try Self.flag("more", in: object)
    self.oneway = try Self.flag("oneway", in: object)
    if self.more && self.oneway { throw .invalidRequest("a call cannot be both \"more\" and \"oneway\"") }
  }

  private static func flag(_ key: String, in object: JSONObject) throws(VarlinkError) -> Bool {
    switch object[key] {
    case nil, .null: return false
    case let .bool(value)?: return value
    default: throw .invalidRequest("\"\(key)\" must be a boolean")
    }
  }
}

/// A Varlink error reply: a qualified name and parameters that say why.
public struct VarlinkError: Error, Sendable, Equatable, CustomStringConvertible {
  public var name: String
  public var parameters: JSONObject

  public init(_ name: String, _ parameters: JSONObject = [:]) {
    self.name = name
    self.parameters = parameters
  }

  public var description: String {
    "\(self.name) \(JSONValue.object(self.parameters))"
  }

  static func methodNotFound(_ method: String) -> Self {
    Self("org.varlink.service.MethodNotFound", ["method": .string(method)])
  }

  static func interfaceNotFound(_ interface: String) -> Self {
    Self("org.varlink.service.InterfaceNotFound", ["interface": .string(interface)])
  }

  static func invalidParameter(_ parameter: String) -> Self {
    Self("org.varlink.service.InvalidParameter", ["parameter": .string(parameter)])
  }

  static func expectedMore() -> Self {
    Self("org.varlink.service.ExpectedMore")
  }

  /// `io.switchyard.Store.PermissionDenied`, naming the method and what of it was refused.
  static func permissionDenied(_ method: String, _ reason: String, action: String? = nil, path: String? = nil) -> Self {
    var parameters: JSONObject = ["method": .string(method), "reason": .string(reason)]
    if let action { parameters["action"] = .string(action) }
    if let path { parameters["path"] = .string(path) }
    return Self("\(StoreInterface.name).PermissionDenied", parameters)
  }

  /// `io.switchyard.Store.TooManyConnections`: the daemon serves as many connections as it may.
  static func tooManyConnections(limit: Int) -> Self {
    Self("\(StoreInterface.name).TooManyConnections", ["limit": .int(Int64(limit))])
  }

  static func invalidRequest(_ reason: String) -> Self {
    Self("\(StoreInterface.name).InvalidRequest", ["reason": .string(reason)])
  }
}

/// One reply to a call: its parameters, and whether more replies follow.
struct VarlinkReply: Sendable {
  var parameters: JSONObject
  var continues: Bool = false

  var message: JSONValue {
    var object: JSONObject = ["parameters": .object(self.parameters)]
    if self.continues { object["continues"] = true }
    return .object(object)
  }
}

extension VarlinkError {
  var message: JSONValue {
    .object(["error": .string(self.name), "parameters": .object(self.parameters)])
  }
}
