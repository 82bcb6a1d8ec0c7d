import ArgumentParser
import Foundation
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

struct Status: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Show how the daemon is doing: uptime, state, durability, clients, features and workers.",
    discussion: """
      A short summary, as systemctl status gives of a unit; --json prints the Status reply \
      itself.
      """
  )

  @OptionGroup var global: GlobalOptions

  @Flag(help: "Print the raw Status reply, as pretty JSON.")
  var json = false

  func run() async throws {
    try await self.global.withClient(wireErrors: self.json) { client in
      if self.json {
        return print(try await client.call(method: StoreInterface.Method.status.qualifiedName).prettyPrinted())
      }
      // One connection for the three calls, pipelined.
      try await client.connect()
      async let status = client.call(method: StoreInterface.Method.status.qualifiedName)
      async let describe = client.call(method: StoreInterface.Method.describe.qualifiedName)
      async let info = client.call(method: ServiceInterface.Method.getInfo.qualifiedName)
      let view = StatusView(
        socket: self.global.socketPath, status: try await status, describe: try await describe, info: try? await info
      )
      print(view.render(style: Style.forTerminal(json: false)))
    }
  }
}

/// `switchyard status` as text: made from the `Status` and `Describe` replies, whatever fields
/// they hold beyond those it shows.
///
/// ```
/// ● todosd at run/switchyard.sock
///      Active: up 2h 3min
///       State: seq 1234 after 1230 actions (0.2/s since start)
///  Durability: strict, journal 0b1c2d3e… in run/state
///  Last stop: not clean (killed or crashed), on the same boot: nothing acknowledged lost
///     Clients: 2 connections, 1 subscriber
///   Listeners: unix:run/switchyard.sock 1 (uid 1000 1), tcp:0.0.0.0:7501 1 (operator 1; 2 calls denied: billing 2)
///     Restart: took over 2 connections and 1 subscription from the process before, serving paused 41ms
///   Inspector: http://127.0.0.1:9464/inspector?token=…
///    Features: 3
///              primes        /primes        process  pid 4242  running  0 restarts
///              activityFeed  /activityFeed  actor
/// ```
struct StatusView {
  let socket: String
  let status: JSONValue
  let describe: JSONValue?
  /// `GetInfo`'s reply, whose `product` names the daemon (an application's own, such as
  /// `todosd`).
  var info: JSONValue?

  func render(style: Style) -> String {
    let workers = self.status["workers"]?.arrayValue ?? []
    let durability = self.status["durability"]
    let healthy = workers.allSatisfy { $0["state"]?.stringValue == "running" } && durability?["unavailable"] == nil
    let product = self.info?["product"]?.stringValue ?? "switchyardd"
    var lines = ["\(healthy ? style.green("●") : style.red("●")) \(product) at \(self.socket)"]
    func field(_ name: String, _ value: String) {
      lines.append(Formatting.pad(name + ":", 12, right: true) + " " + value)
    }
    let uptime = self.status["uptime"]?.doubleValue ?? 0
    field("Active", "up \(Formatting.uptime(seconds: uptime))")
    let actions = self.status["actions"]?.intValue ?? 0
    let average = uptime > 0 ? Double(actions) / uptime : 0
    field("State", "seq \(self.status["seq"]?.intValue ?? 0) after \(actions) actions (\(Formatting.rate(average))/s since start)")
    if let durability {
      var text = durability["mode"]?.stringValue ?? "?"
      if let journal = durability["journal"]?.stringValue { text += ", journal \(journal.prefix(8))…" }
      if let directory = durability["directory"]?.stringValue { text += " in \(directory)" }
      if let unavailable = durability["unavailable"]?.stringValue { text += style.red(" — journal unavailable: \(unavailable)") }
      field("Durability", text)
      // What went wrong, only when something did.
      if let lastStop = durability["lastStop"], lastStop["clean"]?.boolValue == false {
        var stop = "not clean (killed or crashed)"
        if let sameBoot = lastStop["sameBoot"]?.boolValue { stop += sameBoot ? ", on the same boot" : ", and the machine restarted" }
        if lastStop["mayHaveLost"]?.boolValue == true {
          let window = lastStop["window"]?.doubleValue.map { ", at most \(Formatting.duration(seconds: $0)) of them" } ?? ""
          let recovered = lastStop["recovered"]?.intValue ?? 0
          stop += style.yellow(": changes acknowledged after seq \(recovered) may be lost\(window); a new history began")
        } else {
          stop += ": nothing acknowledged lost"
        }
        field("Last stop", stop)
      }
      if let lost = durability["lost"]?.intValue, lost > 0 {
        var text = "at least \(lost) acknowledged change\(lost == 1 ? "" : "s") missing from the journal at start"
        if let previous = durability["previousHistory"]?.stringValue { text += " (history \(previous.prefix(8))… ended)" }
        field("Lost", style.red(text))
      }
      if let integrity = durability["integrity"]?.stringValue, integrity != "ok" {
        let found = integrity.split(separator: "\n").filter { !$0.hasPrefix("***") }.joined(separator: "; ")
        field("Integrity", style.red("the journal is damaged: \(found); restore a backup"))
      }
      if let failures = durability["pruneFailures"]?.intValue, failures > 0 {
        let last = durability["lastPruneError"]?.stringValue.map { ": \($0)" } ?? ""
        field("Pruning", style.yellow("failed \(failures) time\(failures == 1 ? "" : "s")\(last)"))
      }
    }
    if let cluster = self.status["cluster"] {
      for (name, value) in Self.clusterFields(cluster) { field(name, value) }
    }
    if let timers = self.status["timers"] {
      let features = timers["features"]?.arrayValue ?? []
      let pending = features.reduce(0) { $0 + ($1["pending"]?.intValue ?? 0) }
      let refused = features.reduce(0) { $0 + ($1["refused"]?.intValue ?? 0) }
      if pending > 0 || refused > 0 {
        var text = "\(pending) pending"
        if let due = timers["nextDue"]?.stringValue { text += ", next due \(due)" }
        if refused > 0 {
          let who = features.filter { ($0["refused"]?.intValue ?? 0) > 0 }.compactMap { $0["feature"]?.stringValue }
          text += style.yellow(", \(refused) refused (timers.maxPending) to \(who.joined(separator: ", "))")
        }
        field("Timers", text)
      }
    }
    let connections = self.status["connections"]?.intValue ?? 0
    let subscribers = self.status["subscribers"]?.intValue ?? 0
    field(
      "Clients",
      "\(connections) connection\(connections == 1 ? "" : "s"), \(subscribers) subscriber\(subscribers == 1 ? "" : "s")"
    )
    if let handOver = self.status["handOver"] { field("Restart", Self.handOverText(handOver, style: style)) }
    if let listeners = self.status["listeners"]?.arrayValue {
      field("Listeners", listeners.map(Self.listenerText).joined(separator: ", "))
    }
    // Given only to a caller who may read the journal: the URL holds the inspector's token.
    if let inspector = self.status["inspector"]?.stringValue { field("Inspector", inspector) }
    let features = self.describe?["features"]?.arrayValue ?? []
    field("Features", "\(self.status["features"]?.intValue ?? features.count)")
    let rows = features.map { feature -> [String] in
      let name = feature["name"]?.stringValue ?? "?"
      var row = [name, feature["state"]?.stringValue ?? "", feature["isolation"]?.stringValue ?? ""]
      if let worker = workers.first(where: { $0["feature"]?.stringValue == name }) ?? feature["worker"] {
        row += WorkerText.cells(worker, style: style)
      }
      return row
    }
    lines += Formatting.table(rows).map { String(repeating: " ", count: 13) + $0 }
    return lines.joined(separator: "\n")
  }

  /// `tcp:0.0.0.0:7501 3 (operator 2, billing 1; 4 handshakes refused; 1 connection over the
  /// cap refused; 3 calls denied: mallory 3)`: the identities are there for a caller with the
  /// admin permission.
  static func listenerText(_ listener: JSONValue) -> String {
    let text = "\(listener["address"]?.stringValue ?? "?") \(listener["connections"]?.intValue ?? 0)"
    var details: [String] = []
    let identities = listener["identities"]?.arrayValue ?? []
    let connected = identities.filter { ($0["connections"]?.intValue ?? 0) > 0 }.map {
      "\($0["identity"]?.stringValue ?? "?") \($0["connections"]?.intValue ?? 0)"
    }
    if !connected.isEmpty { details.append(connected.joined(separator: ", ")) }
    if let refused = listener["refusedHandshakes"]?.intValue, refused > 0 {
      details.append("\(refused) handshake\(refused == 1 ? "" : "s") refused")
    }
    if let refused = listener["refusedConnections"]?.intValue, refused > 0 {
      details.append("\(refused) connection\(refused == 1 ? "" : "s") over the cap refused")
    }
    if let denied = listener["deniedCalls"]?.intValue, denied > 0 {
      let who = identities.compactMap { identity in
        identity["deniedCalls"]?.intValue.map { "\(identity["identity"]?.stringValue ?? "?") \($0)" }
      }
      details.append("\(denied) call\(denied == 1 ? "" : "s") denied" + (who.isEmpty ? "" : ": " + who.joined(separator: ", ")))
    }
    return details.isEmpty ? text : text + " (" + details.joined(separator: "; ") + ")"
  }
}

extension StatusView {
  /// What the start took over from the process before it: `took over 12 connections and 3
  /// subscriptions from the process before, serving paused 41ms`.
  static func handOverText(_ handOver: JSONValue, style: Style) -> String {
    func count(_ key: String, _ noun: String) -> String {
      let value = handOver[key]?.intValue ?? 0
      return "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
    var parts: [String] = []
    if (handOver["connections"]?.intValue ?? 0) > 0 || handOver["pause"] != nil {
      var text = "took over \(count("connections", "connection")) and \(count("subscriptions", "subscription")) from the process before"
      if let pause = handOver["pause"]?.doubleValue { text += ", serving paused \(Formatting.duration(seconds: pause))" }
      parts.append(text)
    }
    if (handOver["ended"]?.intValue ?? 0) > 0 {
      parts.append(style.yellow("ended \(count("ended", "connection")) the process before left no state for (it crashed)"))
    }
    return parts.joined(separator: "; ")
  }
}

/// A worker as the human output shows it: pid, state, restarts, and how the last one ended.
enum WorkerText {
  static func cells(_ worker: JSONValue, style: Style) -> [String] {
    let state = worker["state"]?.stringValue ?? "?"
    let restarts = worker["restarts"]?.intValue ?? 0
    var cells = [
      worker["pid"]?.intValue.map { "pid \($0)" } ?? "no pid",
      state == "running" ? state : style.yellow(state),
      "\(restarts) restart\(restarts == 1 ? "" : "s")",
    ]
    if let lastExit = worker["lastExit"]?.stringValue { cells.append("last: \(lastExit)") }
    return cells
  }
}
