// swift-tools-version: 6.1
// 6.1 is the lowest tools version that takes package traits, which ordo-one/benchmark needs.

import PackageDescription

// The runtime's benchmarks (`make bench`), a package of their own: package-benchmark and what it
// depends on stay out of Switchyard's graph, which `make test` builds.
let package = Package(
  name: "SwitchyardRuntimeBenchmarks",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(name: "Switchyard", path: "../.."),
    .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
  ],
  targets: [
    .executableTarget(
      name: "RuntimeBenchmarks",
      dependencies: [
        .product(name: "SwitchyardRuntime", package: "Switchyard"),
        .product(name: "Benchmark", package: "benchmark"),
        .product(name: "IdentifiedCollections", package: "swift-identified-collections"),
        .product(name: "CasePaths", package: "swift-case-paths"),
      ],
      path: "Benchmarks/RuntimeBenchmarks",
      plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
    )
  ],
  swiftLanguageModes: [.v6]
)
