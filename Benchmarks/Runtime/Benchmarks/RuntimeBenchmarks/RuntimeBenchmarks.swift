import Benchmark
import Foundation
import SwitchyardRuntime

// Each comparison pairs a measurement with its reference, measured in the same run;
// Benchmarks/ratios.py prints the ratios from the exported results.

let benchmarks: @Sendable () -> Void = {
  Benchmark.defaultConfiguration = .init(
    metrics: [.wallClock, .throughput, .mallocCountTotal],
    warmupIterations: 10,
    scalingFactor: .kilo,
    maxDuration: .seconds(Int(ProcessInfo.processInfo.environment["BENCHMARK_SECONDS"] ?? "2") ?? 2),
    maxIterations: 1_000_000
  )
  storeBenchmarks()
  scopeBenchmarks()
  diffBenchmarks()
  decodeBenchmarks()
  storeDiffBenchmarks()
  threadLocalBenchmarks()
}
