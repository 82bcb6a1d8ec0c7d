#if canImport(Glibc)
  import Glibc
#endif

/// One input for a fuzz target: its bytes (none may be `nil`) and their count; returns 0.
public typealias FuzzTarget = @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt

/// Runs libFuzzer on `target` with this process's command line (`-max_total_time=`, a corpus
/// folder, …) and exits with its status.
///
/// SwiftPM names an executable's entry point after its target and points `main` at it
/// (`--defsym main=<target>_main`), so the `main` libFuzzer brings never runs; this calls
/// libFuzzer's driver from ours instead. Each target still exports its function as
/// `LLVMFuzzerTestOneInput`: libFuzzer's unused `main` refers to it, and without
/// `--gc-sections` (debug builds) the link needs it.
public func runFuzzer(_ target: FuzzTarget) -> Never {
  var argc = CommandLine.argc
  var argv = CommandLine.unsafeArgv
  exit(LLVMFuzzerRunDriver(&argc, &argv, target))
}

@_silgen_name("LLVMFuzzerRunDriver")
private func LLVMFuzzerRunDriver(
  _ argc: UnsafeMutablePointer<CInt>,
  _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
  _ target: FuzzTarget
) -> CInt
