// swift-tools-version: 6.1

import PackageDescription

// The daemon of `make bench-scale`'s features curve: one application of 1, 10 and 100 features
// each (Sources/featuresd/Applications.swift, written by generate.py before the build), so that a
// `Send` to one feature can be timed with 0, 9 and 99 others beside it. A package of its own:
// generated code stays out of Switchyard's graph, which `make test` builds.
let package = Package(
  name: "SwitchyardFeaturesBenchmark",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Switchyard", path: "../.."),
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.10.0"),
  ],
  targets: [
    .executableTarget(
      name: "featuresd",
      dependencies: [
        .product(name: "SwitchyardRuntime", package: "Switchyard"),
        .product(name: "SwitchyardDaemon", package: "Switchyard"),
        .product(name: "SwitchyardCommands", package: "Switchyard"),
        .product(name: "CasePaths", package: "swift-case-paths"),
      ]
    )
  ],
  swiftLanguageModes: [.v6]
)
