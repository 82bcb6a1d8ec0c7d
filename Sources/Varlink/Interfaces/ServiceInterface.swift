/// The interface every Varlink service implements, as the Varlink specification defines it.
public enum ServiceInterface {
  public static let name = "org.varlink.service"

  /// Its methods.
  public enum Method: String, InterfaceMember {
    public static var interface: String { ServiceInterface.name }

    case getInfo = "GetInfo"
    case getInterfaceDescription = "GetInterfaceDescription"
  }

  /// Its errors.
  public enum ErrorName: String, InterfaceMember {
    public static var interface: String { ServiceInterface.name }

    case interfaceNotFound = "InterfaceNotFound"
    case methodNotFound = "MethodNotFound"
    case methodNotImplemented = "MethodNotImplemented"
    case invalidParameter = "InvalidParameter"
    case permissionDenied = "PermissionDenied"
    case expectedMore = "ExpectedMore"

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
