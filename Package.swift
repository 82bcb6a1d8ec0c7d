// swift-tools-version: 6.1

import CompilerPluginSupport
import PackageDescription

let package = Package(
  name: "Switchyard",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "SwitchyardJSON", targets: ["SwitchyardJSON"]),
    .library(name: "SwitchyardVarlink", targets: ["SwitchyardVarlink"]),
    .library(name: "SwitchyardRuntime", targets: ["SwitchyardRuntime"]),
    .library(name: "PrimeTime", targets: ["PrimeTime"]),
    .library(name: "SwitchyardDaemon", targets: ["SwitchyardDaemon"]),
    .library(name: "SwitchyardCommands", targets: ["SwitchyardCommands"]),
    .executable(name: "switchyardd", targets: ["switchyardd"]),
    .library(name: "SwitchyardClient", targets: ["SwitchyardClient"]),
    .executable(name: "switchyard", targets: ["switchyard"]),
    // For the tests of applications built on Switchyard (Examples/): children started without
    // leaking descriptors, a daemon on a socket of its own.
    .library(name: "SwitchyardTestSupport", targets: ["SwitchyardTestSupport"]),
  ],
  dependencies: [
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
    .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3", traits: []),
    // Without CombineSchedulers: nothing here uses OpenCombine, which it would compile. Without
    // FoundationNetworking, here and in custom-dump: nothing here uses URLSession (and see the
    // end of this file). The examples ask for the same traits (they build in this package's folder).
    .package(
      url: "https://github.com/pointfreeco/swift-dependencies", from: "1.17.1",
      traits: ["Clocks", "Foundation"]
    ),
    .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
    .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", from: "1.4.3"),
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
    .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // TLS for the TCP listeners and the client that reaches them (BoringSSL, vendored), and
    // postgres-nio's, which the PostgreSQL journal configures (`sslmode`).
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
    .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    .package(url: "https://github.com/x-sheep/swift-property-based", from: "2.0.1"),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/pointfreeco/swift-snapshot-testing", from: "1.19.7"),
    // The range swift-case-paths takes too, so that one swift-syntax is resolved and compiled.
    .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"605.0.0"),
    .package(url: "https://github.com/pointfreeco/swift-macro-testing", from: "0.7.0"),
  ],
  targets: [
    // @DescribedAction: @CasePathable's case paths and the case names and payloads Describe shows.
    // The compiler plugin only lists the macro; its expansion is a library of its own, which the
    // macro's tests depend on. A test target that depends on a macro target directly is built
    // for the host, with every other test target of the package and all they depend on: the
    // whole graph then compiles twice, once for the tests and once for the executables.
    .macro(
      name: "SwitchyardMacros",
      dependencies: [
        "SwitchyardMacrosSupport",
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
      ],
      path: "Sources/Macros"
    ),
    .target(
      name: "SwitchyardMacrosSupport",
      dependencies: [
        .product(name: "CasePathsMacrosSupport", package: "swift-case-paths"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
      ],
      path: "Sources/MacrosSupport"
    ),
    .target(
      name: "SwitchyardSynchronization",
      path: "Sources/Synchronization"
    ),
    .target(
      name: "SwitchyardJSON",
      dependencies: [
        "SwitchyardSynchronization",
        .product(name: "OrderedCollections", package: "swift-collections"),
      ],
      path: "Sources/JSON"
    ),
    // Settings: how a part declares its section of the configuration (keys, defaults, checks,
    // whether a reload applies them), and the configuration file read once.
    .target(
      name: "SwitchyardSettings",
      dependencies: [
        "SwitchyardJSON",
        .product(name: "Configuration", package: "swift-configuration"),
      ],
      path: "Sources/Settings"
    ),
    .target(
      name: "SwitchyardRuntime",
      dependencies: [
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        "SwitchyardMacros",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "CustomDump", package: "swift-custom-dump"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
        .product(name: "OrderedCollections", package: "swift-collections"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/Runtime"
    ),
    .target(
      name: "PrimeTime",
      dependencies: [
        "SwitchyardRuntime",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "DependenciesMacros", package: "swift-dependencies"),
      ],
      path: "Sources/PrimeTime"
    ),
    .target(
      name: "SwitchyardVarlink",
      dependencies: [
        "SwitchyardJSON",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "OrderedCollections", package: "swift-collections"),
      ],
      path: "Sources/Varlink"
    ),
    .systemLibrary(
      name: "CSystemd",
      pkgConfig: "libsystemd",
      providers: [.apt(["libsystemd-dev"])]
    ),
    .target(
      name: "CWorkerSpawn",
      path: "Sources/CWorkerSpawn"
    ),
    // systemd: readiness and status, the watchdog, socket activation, the file descriptor store,
    // journald's log handler; the re-execution that passes descriptors the way systemd does.
    .target(
      name: "SwitchyardSystemd",
      dependencies: [
        "SwitchyardSynchronization",
        "CSystemd",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
      ],
      path: "Sources/Systemd"
    ),
    // The monotonic clock the metrics and the journal time with, and the log's rate limiter.
    .target(
      name: "SwitchyardTiming",
      path: "Sources/Timing"
    ),
    // The journal: the `Journal` protocol, the SQLite engine, the writer (a service of the
    // daemon's group), recovery, replay, backup, the state directory. Neither NIO nor the
    // application's types: the daemon hands it values, and its reducers as closures to replay.
    .target(
      name: "SwitchyardJournal",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardTiming",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "HeapModule", package: "swift-collections"),
        // The writer is a service of the daemon's group.
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        // A replay gives reducers the date and UUIDs the journal recorded them reading.
        .product(name: "Dependencies", package: "swift-dependencies"),
      ],
      path: "Sources/Journal"
    ),
    // The journal in PostgreSQL: the same `Journal` over postgres-nio, one fenced leader (a lease
    // row whose epoch every append checks). The daemon chooses it by `journal.engine`.
    .target(
      name: "SwitchyardPostgresJournal",
      dependencies: [
        "SwitchyardJournal",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ],
      path: "Sources/PostgresJournal"
    ),
    // The cluster on the PostgreSQL journal: a standby's following of the leader's changes into
    // its change log, the lease watch that makes it the leader, and what Status shows of both.
    .target(
      name: "SwitchyardCluster",
      dependencies: [
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardPostgresJournal",
        "SwitchyardChangeFeed",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      path: "Sources/Cluster"
    ),
    // The change feed: the change log that numbers every change to the composed state and hands
    // it to the journal writer, the history to resume from, and the subscriptions by path, each
    // change encoded once per path. Neither NIO's channels nor the application's types.
    .target(
      name: "SwitchyardChangeFeed",
      dependencies: [
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardJournal",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      path: "Sources/ChangeFeed"
    ),
    // Worker processes: the spawner, the link and its frames (both ends), the supervisor, how a
    // worker ended. Nothing of the pipeline: the daemon's host of a worker-hosted feature uses it.
    .target(
      name: "SwitchyardWorkers",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardRuntime",
        // The write straight to a descriptor that the server's replies go through too.
        "SwitchyardVarlink",
        "CWorkerSpawn",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      path: "Sources/Workers"
    ),
    // A feature's store as the daemon runs it, apart from routing: what its reductions read of
    // the date and UUIDs, recorded for the journal; and in a worker process, the store behind the
    // link. Neither NIO's channels nor the pipeline: actions come to it as their bytes.
    .target(
      name: "SwitchyardFeatureStore",
      dependencies: [
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardRuntime",
        "SwitchyardTiming",
        "SwitchyardWorkers",
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/FeatureStore"
    ),
    // The Varlink server: listeners, connections, the call/answer machinery, limits and
    // timeouts. It knows the protocol and nothing of what the calls mean: the daemon's responder
    // answers them.
    .target(
      name: "SwitchyardServer",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardTiming",
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "NIOTLS", package: "swift-nio"),
        .product(name: "Configuration", package: "swift-configuration"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "DequeModule", package: "swift-collections"),
      ],
      path: "Sources/Server"
    ),
    // The metrics: swift-prometheus's registry and the Prometheus text, the server's call
    // recorder with the lock-free histograms of the hot path, the journal's and the features'
    // metrics, and the HTTP endpoint (`metrics.listen`). The daemon hands it a sample of its
    // levels; it imports neither the daemon nor the workers.
    .target(
      name: "SwitchyardMetrics",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardVarlink",
        "SwitchyardServer",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "CoreMetrics", package: "swift-metrics"),
        .product(name: "Prometheus", package: "swift-prometheus"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ],
      path: "Sources/Metrics"
    ),
    // The inspector in the browser: its page (HTML, CSS, JavaScript modules, SVG; compiled in,
    // nothing to build) and the routes it mounts on the HTTP endpoint — the journal's timeline,
    // past states, health and replay as JSON, new changes as server-sent events. The daemon
    // hands it what it reads.
    .target(
      name: "SwitchyardInspector",
      dependencies: [
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardMetrics",
        "SwitchyardSynchronization",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      path: "Sources/Inspector",
      resources: [.embedInCode("Page")]
    ),
    // Who may do what: the peer-credential policy, read from `switchyard.access`, and what it
    // grants the `Caller` the server read, checked against each call.
    .target(
      name: "SwitchyardAccess",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardJSON",
        "SwitchyardVarlink",
        "SwitchyardServer",
      ],
      path: "Sources/Access"
    ),
    // The daemon's configuration: its own sections and each part's, pulled back into one
    // `DaemonConfiguration` read through one source, and the live copy a reload replaces. It
    // knows the parts' settings and nothing of the pipeline.
    .target(
      name: "SwitchyardDaemonConfiguration",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardAccess",
        "SwitchyardJournal",
        "SwitchyardMetrics",
        "SwitchyardServer",
        "SwitchyardSystemd",
        "SwitchyardWorkers",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Configuration", package: "swift-configuration"),
      ],
      path: "Sources/DaemonConfiguration"
    ),
    // The restart's handover: the connections kept in systemd's store or passed to the daemon's
    // executable run again, the state written for the next process, and what it takes over.
    .target(
      name: "SwitchyardHandOver",
      dependencies: [
        "SwitchyardChangeFeed",
        "SwitchyardMetrics",
        "SwitchyardServer",
        "SwitchyardSystemd",
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/HandOver"
    ),
    .target(
      name: "SwitchyardDaemon",
      dependencies: [
        "SwitchyardHandOver",
        "SwitchyardSettings",
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardPostgresJournal",
        "SwitchyardCluster",
        "SwitchyardChangeFeed",
        "SwitchyardTiming",
        "SwitchyardRuntime",
        "SwitchyardVarlink",
        "SwitchyardSystemd",
        "SwitchyardWorkers",
        "SwitchyardFeatureStore",
        "SwitchyardDaemonConfiguration",
        "SwitchyardServer",
        "SwitchyardMetrics",
        "SwitchyardInspector",
        "SwitchyardAccess",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "Configuration", package: "swift-configuration"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        .product(name: "UnixSignals", package: "swift-service-lifecycle"),
        .product(name: "DequeModule", package: "swift-collections"),
        .product(name: "OrderedCollections", package: "swift-collections"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "CasePaths", package: "swift-case-paths"),
      ],
      path: "Sources/Daemon"
    ),
    .target(
      name: "SwitchyardCommands",
      dependencies: [
        "SwitchyardDaemon",
        "SwitchyardRuntime",
        "SwitchyardVarlink",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Sources/Commands"
    ),
    .executableTarget(
      name: "switchyardd",
      dependencies: ["SwitchyardCommands", "PrimeTime"]
    ),
    .target(
      name: "SwitchyardClient",
      dependencies: [
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        .product(name: "NIOTLS", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ],
      path: "Sources/Client"
    ),
    // The switchyard command's subcommands and what they print, tested as they are.
    .target(
      name: "SwitchyardCLI",
      dependencies: [
        "SwitchyardClient",
        "SwitchyardJSON",
        "SwitchyardVarlink",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ],
      path: "Sources/CLI"
    ),
    .executableTarget(name: "switchyard", dependencies: ["SwitchyardCLI"]),
    .testTarget(
      name: "ClientTests",
      dependencies: [
        // The CLI's views, tested on their own (its end-to-end tests run the binary).
        "SwitchyardCLI",
        "SwitchyardSynchronization",
        "SwitchyardJSON",
        "SwitchyardTestSupport",
        "SwitchyardClient",
        "SwitchyardRuntime",
        "PrimeTime",
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        .product(name: "SnapshotTesting", package: "swift-snapshot-testing"),
      ],
      exclude: ["__Snapshots__"]
    ),
    .target(
      name: "SwitchyardTestSupport",
      dependencies: ["CWorkerSpawn", "SwitchyardSynchronization"],
      path: "Tests/Support"
    ),
    // A daemon declared only through DaemonMain, hosting features that misbehave.
    .executableTarget(
      name: "switchyard-fixture",
      dependencies: [
        "SwitchyardCommands",
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
      ],
      path: "Tests/Fixture"
    ),
    .testTarget(
      name: "DaemonTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardVarlink",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        // The daemon's parts are services of one group; their tests run them in one.
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        "SwitchyardTestSupport",
        "SwitchyardDaemon",
        "SwitchyardAccess",
        "SwitchyardInspector",
        "SwitchyardChangeFeed",
        "SwitchyardSystemd",
        "SwitchyardJournal",
        "SwitchyardTiming",
        "SwitchyardWorkers",
        "SwitchyardServer",
        "SwitchyardRuntime",
        "PrimeTime",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        // To write a journal as an older daemon did.
        .product(name: "GRDB", package: "GRDB.swift"),
      ],
      // Run by the access tests as another user, from where it is.
      exclude: ["Access/peer_call.py"]
    ),
    .testTarget(
      name: "JournalTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardTestSupport",
        "SwitchyardJournal",
        // The contract suite runs against both engines.
        "SwitchyardPostgresJournal",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "GRDB", package: "GRDB.swift"),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
      ]
    ),
    .testTarget(
      name: "ChangeFeedTests",
      dependencies: [
        "SwitchyardChangeFeed",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        "SwitchyardTestSupport",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "ClusterTests",
      dependencies: [
        "SwitchyardCluster",
        "SwitchyardChangeFeed",
        "SwitchyardJournal",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "PostgresJournalTests",
      dependencies: [
        "SwitchyardTestSupport",
        "SwitchyardJournal",
        "SwitchyardPostgresJournal",
        "SwitchyardSynchronization",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ]
    ),
    .testTarget(
      name: "ServerTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardServer",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        "SwitchyardTiming",
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        // A TLS client for the TLS listener's tests, and the certificates they make.
        .product(name: "NIOSSL", package: "swift-nio-ssl"),
        "SwitchyardTestSupport",
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "AccessTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardAccess",
        "SwitchyardJSON",
        "SwitchyardServer",
        "SwitchyardVarlink",
      ]
    ),
    .testTarget(
      name: "MetricsTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardTestSupport",
        "SwitchyardMetrics",
        "SwitchyardServer",
        "SwitchyardSynchronization",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "InspectorTests",
      dependencies: [
        "SwitchyardInspector",
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardMetrics",
        "SwitchyardSynchronization",
        "SwitchyardTestSupport",
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
      ]
    ),
    .testTarget(
      name: "WorkersTests",
      dependencies: [
        "SwitchyardSettings",
        "SwitchyardWorkers",
        "SwitchyardRuntime",
        "SwitchyardJSON",
        "SwitchyardSynchronization",
        // The frame reader the daemon puts in front of the link's decoder.
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "DaemonConfigurationTests",
      dependencies: [
        "SwitchyardDaemonConfiguration",
        "SwitchyardSettings",
        "SwitchyardSystemd",
      ]
    ),
    .testTarget(
      name: "FeatureStoreTests",
      dependencies: [
        "SwitchyardFeatureStore",
        "SwitchyardJSON",
        "SwitchyardJournal",
        "SwitchyardRuntime",
        "SwitchyardWorkers",
        .product(name: "Dependencies", package: "swift-dependencies"),
      ]
    ),
    .testTarget(
      name: "MacrosSupportTests",
      dependencies: [
        "SwitchyardMacrosSupport",
        .product(name: "MacroTesting", package: "swift-macro-testing"),
        .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
      ]
    ),
    .testTarget(
      name: "CommandsTests",
      dependencies: [
        "SwitchyardCommands",
        "SwitchyardVarlink",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .testTarget(
      name: "VarlinkTests",
      dependencies: [
        "SwitchyardJSON",
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ]
    ),
    .testTarget(
      name: "JSONTests",
      dependencies: [
        "SwitchyardTestSupport",
        "SwitchyardJSON",
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "PropertyBased", package: "swift-property-based"),
      ]
    ),
    .testTarget(
      name: "RuntimeTests",
      dependencies: [
        "SwitchyardTestSupport",
        "SwitchyardSynchronization",
        "SwitchyardRuntime",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
        .product(name: "PropertyBased", package: "swift-property-based"),
        .product(name: "Logging", package: "swift-log"),
      ]
    ),
    .testTarget(
      name: "PrimeTimeTests",
      dependencies: [
        "SwitchyardTestSupport",
        "PrimeTime",
        "SwitchyardRuntime",
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "ConcurrencyExtras", package: "swift-concurrency-extras"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
      ]
    ),
    .executableTarget(
      name: "nio-relay",
      dependencies: [
        .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOPosix", package: "swift-nio"),
      ],
      path: "Benchmarks/NIORelay"
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Release builds (`make install`, the benchmarks) leave out the tests and what only they use.
// swift-snapshot-testing (and swift-macro-testing through it) asks for custom-dump with its
// default traits, and a package's traits are one set in a build: FoundationNetworking would
// then be linked into the daemon and the CLI, and with it libcurl and the libraries it needs,
// loaded at every start, a restart's too. Set only in build folders of their own: a folder
// whose graph changes from one build to the next compiles everything again.
if Context.environment["SWITCHYARD_RELEASE_BUILD"] != nil {
  let testsOnly = ["swift-snapshot-testing", "swift-macro-testing", "swift-property-based", "swift-clocks"]
  package.targets.removeAll { $0.type == .test }
  package.dependencies.removeAll { dependency in
    guard case let .sourceControl(_, location, _) = dependency.kind else { return false }
    return testsOnly.contains { location.hasSuffix("/\($0)") }
  }
}
