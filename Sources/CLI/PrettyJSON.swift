import SwitchyardJSON

extension JSONValue {
  /// The JSON text indented by two spaces, keys in the order they came.
  func prettyPrinted(indent: String = "") -> String {
    let inner = indent + "  "
    switch self {
    case let .object(object) where !object.isEmpty:
      let members = object.map { key, value in
        "\(inner)\(JSONValue.string(key).serialized()): \(value.prettyPrinted(indent: inner))"
      }
      return "{\n\(members.joined(separator: ",\n"))\n\(indent)}"
    case let .array(array) where !array.isEmpty:
      let elements = array.map { inner + $0.prettyPrinted(indent: inner) }
      return "[\n\(elements.joined(separator: ",\n"))\n\(indent)]"
    default:
      return self.serialized()
    }
  }
}
