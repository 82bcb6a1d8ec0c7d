import SwitchyardJSON

/// What the human output reads from replies, leniently: a field of another type than expected
/// reads as absent.
extension JSONValue {
  var stringValue: String? {
    if case let .string(value) = self { value } else { nil }
  }

  var intValue: Int? {
    switch self {
    case let .int(value): Int(exactly: value)
    case let .double(value): Int(exactly: value.rounded())
    default: nil
    }
  }

  var doubleValue: Double? {
    switch self {
    case let .int(value): Double(value)
    case let .double(value): value
    default: nil
    }
  }

  var boolValue: Bool? {
    if case let .bool(value) = self { value } else { nil }
  }

  var arrayValue: [JSONValue]? {
    if case let .array(value) = self { value } else { nil }
  }
}
