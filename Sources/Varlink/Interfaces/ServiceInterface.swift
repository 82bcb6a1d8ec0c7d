/// The interface every Varlink service implements, as the Varlink specification defines it.
public enum ServiceInterface {
  public static let name = "org.varlink.service"

  /// Its methods.
  public enum Method: String, CaseIterable, Sendable {
    case getInfo = "GetInfo"
    case getInterfaceDescription = "GetInterfaceDescription"

    /// The method's qualified name, such as `org.varlink.service.GetInfo`.
    public var qualifiedName: String { "\(ServiceInterface.name).\(self.rawValue)" }
  }

  /// Its errors.
  public enum ErrorName: String, CaseIterable, Sendable {
    case interfaceNotFound = "InterfaceNotFound"
    case methodNotFound = "MethodNotFound"
    case methodNotImplemented = "MethodNotImplemented"
    case invalidParameter = "InvalidParameter"
    case permissionDenied = "PermissionDenied"
    case expectedMore = "ExpectedMore"

    /// The error's qualified name, such as `org.varlink.service.MethodNotFound`.
    public var qualifiedName: String { "\(ServiceInterface.name).\(self.rawValue)" }

    /// The error of this interface that `qualifiedName` names, if any.
    public init?(qualifiedName: String) {
      guard qualifiedName.hasPrefix(ServiceInterface.name + ".") else { return nil }
      self.init(rawValue: String(qualifiedName.dropFirst(ServiceInterface.name.count + 1)))
    }
  }

  public static let description = """
    # The Varlink Service Interface is provided by every varlink service. It
    # describes the service and the interfaces it implements.
    interface org.varlink.service

    # Get a list of all the interfaces a service provides and information
    # about the implementation.
    method GetInfo() -> (
      vendor: string,
      product: string,
      version: string,
      url: string,
      interfaces: []string
    )

    # Get the description of an interface that is implemented by this service.
    method GetInterfaceDescription(interface: string) -> (description: string)

    # The requested interface was not found.
    error InterfaceNotFound (interface: string)

    # The requested method was not found
    error MethodNotFound (method: string)

    # The interface defines the requested method, but the service does not
    # implement it.
    error MethodNotImplemented (method: string)

    # One of the passed parameters is invalid.
    error InvalidParameter (parameter: string)

    # Client is denied access
    error PermissionDenied ()

    # Method is expected to be called with 'more' set to true, but wasn't
    error ExpectedMore ()

    """

}
