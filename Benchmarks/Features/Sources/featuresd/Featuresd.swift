import Foundation
import SwitchyardCommands

/// `featuresd`: serves the application of `SWITCHYARD_BENCH_FEATURES` features (1 by default),
/// each in an actor; the one the load tool's `Send` reaches, `counter`, is declared last, after
/// all the others, so that routing it passes every feature declared before it.
@main
enum Featuresd {
  static func main() async {
    switch ProcessInfo.processInfo.environment["SWITCHYARD_BENCH_FEATURES"] ?? "1" {
    case "1": await Features1.main()
    case "10": await Features10.main()
    case "100": await Features100.main()
    case let other:
      FileHandle.standardError.write(Data("featuresd: SWITCHYARD_BENCH_FEATURES is 1, 10 or 100, not \(other)\n".utf8))
      exit(64)
    }
  }
}
