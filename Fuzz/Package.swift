// swift-tools-version: 6.1
// libFuzzer targets for what a client's bytes reach first (see README.md). Run them with
// `Fuzz/run.sh SECONDS` (`make fuzz`).
//
// The project's modules are compiled here a second time, from symlinks (Sources/SwitchyardJSON
// → ../../Sources/JSON, …), because coverage guidance needs the code under test instrumented:
// per-target `unsafeFlags` apply only to a root package's own targets, and `-Xswiftc` would also
// reach every dependency and the macro plugins (CasePathsMacros, DependenciesMacrosPlugin), which
// must stay ordinary host executables (SwitchyardMacros, symlinked like the others, is one too and
// is built plainly). The libraries they use are built plainly. Keep the targets' dependencies in
// step with ../Package.swift.

import CompilerPluginSupport
import PackageDescription

/// Coverage instrumentation for libFuzzer and AddressSanitizer, on the project's own modules and
/// the fuzz entries.
let fuzzed: [SwiftSetting] = [
  .unsafeFlags(["-sanitize=fuzzer,address"]),
  .unsafeFlags(["-O"], .when(configuration: .debug)),
]
/// libFuzzer and the ASan runtime, linked into each fuzz executable. lld, because gold prints a
/// "Cannot export local symbol __asan_…" warning per sanitizer symbol.
let link: [LinkerSetting] = [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]

let package = Package(
  name: "SwitchyardFuzz",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(url: "https://github.com/pointfreeco/swift-case-paths", from: "1.10.0"),
    .package(url: "https://github.com/pointfreeco/swift-identified-collections", from: "1.1.1"),
    .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.7.3", traits: []),
    // Without CombineSchedulers: nothing here uses OpenCombine, which it would compile.
    .package(
      url: "https://github.com/pointfreeco/swift-dependencies", from: "1.17.1",
      traits: ["Clocks", "Foundation"]
    ),
    .package(url: "https://github.com/pointfreeco/swift-concurrency-extras", from: "1.4.3"),
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.13.1"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    .package(url: "https://github.com/swiftlang/swift-syntax", "600.0.0"..<"605.0.0"),
  ],
  targets: [
    .macro(
      name: "SwitchyardMacros",
      dependencies: [
        "SwitchyardMacrosSupport",
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
      ]
    ),
    .target(
      name: "SwitchyardMacrosSupport",
      dependencies: [
        .product(name: "CasePathsMacrosSupport", package: "swift-case-paths"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
      ]
    ),
    .target(name: "SwitchyardSynchronization", swiftSettings: fuzzed),
    .target(
      name: "SwitchyardJSON",
      dependencies: ["SwitchyardSynchronization", .product(name: "OrderedCollections", package: "swift-collections")],
      swiftSettings: fuzzed
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
      swiftSettings: fuzzed
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
      swiftSettings: fuzzed
    ),
    .target(
      name: "SwitchyardVarlink",
      dependencies: ["SwitchyardJSON", .product(name: "NIOCore", package: "swift-nio"), .product(name: "OrderedCollections", package: "swift-collections")],
      swiftSettings: fuzzed
    ),
    .target(name: "FuzzDriver"),
    .executableTarget(
      name: "FuzzFrameDecoder",
      dependencies: [
        "FuzzDriver",
        "SwitchyardVarlink",
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOEmbedded", package: "swift-nio"),
      ],
      swiftSettings: fuzzed, linkerSettings: link
    ),
    .executableTarget(name: "FuzzJSONParser", dependencies: ["FuzzDriver", "SwitchyardJSON"], swiftSettings: fuzzed, linkerSettings: link),
    .executableTarget(name: "FuzzJSONPointer", dependencies: ["FuzzDriver", "SwitchyardJSON"], swiftSettings: fuzzed, linkerSettings: link),
    .executableTarget(name: "FuzzJSONPatch", dependencies: ["FuzzDriver", "SwitchyardJSON"], swiftSettings: fuzzed, linkerSettings: link),
    .executableTarget(name: "FuzzActions", dependencies: ["FuzzDriver", "SwitchyardRuntime", "PrimeTime"], swiftSettings: fuzzed, linkerSettings: link),
    .executableTarget(
      name: "FuzzBytesDecoder",
      dependencies: ["FuzzDriver", "SwitchyardJSON", "SwitchyardVarlink", "SwitchyardRuntime", "PrimeTime"],
      swiftSettings: fuzzed, linkerSettings: link
    ),
    .executableTarget(
      name: "FuzzCallEnvelope", dependencies: ["FuzzDriver", "SwitchyardJSON", "SwitchyardVarlink"],
      swiftSettings: fuzzed, linkerSettings: link
    ),
  ],
  swiftLanguageModes: [.v6]
)
