import Foundation
import SwitchyardAccess
import SwitchyardMetrics
import SwitchyardRuntime
import SwitchyardServer
import SwitchyardVarlink

extension StoreResponder {
  /// `Get`: the state at a path, with the sequence number it is at.
  func get(_ call: VarlinkCall) throws(VarlinkError) -> JSONObject {
    let pointer = try self.pointer(call)
    guard let (seq, value) = self.changeLog.get(pointer) else {
      throw VarlinkError(SwitchyardError.pathNotFound(path: pointer.description))
    }
    return ["seq": .int(Int64(seq)), "state": value]
  }

  /// `Describe`: the features, and what the caller may do.
  func describe(grants: Grants) -> JSONObject {
    [
      "features": .array(
        self.features.map { feature in
          var description: JSONObject = [
            "name": .string(feature.name),
            "state": .string(feature.pointer.description),
            "readOnly": .bool(feature.isReadOnly),
            "action": .string(feature.actionType),
            "actions": .array(feature.visibility.publicCases(feature.actionCases.map(\.name)).map(JSONValue.string)),
            "internalActions": .array(feature.visibility.internalActions.map(JSONValue.string)),
            "cases": feature.describedCases,
            "isolation": .string(self.workers[feature.name] == nil ? "actor" : "process"),
            "dates": feature.dates.json,
          ]
          if let worker = self.workers[feature.name] { description["worker"] = worker().json }
          if let prefix = feature.actionPrefix { description["actionPrefix"] = .string(prefix) }
          return .object(description)
        }
      ),
      "access": grants.json,
    ]
  }

  /// `Status`: how the daemon is doing; with the identities holding each listener's connections
  /// when `naming` them.
  func status(naming identities: Bool = true) -> JSONObject {
    var status: JSONObject = [
      "uptime": .double(Double((ContinuousClock.now - self.started).components.seconds)),
      "features": .int(Int64(self.features.count)),
      "connections": .int(Int64(self.counters.connections.load(ordering: .relaxed))),
      "subscribers": .int(Int64(self.subscriptions.count)),
      "actions": .int(Int64(self.actionCount.load(ordering: .relaxed))),
      "seq": .int(Int64(self.changeLog.currentSeq)),
      "workers": .array(
        self.features.compactMap { feature in self.workers[feature.name].map { $0().json } }
      ),
      "durability": self.durability.json(unavailable: self.changeLog.journalUnavailable),
    ]
    if let timers = self.timers {
      var object: JSONObject = ["maxPending": .int(Int64(timers.limit)), "features": .array(timers.census.map(\.json))]
      if let due = timers.nextDue, let text = RFC3339.string(from: Date(timeIntervalSince1970: due)) {
        object["nextDue"] = .string(text)
      }
      status["timers"] = .object(object)
    }
    if let cluster = self.cluster { status["cluster"] = cluster.json }
    let listeners = self.counters.byListener.snapshot
    if listeners.count > 1 {
      status["listeners"] = .array(listeners.map { $0.json(naming: identities) })
    }
    if let handOver = self.metrics?.handOver.last { status["handOver"] = handOver.json }
    return status
  }
}

extension LastHandOver {
  /// As `Status` gives it (`HandOver` in the interface).
  var json: JSONValue {
    var object: JSONObject = [
      "connections": .int(Int64(self.connections)), "subscriptions": .int(Int64(self.subscriptions)),
      "ended": .int(Int64(self.ended)),
    ]
    if let pause = self.pause {
      let (seconds, attoseconds) = pause.components
      object["pause"] = .double(Double(seconds) + Double(attoseconds) / 1e18)
    }
    return .object(object)
  }
}

extension StoreResponder {
  /// `Metrics`: every metric, as Prometheus text.
  func metricsText() -> JSONObject {
    ["text": .string(self.metrics?.exposition() ?? "")]
  }

  /// What the metrics read from the daemon each time they are asked for.
  func metricsSample() -> MetricsSample {
    let queues = self.subscriptions.queueDepths()
    var sample = MetricsSample(
      connections: self.counters.connections.load(ordering: .relaxed),
      subscribers: self.subscriptions.count,
      subscribersByPath: self.subscriptions.subscribersByPath(limit: MetricsSample.pathsShown),
      queuedChanges: queues.queued,
      deepestQueue: queues.deepest,
      seq: self.changeLog.currentSeq,
      actions: self.actionCount.load(ordering: .relaxed),
      mailboxes: [],
      workers: self.features.compactMap { feature in
        self.workers[feature.name].map { snapshot in
          let worker = snapshot()
          return MetricsSample.Worker(
            feature: worker.feature, pid: worker.pid, restarts: worker.restarts, isRunning: worker.state == "running"
          )
        }
      },
      timers: (self.timers?.census ?? []).map { MetricsSample.Timers(feature: $0.feature, pending: $0.pending, refused: $0.refused) },
      nextTimerDue: self.timers?.nextDue
    )
    sample.listeners = self.counters.byListener.snapshot.map {
      MetricsSample.Listener(
        address: $0.address, identities: $0.identities, refusedHandshakes: $0.refusedHandshakes,
        refusedConnections: $0.refusedConnections, deniedCalls: $0.deniedCalls
      )
    }
    return sample
  }
}

extension ListenerCount {
  /// `{"address": "tcp:0.0.0.0:7501", "connections": 2, "refusedHandshakes": 0,
  /// "refusedConnections": 0, "deniedCalls": 1, "identities": [{"identity": "operator",
  /// "connections": 2, "deniedCalls": 1}]}`: handshakes only for a TLS listener, identities
  /// (those with connections open or calls denied) by name only when `naming` them.
  func json(naming identities: Bool) -> JSONValue {
    var object: JSONObject = [
      "address": .string(self.address), "connections": .int(Int64(self.connections)),
      "refusedConnections": .int(Int64(self.refusedConnections)), "deniedCalls": .int(Int64(self.deniedCalls.values.reduce(0, +))),
    ]
    if self.address.hasPrefix("tcp:") { object["refusedHandshakes"] = .int(Int64(self.refusedHandshakes)) }
    if identities {
      let names = Set(self.identities.keys).union(self.deniedCalls.keys).sorted()
      object["identities"] = .array(
        names.map { name in
          var identity: JSONObject = ["identity": .string(name), "connections": .int(Int64(self.identities[name] ?? 0))]
          if let denied = self.deniedCalls[name] { identity["deniedCalls"] = .int(Int64(denied)) }
          return .object(identity)
        }
      )
    }
    return .object(object)
  }
}
