import SwitchyardJSON
import SwitchyardJournal

/// A journaled change as the inspector's timeline shows it: the journal's entry, with the case
/// path of its action (`favoritePrimes.deleteFavoritePrimes`) that the filter matches and the
/// page shows.
///
/// The patch and the action are written as the journal keeps them (compact JSON the daemon
/// wrote), not parsed and written again.
struct TimelineEntry {
  let change: JournaledChange
  /// The action's cases, outermost first; empty when the action is not known.
  let casePath: [String]

  init(_ change: JournaledChange) {
    self.change = change
    self.casePath = change.cause?.action.flatMap { try? JSONValue(parsing: $0) }.map(Self.casePath(of:)) ?? []
  }

  /// The case names an encoded action nests, down to its payload: a payload's positional labels
  /// (`_0`) and a case's several labels end it.
  static func casePath(of action: JSONValue) -> [String] {
    var path: [String] = []
    var node = action
    while case let .object(members) = node, members.count == 1, let only = members.elements.first, path.count < 32,
      !(only.key.hasPrefix("_") && only.key.dropFirst().allSatisfy(\.isNumber))
    {
      path.append(only.key)
      node = only.value
    }
    return path
  }

  /// Whether the action is of the case `prefix` names, or a case within it.
  func isOfCase(_ prefix: [String]) -> Bool {
    self.casePath.starts(with: prefix)
  }

  /// The entry as one JSON object.
  func write(into bytes: inout [UInt8]) {
    func member(_ name: String, _ value: JSONValue) {
      bytes += Array(",\"\(name)\":".utf8)
      bytes += value.serializedBytes()
    }
    bytes += Array("{\"seq\":\(self.change.seq)".utf8)
    member("time", .double(self.change.time))
    if let feature = self.change.feature { member("feature", .string(feature)) }
    member("case", .string(self.casePath.joined(separator: ".")))
    bytes += Array(",\"patch\":".utf8)
    bytes += self.change.patch
    if let cause = self.change.cause {
      member("origin", .string(cause.origin.rawValue))
      if let action = cause.action {
        bytes += Array(",\"action\":".utf8)
        bytes += action
      }
      if let peer = cause.peer {
        member("uid", .int(Int64(peer.uid)))
        member("pid", .int(Int64(peer.pid)))
        if let certificate = peer.certificate { member("certificate", .string(certificate)) }
      }
      if let nanoseconds = cause.reduceNanoseconds { member("reduceNanoseconds", .int(Int64(clamping: nanoseconds))) }
    }
    bytes.append(UInt8(ascii: "}"))
  }
}
