/// A method or error of a Varlink interface, named by its `rawValue` within the interface.
///
/// ```swift
/// StoreInterface.Method.send.qualifiedName  // "io.switchyard.Store.Send"
/// StoreInterface.ErrorName(qualifiedName: "io.switchyard.Store.PathNotFound")  // .pathNotFound
/// ```
public protocol InterfaceMember: RawRepresentable<String>, CaseIterable, Sendable {
  /// The interface's name, such as `io.switchyard.Store`.
  static var interface: String { get }
}

extension InterfaceMember {
  /// The member's qualified name: the interface's name, a dot and its own.
  public var qualifiedName: String { "\(Self.interface).\(self.rawValue)" }

  /// The member of this interface that `qualifiedName` names, if any.
  public init?(qualifiedName: String) {
    guard qualifiedName.hasPrefix(Self.interface + "."), qualifiedName.count > Self.interface.count + 1 else {
      return nil
    }
    self.init(rawValue: String(qualifiedName.dropFirst(Self.interface.count + 1)))
  }
}
