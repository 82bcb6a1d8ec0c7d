/// The samples of a Prometheus text exposition, as `switchyard top` reads the daemon's metrics:
/// each line's metric name, labels and value; comments skipped.
///
/// ```swift
/// let samples = PrometheusSamples(parsing: #"switchyard_calls_total{method="Send",result="ok"} 3"#)
/// samples.value("switchyard_calls_total", ["method": "Send", "result": "ok"])  // 3
/// ```
struct PrometheusSamples {
  struct Sample: Equatable {
    let name: String
    let labels: [String: String]
    let value: Double
  }

  private(set) var samples: [Sample] = []

  init(parsing text: String) {
    for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
      if let sample = Self.sample(Substring(line)) { self.samples.append(sample) }
    }
  }

  /// The samples named `name` whose labels include `labels`.
  func matching(_ name: String, _ labels: [String: String] = [:]) -> [Sample] {
    self.samples.filter { sample in sample.name == name && labels.allSatisfy { sample.labels[$0.key] == $0.value } }
  }

  /// The value of the first sample named `name` with `labels`.
  func value(_ name: String, _ labels: [String: String] = [:]) -> Double? {
    self.matching(name, labels).first?.value
  }

  /// The values of one label among the samples named `name`, in the order they first come.
  func labelValues(_ label: String, of name: String) -> [String] {
    var seen: [String] = []
    for sample in self.matching(name) {
      if let value = sample.labels[label], !seen.contains(value) { seen.append(value) }
    }
    return seen
  }

  /// The histogram `name` with `labels`: its buckets' upper bounds in seconds and cumulative
  /// counts, ascending, `+Inf` last.
  func histogram(_ name: String, _ labels: [String: String]) -> Histogram {
    let buckets = self.matching(name + "_bucket", labels).compactMap { sample -> (bound: Double, count: Double)? in
      guard let le = sample.labels["le"] else { return nil }
      return (le == "+Inf" ? .infinity : Double(le) ?? .nan, sample.value)
    }
    return Histogram(buckets: buckets.sorted { $0.bound < $1.bound })
  }

  private static func sample(_ line: Substring) -> Sample? {
    var rest = line[...]
    let nameEnd = rest.firstIndex { $0 == "{" || $0 == " " } ?? rest.endIndex
    let name = String(rest[..<nameEnd])
    rest = rest[nameEnd...]
    var labels: [String: String] = [:]
    if rest.first == "{" {
      rest = rest.dropFirst()
      while let first = rest.first, first != "}" {
        guard let equals = rest.firstIndex(of: "=") else { return nil }
        let key = String(rest[..<equals].drop { $0 == "," || $0 == " " })
        rest = rest[rest.index(after: equals)...]
        guard rest.first == "\"" else { return nil }
        rest = rest.dropFirst()
        var value = ""
        while let character = rest.first, character != "\"" {
          rest = rest.dropFirst()
          if character == "\\", let escaped = rest.first {
            rest = rest.dropFirst()
            value.append(escaped == "n" ? "\n" : escaped)
          } else {
            value.append(character)
          }
        }
        rest = rest.dropFirst()
        labels[key] = value
        if rest.first == "," { rest = rest.dropFirst() }
      }
      rest = rest.dropFirst()
    }
    let fields = rest.split(separator: " ")
    guard let text = fields.first, let value = Double(text) ?? (text == "+Inf" ? .infinity : nil) else { return nil }
    return Sample(name: name, labels: labels, value: value)
  }

  /// A histogram's buckets, cumulative.
  struct Histogram: Equatable {
    var buckets: [(bound: Double, count: Double)]

    static func == (lhs: Self, rhs: Self) -> Bool {
      lhs.buckets.elementsEqual(rhs.buckets) { $0.bound == $1.bound && $0.count == $1.count }
    }

    var count: Double { self.buckets.last?.count ?? 0 }

    /// What was observed since `earlier`: the differences of the counts.
    func since(_ earlier: Histogram?) -> Histogram {
      guard let earlier, earlier.buckets.count == self.buckets.count else { return self }
      return Histogram(
        buckets: zip(self.buckets, earlier.buckets).map { now, then in (bound: now.bound, count: max(0, now.count - then.count)) }
      )
    }

    /// The `q` quantile, interpolated within its bucket as Prometheus's `histogram_quantile`
    /// does; `nil` without observations. Past the last finite bound it is that bound.
    func quantile(_ q: Double) -> Double? {
      let total = self.count
      guard total > 0 else { return nil }
      let rank = q * total
      var lower = 0.0
      var below = 0.0
      for (bound, cumulative) in self.buckets {
        if cumulative >= rank {
          if bound == .infinity { return lower }
          let inBucket = cumulative - below
          return inBucket > 0 ? lower + (bound - lower) * (rank - below) / inBucket : bound
        }
        (lower, below) = (bound, cumulative)
      }
      return lower
    }
  }
}
