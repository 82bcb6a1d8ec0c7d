// swift-tools-version: 6.1

import PackageDescription

let package = Package(
  name: "Todos",
  platforms: [.macOS(.v15)],
  dependencies: [
    // Switchyard, by the path of a clone of its repository.
    .package(name: "Switchyard", path: "../.."),
    // Makes a failing TestStore assertion fail the Swift Testing test it is in.
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
  ],
  targets: [
    // The feature: its state, actions and reducer. Knows nothing of the daemon.
    .target(
      name: "Todos",
      dependencies: [.product(name: "SwitchyardRuntime", package: "Switchyard")]
    ),
    // The daemon that hosts it.
    .executableTarget(
      name: "todosd",
      dependencies: ["Todos", .product(name: "SwitchyardCommands", package: "Switchyard")]
    ),
    // The feature's tests, with TestStore.
    .testTarget(
      name: "TodosTests",
      dependencies: [
        "Todos",
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
      ]
    ),
    // The daemon's test: todosd and the switchyard CLI, as processes.
    .testTarget(
      name: "TodosdTests",
      dependencies: [.product(name: "SwitchyardTestSupport", package: "Switchyard")]
    ),
  ],
  swiftLanguageModes: [.v6]
)
