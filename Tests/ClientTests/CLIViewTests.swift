import SnapshotTesting
import SwitchyardJSON
import Testing

@testable import SwitchyardCLI

/// The `switchyard` command's human output, from fixed replies, against the snapshots in
/// `__Snapshots__/CLIViewTests`. A change to what operators read shows as a diff there.
struct CLIViewTests {
  static let status: JSONValue = [
    "uptime": 7_384, "features": 3, "connections": 2, "subscribers": 1, "actions": 1_230, "seq": 1_234,
    "workers": [
      ["feature": "primes", "pid": 4_242, "state": "running", "restarts": 1, "lastExit": "killed by signal 9 (SIGKILL)",
       "lastRestartMilliseconds": 12.5, "standbyPid": 4_250],
    ],
    "durability": ["mode": "strict", "directory": "/var/lib/switchyard", "journal": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"],
  ]

  static let describe: JSONValue = [
    "features": [
      [
        "name": "primes", "state": "/primes", "readOnly": false, "action": "PrimeTime.Primes.Action",
        "actions": ["counter.decrTapped", "counter.incrTapped", "counter.nthPrimeButtonTapped", "favoritePrimes.deleteFavoritePrimes"],
        "internalActions": ["counter.nthPrimeResponse"], "isolation": "process",
        "worker": ["feature": "primes", "pid": 4_242, "state": "running", "restarts": 1],
      ],
      [
        "name": "activityFeed", "state": "/activityFeed", "readOnly": true, "action": "PrimeTime.ActivityFeed.Action",
        "actions": [], "internalActions": [], "isolation": "actor",
      ],
      [
        // A newer daemon's Describe: cases with payload shapes, and fields this CLI does not know.
        "name": "signUp", "state": "/signUp", "readOnly": false, "action": "PrimeTime.SignUp.Action",
        "actions": [["name": "emailChanged", "payload": "string"], ["name": "submitTapped"]],
        "internalActions": [], "isolation": "actor", "stateVersion": 2,
      ],
    ],
    "access": ["read": true, "write": true, "admin": false, "actions": ["counter.*"]],
  ]

  @Test func status() {
    let view = StatusView(socket: "/run/switchyard/switchyard.sock", status: Self.status, describe: Self.describe)
    assertSnapshot(of: view.render(style: Style(enabled: false)), as: .lines)
  }

  /// What went wrong comes only when something did: the last stop that was not clean, changes
  /// the start found missing, a damaged journal, prunes that failed; and the daemon is named as
  /// `GetInfo` names it.
  @Test func statusSaysWhatWentWrongAndNamesTheDaemon() {
    var status = Self.status
    if case var .object(durability)? = status["durability"], case var .object(object) = status {
      durability["lastStop"] = ["clean": false, "mode": "batched", "synced": 20, "recovered": 24, "keptAfterSync": 4, "mayHaveLost": true, "sameBoot": false, "window": 1.0]
      durability["lost"] = 6
      durability["previousHistory"] = "9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0"
      durability["integrity"] = "*** in database main ***\nPage 7: btreeInitPage() returns error code 11"
      durability["pruneFailures"] = 3
      durability["lastPruneError"] = "SQLite error 11: database disk image is malformed"
      object["durability"] = .object(durability)
      object["timers"] = [
        "maxPending": 10_000, "nextDue": "2027-01-01T00:00:00Z",
        "features": [["feature": "primes", "pending": 3, "refused": 0], ["feature": "signUp", "pending": 10_000, "refused": 12]],
      ]
      status = .object(object)
    }
    let view = StatusView(socket: "run/todos.sock", status: status, describe: Self.describe, info: ["product": "todosd"])
    assertSnapshot(of: view.render(style: Style(enabled: false)), as: .lines)
  }

  /// The inspector's URL, which `Status` gives only to an admin, is printed as it comes.
  @Test func statusPrintsTheInspectorsURLWhenStatusGivesIt() {
    guard case var .object(object) = Self.status else {
      Issue.record("Status is an object")
      return
    }
    object["inspector"] = "http://127.0.0.1:9464/inspector?token=0123abcd"
    let lines = StatusView(socket: "run/switchyard.sock", status: .object(object), describe: Self.describe)
      .render(style: Style(enabled: false)).split(separator: "\n")
    #expect(lines.contains("  Inspector: http://127.0.0.1:9464/inspector?token=0123abcd"))
    let without = StatusView(socket: "run/switchyard.sock", status: Self.status, describe: Self.describe)
    #expect(!without.render(style: Style(enabled: false)).contains("Inspector"))
  }

  /// Each listener's connections by identity, then what it refused: handshakes, connections over
  /// the cap, and calls the policy denied, by whom.
  @Test func statusSaysWhatEachListenerRefused() {
    let quiet: JSONValue = ["address": "unix:run/switchyard.sock", "connections": 1, "refusedConnections": 0, "deniedCalls": 0]
    #expect(StatusView.listenerText(quiet) == "unix:run/switchyard.sock 1")
    let busy: JSONValue = [
      "address": "tcp:0.0.0.0:7501", "connections": 2, "refusedHandshakes": 4, "refusedConnections": 1, "deniedCalls": 3,
      "identities": [
        ["identity": "mallory", "connections": 0, "deniedCalls": 3], ["identity": "operator", "connections": 2],
      ],
    ]
    #expect(
      StatusView.listenerText(busy)
        == "tcp:0.0.0.0:7501 2 (operator 2; 4 handshakes refused; 1 connection over the cap refused; 3 calls denied: mallory 3)"
    )
  }

  /// What the start took over from the process before it: after a handover, and after a crash.
  @Test func statusSaysWhatTheStartTookOver() {
    func restartLine(_ handOver: JSONValue) -> String? {
      guard case var .object(object) = Self.status else { return nil }
      object["handOver"] = handOver
      return StatusView(socket: "run/switchyard.sock", status: .object(object), describe: Self.describe)
        .render(style: Style(enabled: false)).split(separator: "\n").first { $0.contains("Restart:") }.map(String.init)
    }
    #expect(
      restartLine(["connections": 150, "subscriptions": 1, "ended": 0, "pause": 0.0412])
        == "    Restart: took over 150 connections and 1 subscription from the process before, serving paused 41ms"
    )
    #expect(
      restartLine(["connections": 0, "subscriptions": 0, "ended": 2])
        == "    Restart: ended 2 connections the process before left no state for (it crashed)"
    )
    #expect(!StatusView(socket: "run/switchyard.sock", status: Self.status, describe: Self.describe).render(style: Style(enabled: false)).contains("Restart"))
  }

  @Test func statusWithoutAJournalOrWorkers() {
    let status: JSONValue = [
      "uptime": 42, "features": 1, "connections": 1, "subscribers": 0, "actions": 0, "seq": 0, "workers": [],
      "durability": ["mode": "none"],
    ]
    let describe: JSONValue = ["features": [["name": "notes", "state": "/notes", "isolation": "actor"]]]
    assertSnapshot(of: StatusView(socket: "run/switchyard.sock", status: status, describe: describe).render(style: Style(enabled: false)), as: .lines)
  }

  @Test func describe() {
    assertSnapshot(of: DescribeView(describe: Self.describe).render(style: Style(enabled: false)), as: .lines)
  }

  /// A daemon that describes its cases: every case a client may send, nested ones by their
  /// path, with its payload's types, the internal ones apart, and the state's paths.
  @Test func describeWithEveryCaseAndTheStatesPaths() {
    func leaf(_ name: String, isInternal: Bool = false, _ payload: [JSONValue] = []) -> JSONValue {
      ["name": .string(name), "internal": .bool(isInternal), "payload": .array(payload)]
    }
    let describe: JSONValue = [
      "features": [
        [
          "name": "todos", "state": "/todos", "readOnly": false, "action": "Todos.Action", "isolation": "actor", "actionPrefix": "todos",
          "actions": ["add", "toggle", "filter"], "internalActions": ["saved"],
          "cases": [
            leaf("add", [["label": "title", "type": "String"]]),
            leaf("toggle", [["label": "id", "type": "UUID"], ["label": "done", "type": "Bool"]]),
            leaf("filter", [["type": "Filter.Action", "cases": [leaf("all"), leaf("open"), leaf("done")]]]),
            leaf("saved", isInternal: true, [["type": "Int"]]),
          ],
        ]
      ]
    ]
    let view = DescribeView(describe: describe, states: ["todos": ["items": [], "filter": "all", "a/b": 1]])
    assertSnapshot(of: view.render(style: Style(enabled: false)), as: .lines)
  }

  @Test func topFrame() {
    let metrics = PrometheusSamples(parsing: Self.metrics(sends: 1_200, reductions: 1_200, restarts: 1))
    let frame = TopFrame(
      socket: "run/switchyard.sock", describe: Self.describe,
      sample: TopSample(status: Self.status, metrics: metrics, at: .now), previous: nil
    )
    assertSnapshot(of: frame.render(style: Style(enabled: false)), as: .lines)
  }

  @Test func topFrameOverTheLastInterval() {
    let start = ContinuousClock.now
    let earlier = TopSample(status: Self.status, metrics: PrometheusSamples(parsing: Self.metrics(sends: 1_200, reductions: 1_200, restarts: 1)), at: start)
    let later = TopSample(status: Self.status, metrics: PrometheusSamples(parsing: Self.metrics(sends: 1_220, reductions: 1_220, restarts: 1)), at: start + .seconds(2))
    let frame = TopFrame(socket: "run/switchyard.sock", describe: Self.describe, sample: later, previous: earlier)
    assertSnapshot(of: frame.render(style: Style(enabled: false)), as: .lines)
  }

  @Test func quantilesInterpolateWithinTheirBucket() {
    let histogram = PrometheusSamples.Histogram(buckets: [(0.001, 0), (0.002, 50), (0.004, 100), (.infinity, 100)])
    #expect(histogram.quantile(0.5) == 0.002)
    #expect(histogram.quantile(0.25) == 0.0015)
    #expect(histogram.quantile(0.75) == 0.003)
    #expect(PrometheusSamples.Histogram(buckets: [(0.001, 0), (.infinity, 0)]).quantile(0.5) == nil)
    #expect(PrometheusSamples.Histogram(buckets: [(0.001, 0), (.infinity, 4)]).quantile(0.5) == 0.001)
  }

  @Test func globalOptionsMoveAfterTheSubcommand() {
    #expect(GlobalOptions.hoisted(["--socket", "s", "send", "a.b"]) == ["send", "--socket", "s", "a.b"])
    #expect(GlobalOptions.hoisted(["--socket=s", "status", "--json"]) == ["status", "--socket=s", "--json"])
    #expect(GlobalOptions.hoisted(["status", "--socket", "s"]) == ["status", "--socket", "s"])
    #expect(GlobalOptions.hoisted(["--socket", "s"]) == ["--socket", "s"])
    #expect(GlobalOptions.hoisted(["--socket", "s", "--help"]) == ["--socket", "s", "--help"])
  }

  /// The daemon's metrics text for a run with `sends` sends, all reduced by `primes` in 8 µs to
  /// 40 µs, answered in 50 µs to 250 µs.
  static func metrics(sends: Int, reductions: Int, restarts: Int) -> String {
    """
    # TYPE switchyard_calls_total counter
    switchyard_calls_total{method="io.switchyard.Store.Send",result="ok"} \(sends)
    switchyard_calls_total{method="io.switchyard.Store.Send",result="io.switchyard.Store.InvalidAction"} 3
    switchyard_calls_total{method="io.switchyard.Store.Status",result="ok"} 7
    switchyard_actions_total \(sends)
    switchyard_subscriber_queued_changes 2.0
    switchyard_subscriber_queue_depth_max 2.0
    process_resident_memory_bytes 41943040.0
    switchyard_mailbox_depth{feature="primes"} 1.0
    switchyard_mailbox_depth{feature="activityFeed"} 0.0
    switchyard_mailbox_depth{feature="signUp"} 0.0
    switchyard_worker_restarts_total{feature="primes"} \(restarts)
    switchyard_timers_pending{feature="primes"} 2.0
    switchyard_timers_next_due_timestamp_seconds 1798761600.0
    switchyard_worker_resident_memory_bytes{feature="primes"} 12897484.8
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Send",le="0.00005"} \(sends / 2)
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Send",le="0.00025"} \(sends + 3)
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Send",le="+Inf"} \(sends + 3)
    switchyard_call_duration_seconds_count{method="io.switchyard.Store.Send"} \(sends + 3)
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Status",le="0.00005"} 0
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Status",le="0.00025"} 7
    switchyard_call_duration_seconds_bucket{method="io.switchyard.Store.Status",le="+Inf"} 7
    switchyard_reduce_duration_seconds_bucket{feature="primes",le="0.0000025"} 0
    switchyard_reduce_duration_seconds_bucket{feature="primes",le="0.00001"} \(reductions / 4)
    switchyard_reduce_duration_seconds_bucket{feature="primes",le="0.00005"} \(reductions)
    switchyard_reduce_duration_seconds_bucket{feature="primes",le="+Inf"} \(reductions)
    switchyard_reduce_duration_seconds_bucket{feature="activityFeed",le="0.0000025"} 0
    switchyard_reduce_duration_seconds_bucket{feature="activityFeed",le="+Inf"} 0
    """
  }
}
