import OrderedCollections
import SwitchyardJSON

/// A Varlink method call: `{"method": "iface.Method", "parameters": {…}, "more": true, "oneway": false}`.
///
/// ```swift
/// let call = try VarlinkCall(parsing: try JSONValue(parsing: frame))
/// call.interface  // "io.switchyard.Store"
/// call.name       // "Send"
/// ```
public struct VarlinkCall: Sendable, Equatable {
  /// The qualified method name, such as `io.switchyard.Store.Send`.
  public var method: String
  public var parameters: JSONObject
  /// The caller wants every reply until one without `continues`.
  public var more: Bool
  /// The caller wants no reply.
  public var oneway: Bool

  /// The interface part of ``method``.
  public var interface: String { varlinkInterface(of: self.method) }

  /// The method's own name, the last part of ``method``.
  public var name: String { varlinkMethodName(of: self.method) }

  public init(method: String, parameters: JSONObject = [:], more: Bool = false, oneway: Bool = false) {
    self.method = method
    self.parameters = parameters
    self.more = more
    self.oneway = oneway
  }

  /// Reads a call from a message's JSON, or says what is wrong with it
  /// (`io.switchyard.Store.InvalidRequest`).
  public init(parsing message: JSONValue) throws(VarlinkError) {
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

  /// The call as a message, the way a client writes it.
  public var message: JSONValue {
    var object: JSONObject = ["method": .string(self.method), "parameters": .object(self.parameters)]
    if self.more { object["more"] = true }
    if self.oneway { object["oneway"] = true }
    return .object(object)
  }

  private static func flag(_ key: String, in object: JSONObject) throws(VarlinkError) -> Bool {
    switch object[key] {
    case nil, .null: return false
    case let .bool(value)?: return value
    default: throw .invalidRequest("\"\(key)\" must be a boolean")
    }
  }
}
