import OrderedCollections
import SwitchyardJSON

/// One reply to a call: its parameters, and whether more replies follow.
public struct VarlinkReply: Sendable, Equatable {
  public var parameters: JSONObject
  /// More replies follow (the call was made with `more`).
  public var continues: Bool

  public init(parameters: JSONObject, continues: Bool = false) {
    self.parameters = parameters
    self.continues = continues
  }

  /// The reply as a message, the way a service writes it.
  public var message: JSONValue {
    var object: JSONObject = ["parameters": .object(self.parameters)]
    if self.continues { object["continues"] = true }
    return .object(object)
  }
}

/// What a service answered a call with, as a client reads it: a reply, or an error.
public enum VarlinkAnswer: Sendable, Equatable {
  case reply(VarlinkReply)
  case error(VarlinkError)

  /// Reads a message a service sent.
  ///
  /// - Throws: ``VarlinkMalformedAnswer`` when it is not an object, or its `error`, `parameters`
  ///   or `continues` have the wrong type.
  public init(parsing message: JSONValue) throws(VarlinkMalformedAnswer) {
    guard case let .object(object) = message else { throw VarlinkMalformedAnswer("an answer must be a JSON object") }
    let parameters: JSONObject
    switch object["parameters"] {
    case nil, .null: parameters = [:]
    case let .object(value)?: parameters = value
    default: throw VarlinkMalformedAnswer("\"parameters\" must be an object")
    }
    switch object["error"] {
    case nil, .null:
      break
    case let .string(name)?:
      self = .error(VarlinkError(name, parameters))
      return
    default:
      throw VarlinkMalformedAnswer("\"error\" must be a string")
    }
    switch object["continues"] {
    case nil, .null, .bool(false)?: self = .reply(VarlinkReply(parameters: parameters))
    case .bool(true)?: self = .reply(VarlinkReply(parameters: parameters, continues: true))
    default: throw VarlinkMalformedAnswer("\"continues\" must be a boolean")
    }
  }
}

/// A message from a service that is not a Varlink answer.
public struct VarlinkMalformedAnswer: Error, Sendable, Equatable, CustomStringConvertible {
  public var description: String

  public init(_ description: String) {
    self.description = description
  }
}
