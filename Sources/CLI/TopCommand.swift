import ArgumentParser
import Foundation
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

struct Top: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Watch the daemon live: features, workers, calls and clients, refreshed every few seconds.",
    discussion: """
      Features with their actions per second, reduce-time percentiles and mailbox depth; \
      workers with pid, restarts and memory; calls per method; connections and subscribers — \
      in the spirit of systemd-cgtop and redis-cli --stat. Rates and percentiles cover the \
      last interval (the first frame: everything since the daemon started). On a terminal it \
      redraws until Ctrl-C; with --once, or when stdout is not a terminal, it prints one frame.
      """
  )

  @OptionGroup var global: GlobalOptions

  @Option(help: "Seconds between two frames.")
  var interval: Double = 2

  @Flag(help: "Print one frame and exit.")
  var once = false

  func validate() throws {
    guard self.interval >= 0.1, self.interval <= 3600 else { throw ValidationError("--interval must be between 0.1 and 3600 seconds") }
  }

  func run() async throws {
    let isTerminal = isatty(STDOUT_FILENO) == 1
    let style = Style.forTerminal(json: false)
    try await self.global.withClient { client in
      let describe = try await client.call(method: StoreInterface.Method.describe.qualifiedName)
      var previous: TopSample?
      while true {
        async let status = client.call(method: StoreInterface.Method.status.qualifiedName)
        async let metrics = client.metrics()
        let sample = TopSample(status: try await status, metrics: PrometheusSamples(parsing: try await metrics), at: .now)
        let frame = TopFrame(socket: self.global.socketPath, describe: describe, sample: sample, previous: previous)
        if self.once || !isTerminal {
          return writeText(frame.render(style: style) + "\n")
        }
        // Home, clear to the end: the next frame is drawn over the last.
        writeText("\u{1B}[H\u{1B}[J" + frame.render(style: style) + "\n")
        previous = sample
        try await Task.sleep(for: .milliseconds(Int(self.interval * 1000)))
      }
    }
  }
}

/// What `top` reads from the daemon at one moment.
struct TopSample {
  let status: JSONValue
  let metrics: PrometheusSamples
  let at: ContinuousClock.Instant
}

/// One frame of `switchyard top`, from two samples: rates and percentiles over the time between
/// them, or over the daemon's whole life for the first frame.
struct TopFrame {
  let socket: String
  let describe: JSONValue
  let sample: TopSample
  let previous: TopSample?

  /// The seconds the rates are over.
  private var seconds: Double {
    if let previous {
      let elapsed = self.sample.at - previous.at
      return max(0.001, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return max(0.001, self.sample.status["uptime"]?.doubleValue ?? 0)
  }

  func render(style: Style) -> String {
    let metrics = self.sample.metrics
    let earlier = self.previous?.metrics
    let status = self.sample.status
    var lines: [String] = []
    let actions = (metrics.value("switchyard_actions_total") ?? 0) - (earlier?.value("switchyard_actions_total") ?? 0)
    let over = self.previous == nil ? "since start" : "last \(Formatting.oneDecimal(self.seconds))s"
    lines.append(
      style.bold("switchyard top")
        + " — \(self.socket) — up \(Formatting.uptime(seconds: status["uptime"]?.doubleValue ?? 0))"
        + " — seq \(status["seq"]?.intValue ?? 0) — \(Formatting.rate(actions / self.seconds)) actions/s (\(over))"
    )
    let connections = status["connections"]?.intValue ?? 0
    let subscribers = status["subscribers"]?.intValue ?? 0
    let queued = Int(metrics.value("switchyard_subscriber_queued_changes") ?? 0)
    let deepest = Int(metrics.value("switchyard_subscriber_queue_depth_max") ?? 0)
    let memory = metrics.value("process_resident_memory_bytes").map { Formatting.bytes($0) } ?? "?"
    let durability = status["durability"]?["mode"]?.stringValue ?? "?"
    var second =
      "connections \(connections)   subscribers \(subscribers) (queued \(queued), deepest \(deepest))"
      + "   memory \(memory)   durability \(durability)"
    let timers = Self.sum(metrics.matching("switchyard_timers_pending", [:]))
    if timers > 0 {
      second += "   timers \(Int(timers))"
      if let due = metrics.value("switchyard_timers_next_due_timestamp_seconds"), due > 0,
        let text = RFC3339.string(from: Date(timeIntervalSince1970: due))
      {
        second += " (next \(text))"
      }
    }
    lines.append(second)
    lines.append("")

    var features: [[String]] = [["FEATURE", "ISOLATION", "ACTIONS/S", "REDUCE p50", "p90", "p99", "MAILBOX"].map(style.bold)]
    for feature in self.describe["features"]?.arrayValue ?? [] {
      let name = feature["name"]?.stringValue ?? "?"
      let labels = ["feature": name]
      let reduce = metrics.histogram("switchyard_reduce_duration_seconds", labels)
        .since(earlier?.histogram("switchyard_reduce_duration_seconds", labels))
      features.append([
        name,
        feature["isolation"]?.stringValue ?? "",
        Formatting.rate(reduce.count / self.seconds),
        Self.quantile(reduce, 0.5), Self.quantile(reduce, 0.9), Self.quantile(reduce, 0.99),
        "\(Int(metrics.value("switchyard_mailbox_depth", labels) ?? 0))",
      ])
    }
    lines += Formatting.table(features, numeric: [2, 3, 4, 5, 6])

    let workers = status["workers"]?.arrayValue ?? []
    if !workers.isEmpty {
      lines.append("")
      var rows: [[String]] = [["WORKER", "PID", "STATE", "RESTARTS", "MEMORY", "LAST EXIT"].map(style.bold)]
      for worker in workers {
        let name = worker["feature"]?.stringValue ?? "?"
        let memory = metrics.value("switchyard_worker_resident_memory_bytes", ["feature": name]) ?? 0
        rows.append([
          name,
          worker["pid"]?.intValue.map(String.init) ?? "-",
          worker["state"]?.stringValue ?? "?",
          "\(worker["restarts"]?.intValue ?? 0)",
          memory > 0 ? Formatting.bytes(memory) : "-",
          worker["lastExit"]?.stringValue ?? "",
        ])
      }
      lines += Formatting.table(rows, numeric: [1, 3, 4])
    }

    var calls: [[String]] = [["METHOD", "CALLS/S", "ERRORS/S", "p50", "p99"].map(style.bold)]
    for method in metrics.labelValues("method", of: "switchyard_calls_total") {
      let all = Self.sum(metrics.matching("switchyard_calls_total", ["method": method]))
        - Self.sum(earlier?.matching("switchyard_calls_total", ["method": method]) ?? [])
      let ok = (metrics.value("switchyard_calls_total", ["method": method, "result": "ok"]) ?? 0)
        - (earlier?.value("switchyard_calls_total", ["method": method, "result": "ok"]) ?? 0)
      let durations = metrics.histogram("switchyard_call_duration_seconds", ["method": method])
        .since(earlier?.histogram("switchyard_call_duration_seconds", ["method": method]))
      calls.append([
        method, Formatting.rate(all / self.seconds), Formatting.rate((all - ok) / self.seconds),
        Self.quantile(durations, 0.5), Self.quantile(durations, 0.99),
      ])
    }
    if calls.count > 1 {
      lines.append("")
      lines += Formatting.table(calls, numeric: [1, 2, 3, 4])
    }
    return lines.joined(separator: "\n")
  }

  private static func quantile(_ histogram: PrometheusSamples.Histogram, _ q: Double) -> String {
    histogram.quantile(q).map { Formatting.duration(seconds: $0) } ?? "-"
  }

  private static func sum(_ samples: [PrometheusSamples.Sample]) -> Double {
    samples.reduce(0) { $0 + $1.value }
  }
}
