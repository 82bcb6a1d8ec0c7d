import OrderedCollections
import SwitchyardJSON

/// A Varlink error reply: a qualified name and parameters that say why.
///
/// The errors of `org.varlink.service` have constructors here; those of
/// `io.switchyard.Store` are ``SwitchyardError``'s cases (`VarlinkError(.pathNotFound(path: "/x"))`).
public struct VarlinkError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The qualified name, such as `org.varlink.service.MethodNotFound`.
  public var name: String
  public var parameters: JSONObject

  public init(_ name: String, _ parameters: JSONObject = [:]) {
    self.name = name
    self.parameters = parameters
  }

  public var description: String {
    "\(self.name) \(JSONValue.object(self.parameters))"
  }

  /// The error as a message, the way a service writes it.
  public var message: JSONValue {
    .object(["error": .string(self.name), "parameters": .object(self.parameters)])
  }

  public static func methodNotFound(_ method: String) -> Self {
    Self(ServiceInterface.ErrorName.methodNotFound.qualifiedName, ["method": .string(method)])
  }

  public static func interfaceNotFound(_ interface: String) -> Self {
    Self(ServiceInterface.ErrorName.interfaceNotFound.qualifiedName, ["interface": .string(interface)])
  }

  public static func invalidParameter(_ parameter: String) -> Self {
    Self(ServiceInterface.ErrorName.invalidParameter.qualifiedName, ["parameter": .string(parameter)])
  }

  public static func expectedMore() -> Self {
    Self(ServiceInterface.ErrorName.expectedMore.qualifiedName)
  }

  /// `io.switchyard.Store.InvalidRequest`: the message is not a well-formed call.
  public static func invalidRequest(_ reason: String) -> Self {
    Self(SwitchyardError.invalidRequest(reason: reason))
  }
}
