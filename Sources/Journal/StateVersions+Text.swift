import SwitchyardJSON

extension StateVersions {
  /// As a journal keeps them (`version_mark`): a JSON object of each feature's version.
  package var text: String {
    var object = JSONObject()
    for (name, version) in self.sorted(by: { $0.key < $1.key }) { object[name] = .int(Int64(version)) }
    return String(decoding: JSONValue.object(object).serializedBytes(), as: UTF8.self)
  }

  /// The versions in `text`, as ``text`` writes them; none of what does not read as one.
  package init(text: String) {
    self.init()
    if case let .object(fields)? = try? JSONValue(parsing: Array(text.utf8)) {
      for (name, value) in fields { if case let .int(version) = value { self[name] = Int(version) } }
    }
  }
}
