import ArgumentParser
import Flags
import Foundation
import SwitchyardClient

/// `flags-watch FLAG`: follows one flag and says, after every change to it, whether it is on
/// for this subject in this environment — what a service on a host would do to react to a flag
/// without polling.
///
/// It subscribes to `/flags/FLAG` only: changes to other flags, to settings or to the audit feed
/// never reach it. The subscription reconnects and resumes by itself if the daemon restarts.
///
/// ```
/// $ flags-watch beta --subject host-1 --environment production
/// seq 3: beta is on for host-1 in production: bucket 17 is within the rollout's 20 %
/// seq 5: beta is off for host-1 in production: its kill switch is off
/// ```
///
/// Exit status: 0 when the flag is deleted, 1 when there is no such flag, 3 when the daemon
/// cannot be reached.
@main
struct FlagsWatch: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "flags-watch",
    abstract: "Watch one flag and say, after each change, whether it is on."
  )

  @Argument(help: "The flag's id.")
  var flag: String

  @Option(help: "Who the flag is evaluated for (default: this host's name).")
  var subject: String?

  @Option(help: "The environment the flag is evaluated in: development, staging or production.")
  var environment: Environment = .production

  @Option(help: "The daemon's socket (default: $SWITCHYARD_SOCKET, or run/flags.sock).")
  var socket: String?

  func validate() throws {
    guard Flag.isValidID(self.flag) else { throw ValidationError("\(self.flag) is not a flag id") }
  }

  func run() async throws {
    let subject = self.subject ?? hostName()
    let client = SwitchyardClient<Flags.Action, Flags.State>(socketPath: self.socketPath)
    defer { client.close() }
    var seen = false
    do {
      for try await (seq, flag) in client.subscribe(path: JSONPointer(tokens: ["flags", self.flag]), as: Flag.State.self) {
        seen = true
        let evaluation = flag.evaluate(for: subject, in: self.environment)
        say("seq \(seq): \(flag.id) is \(evaluation.isOn ? "on" : "off") for \(subject) in \(self.environment.rawValue): \(evaluation.reason)")
      }
    } catch SwitchyardError.pathNotFound where seen {
      say("\(self.flag) was deleted")
    } catch SwitchyardError.pathNotFound {
      sayError("flags-watch: there is no flag \(self.flag)")
      throw ExitCode.failure
    } catch let error as SwitchyardConnectionError {
      sayError("flags-watch: \(error)")
      throw ExitCode(3)
    }
  }

  private var socketPath: String {
    self.socket ?? ProcessInfo.processInfo.environment["SWITCHYARD_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
      ?? "run/flags.sock"
  }
}

extension Environment: ExpressibleByArgument {}

/// This host's name, as `hostname` prints it: no lookup in DNS, which a sandboxed service may
/// not reach.
private func hostName() -> String {
  var name = [CChar](repeating: 0, count: 256)
  guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
  return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A line on stdout, written at once: whoever reads it (a pipe, a log) sees each change as it
/// happens, not when a buffer fills.
private func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

private func sayError(_ line: String) {
  FileHandle.standardError.write(Data((line + "\n").utf8))
}
