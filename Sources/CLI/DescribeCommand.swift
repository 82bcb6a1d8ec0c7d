import ArgumentParser
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

struct Describe: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "List the features the daemon hosts: state pointer, route, action cases, where each runs.",
    discussion: "--json prints the Describe reply itself."
  )

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Print the raw Describe reply, as pretty JSON.")
  var json = false

  func run() async throws {
    try await self.global.withClient { client in
      let reply = try await client.call(method: StoreInterface.Method.describe.qualifiedName)
      print(self.json ? reply.prettyPrinted() : DescribeView(describe: reply).render(style: Style.forTerminal(json: false)))
    }
  }
}

/// `switchyard describe` as text: a block per feature, then what the caller may do. It shows
/// what the reply holds and passes over fields it does not know, so that a newer daemon's
/// `Describe` reads as well.
///
/// ```
/// primes  /primes  process  pid 4242  running  0 restarts
///   action    PrimeTime.Primes.Action
///   route     full
///   cases     counter.decrTapped
///             counter.incrTapped
///   internal  counter.nthPrimeResponse
/// ```
struct DescribeView {
  let describe: JSONValue

  func render(style: Style) -> String {
    var blocks: [String] = []
    for feature in self.describe["features"]?.arrayValue ?? [] {
      var head = [style.bold(feature["name"]?.stringValue ?? "?"), feature["state"]?.stringValue ?? "", feature["isolation"]?.stringValue ?? ""]
      if let worker = feature["worker"], worker != .null { head += WorkerText.cells(worker, style: style) }
      var rows: [[String]] = []
      if let action = feature["action"]?.stringValue { rows.append(["action", action]) }
      let route = feature["route"]?.stringValue ?? (feature["readOnly"]?.boolValue == true ? "read-only" : "full")
      rows.append(["route", route])
      rows += Self.list("cases", feature["actions"])
      rows += Self.list("internal", feature["internalActions"])
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
