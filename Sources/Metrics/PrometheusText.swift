import Prometheus

/// Writes metrics in the Prometheus text exposition format (version 0.0.4), for what the daemon
/// keeps outside swift-prometheus's registry: its lock-free histograms.
///
/// ```
/// # HELP switchyard_reduce_duration_seconds Time one action took in its feature's reducer.
/// # TYPE switchyard_reduce_duration_seconds histogram
/// switchyard_reduce_duration_seconds_bucket{feature="primes",le="0.000001"} 0
/// …
/// switchyard_reduce_duration_seconds_bucket{feature="primes",le="+Inf"} 3
/// switchyard_reduce_duration_seconds_sum{feature="primes"} 0.000012
/// switchyard_reduce_duration_seconds_count{feature="primes"} 3
/// ```
struct PrometheusText {
  private(set) var text = ""

  /// A histogram family: one series per label set, durations in seconds.
  mutating func histogram(
    _ name: String, help: String, series: [(labels: [(String, String)], snapshot: LatencyHistogram.Snapshot)]
  ) {
    guard !series.isEmpty else { return }
    self.text += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
    for (labels, snapshot) in series {
      var cumulative: UInt64 = 0
      for (index, bound) in snapshot.bounds.enumerated() {
        cumulative &+= snapshot.counts[index]
        self.text += "\(name)_bucket\(Self.labels(labels + [("le", Self.seconds(bound))])) \(cumulative)\n"
      }
      let count = snapshot.count
      self.text += "\(name)_bucket\(Self.labels(labels + [("le", "+Inf")])) \(count)\n"
      self.text += "\(name)_sum\(Self.labels(labels)) \(Self.seconds(snapshot.sumNanoseconds))\n"
      self.text += "\(name)_count\(Self.labels(labels)) \(count)\n"
    }
  }

  /// A gauge family: one value per label set.
  mutating func gauge(_ name: String, help: String, series: [(labels: [(String, String)], value: Double)]) {
    guard !series.isEmpty else { return }
    self.text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
    for (labels, value) in series { self.text += "\(name)\(Self.labels(labels)) \(value)\n" }
  }

  /// `{a="1",b="2"}`, or nothing without labels; values escaped as the format asks.
  static func labels(_ labels: [(String, String)]) -> String {
    guard !labels.isEmpty else { return "" }
    return "{" + labels.map { "\($0)=\"\(Self.escape($1))\"" }.joined(separator: ",") + "}"
  }

  static func escape(_ value: String) -> String {
    var escaped = ""
    for character in value {
      switch character {
      case "\\": escaped += "\\\\"
      case "\"": escaped += "\\\""
      case "\n": escaped += "\\n"
      default: escaped.append(character)
      }
    }
    return escaped
  }

  /// Nanoseconds as seconds in plain decimal: 2_500 → `0.0000025`, 1_000_000_000 → `1`.
  static func seconds(_ nanoseconds: UInt64) -> String {
    let whole = nanoseconds / 1_000_000_000
    let fraction = nanoseconds % 1_000_000_000
    guard fraction > 0 else { return "\(whole)" }
    var digits = String(fraction)
    digits = String(repeating: "0", count: 9 - digits.count) + digits
    while digits.last == "0" { digits.removeLast() }
    return "\(whole).\(digits)"
  }
}

extension MetricNameDescriptor {
  /// A metric's whole name and its help text: the names here are written out whole, as
  /// Prometheus shows them, rather than assembled from a namespace and a unit.
  static func named(_ name: String, help: String) -> MetricNameDescriptor {
    MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
  }
}
