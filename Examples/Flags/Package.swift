// swift-tools-version: 6.1

import PackageDescription

/// Flags: a feature-flag and configuration service hosted by Switchyard, as an application of
/// your own would be — a package of its own that depends on Switchyard.
let package = Package(
  name: "Flags",
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "Flags", targets: ["Flags"]),
    .library(name: "FlagsApplication", targets: ["FlagsApplication"]),
    .executable(name: "flagsd", targets: ["flagsd"]),
    .executable(name: "flags-watch", targets: ["flags-watch"]),
  ],
  dependencies: [
    // The repository this example lives in. Outside it, depend on Switchyard by its URL.
    .package(name: "Switchyard", path: "../.."),
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
    // The traits Switchyard's own package asks for: `make examples-test` builds this package in
    // Switchyard's build folder, where another set of traits would compile Dependencies again.
    .package(
      url: "https://github.com/pointfreeco/swift-dependencies", from: "1.17.1",
      traits: ["Clocks", "Foundation"]
    ),
    .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
  ],
  targets: [
    // The features: reducers, their state and actions. Knows nothing of the daemon.
    .target(
      name: "Flags",
      dependencies: [
        .product(name: "SwitchyardRuntime", package: "Switchyard"),
        .product(name: "CasePaths", package: "swift-case-paths"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "Dependencies", package: "swift-dependencies"),
      ]
    ),
    // How the daemon hosts the features: which in an actor, which in a worker process.
    .target(
      name: "FlagsApplication",
      dependencies: [
        "Flags",
        .product(name: "SwitchyardDaemon", package: "Switchyard"),
      ]
    ),
    // The daemon: nothing but its entry point.
    .executableTarget(
      name: "flagsd",
      dependencies: [
        "FlagsApplication",
        .product(name: "SwitchyardCommands", package: "Switchyard"),
      ]
    ),
    // A client in another process: watches one flag and says whether it is on.
    .executableTarget(
      name: "flags-watch",
      dependencies: [
        "Flags",
        .product(name: "SwitchyardClient", package: "Switchyard"),
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]
    ),
    .testTarget(
      name: "FlagsTests",
      dependencies: [
        "Flags",
        .product(name: "SwitchyardRuntime", package: "Switchyard"),
        .product(name: "Clocks", package: "swift-clocks"),
        .product(name: "Dependencies", package: "swift-dependencies"),
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
      ]
    ),
    // flagsd, flags-watch and the switchyard CLI as processes, on a real socket; and the state
    // directory version 1 of flagsd left, which version 2 migrates.
    .testTarget(
      name: "FlagsEndToEndTests",
      dependencies: [
        .product(name: "SwitchyardTestSupport", package: "Switchyard"),
        .product(name: "SwitchyardJSON", package: "Switchyard"),
      ],
      resources: [.copy("Version1")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
