import ArgumentParser
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

struct Describe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List the features the daemon hosts: their state's paths, route, every action case, where each runs.",
    discussion: """
      Each action is spelled as `switchyard send` takes it: counter.incrTapped, \
      favoritePrimes.deleteFavoritePrimes(IndexSet) takes a payload. --json prints the \
      Describe reply itself.
      """
  )

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Print the raw Describe reply, as pretty JSON.")
  var json = false

  func run() async throws {
    try await self.global.withClient(wireErrors: self.json) { client in
      let reply = try await client.call(method: StoreInterface.Method.describe.qualifiedName)
      if self.json { return print(reply.prettyPrinted()) }
      // Each feature's state, for the paths under it: left out where the caller may not read it.
      var states: [String: JSONValue] = [:]
      for feature in reply["features"]?.arrayValue ?? [] {
        guard let pointer = feature["state"]?.stringValue, let name = feature["name"]?.stringValue else { continue }
        states[name] = try? await client.call(
          method: StoreInterface.Method.get.qualifiedName, parameters: ["path": .string(pointer)]
        )["state"]
      }
      print(DescribeView(describe: reply, states: states).render(style: Style.forTerminal(json: false)))
    }
  }
}

/// `switchyard describe` as text: a block per feature, then what the caller may do. It shows
/// what the reply holds and passes over fields it does not know, so that a newer daemon's
/// `Describe` reads as well.
///
/// ```
/// primes  /primes  process  pid 4242  running  0 restarts
///   state     /primes/count
///             /primes/favoritePrimes
///   action    PrimeTime.Primes.Action
///   route     full
///   cases     counter.decrTapped
///             counter.incrTapped
///             favoritePrimes.deleteFavoritePrimes(IndexSet)
///   internal  counter.nthPrimeResponse(n: Int, prime: Int?)
/// ```
struct DescribeView {
  let describe: JSONValue
  /// Each feature's state by name, where the caller may read it: its members are listed.
  var states: [String: JSONValue] = [:]

  func render(style: Style) -> String {
    var blocks: [String] = []
    for feature in self.describe["features"]?.arrayValue ?? [] {
      var head = [style.bold(feature["name"]?.stringValue ?? "?"), feature["state"]?.stringValue ?? "", feature["isolation"]?.stringValue ?? ""]
      if let worker = feature["worker"], worker != .null { head += WorkerText.cells(worker, style: style) }
      var rows: [[String]] = []
      if let name = feature["name"]?.stringValue, let pointer = feature["state"]?.stringValue, let state = self.states[name] {
        rows += Self.list("state", .array(Self.paths(of: state, at: pointer).map(JSONValue.string)))
      }
      if let action = feature["action"]?.stringValue { rows.append(["action", action]) }
      let route = feature["route"]?.stringValue ?? (feature["readOnly"]?.boolValue == true ? "read-only" : "full")
      rows.append(["route", route])
      let prefix = feature["actionPrefix"]?.stringValue.map { $0.isEmpty ? "" : $0 + "." } ?? ""
      let described = Self.leaves(of: feature["cases"]?.arrayValue ?? [], prefix: prefix, isInternal: false)
      if described.isEmpty {
        // An action type that does not describe its cases: the names the daemon knows.
        rows += Self.list("cases", feature["actions"])
        rows += Self.list("internal", feature["internalActions"])
      } else {
        rows += Self.list("cases", .array(described.filter { !$0.isInternal }.map { .string($0.text) }))
        rows += Self.list("internal", .array(described.filter(\.isInternal).map { .string($0.text) }))
      }
      blocks.append(([head.filter { !$0.isEmpty }.joined(separator: "  ")] + Formatting.table(rows).map { "  " + $0 }).joined(separator: "\n"))
    }
    if let access = self.describe["access"] {
      let granted = ["read", "write", "admin"].filter { access[$0]?.boolValue == true }
      var line = "access: " + (granted.isEmpty ? "none" : granted.joined(separator: ", "))
      if let paths = access["paths"]?.arrayValue { line += "; paths " + paths.compactMap(\.stringValue).joined(separator: ", ") }
      if let actions = access["actions"]?.arrayValue { line += "; actions " + actions.compactMap(\.stringValue).joined(separator: ", ") }
      blocks.append(line)
    }
    return blocks.joined(separator: "\n\n")
  }

  /// Every case that takes no further action, spelled as the short form takes it: the path of
  /// case names to it, then its payload's types (`todos.add(title: String)`); internal when it
  /// or a case above it is.
  static func leaves(of cases: [JSONValue], prefix: String, isInternal: Bool) -> [(text: String, isInternal: Bool)] {
    cases.flatMap { element -> [(text: String, isInternal: Bool)] in
      let name = prefix + (element["name"]?.stringValue ?? "?")
      let isInternal = isInternal || element["internal"]?.boolValue == true
      let payload = element["payload"]?.arrayValue ?? []
      if payload.count == 1, let nested = payload[0]["cases"]?.arrayValue, !nested.isEmpty {
        return Self.leaves(of: nested, prefix: name + ".", isInternal: isInternal)
      }
      guard !payload.isEmpty else { return [(name, isInternal)] }
      let values = payload.map { value in
        (value["label"]?.stringValue.map { "\($0): " } ?? "") + (value["type"]?.stringValue ?? "?")
      }
      return [(name + "(" + values.joined(separator: ", ") + ")", isInternal)]
    }
  }

  /// The paths of the members of a feature's state at `pointer` (the pointer itself when the
  /// state has none).
  static func paths(of state: JSONValue, at pointer: String) -> [String] {
    switch state {
    case let .object(members) where !members.isEmpty:
      return members.keys.map { pointer + "/" + $0.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1") }
    default:
      return [pointer]
    }
  }

  /// A label and one row per element: a case name, or an object's name and payload shape.
  private static func list(_ label: String, _ value: JSONValue?) -> [[String]] {
    let elements = value?.arrayValue ?? []
    return elements.enumerated().map { index, element in
      [index == 0 ? label : "", Self.caseText(element)]
    }
  }

  /// `counter.incrTapped`, or for an object `name payload`, the payload compact JSON.
  private static func caseText(_ element: JSONValue) -> String {
    if let name = element.stringValue { return name }
    guard case let .object(object) = element else { return element.serialized() }
    let name = (object["name"] ?? object["case"])?.stringValue ?? ""
    let rest = object.filter { $0.key != "name" && $0.key != "case" }
    guard !rest.isEmpty else { return name }
    let shape = rest.count == 1 ? rest.values.first! : .object(rest)
    return name.isEmpty ? shape.serialized() : "\(name) \(shape.serialized())"
  }
}
