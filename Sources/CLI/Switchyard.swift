import ArgumentParser
import Foundation
import SwitchyardClient
import SwitchyardJSON
import SwitchyardVarlink

/// `switchyard`: talks to `switchyardd` from a shell.
///
/// Exit codes: 0 success; 1 the daemon answered with an error (its name and parameters go to
/// stderr); 2 a usage error; 3 the daemon cannot be reached; 4 `replay` found a change that
/// differs from the journal.
struct Switchyard: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "switchyard",
    abstract: "Send actions to switchyardd, read its state and watch it change.",
    usage: "switchyard [--socket <path> | --address <address>] <subcommand> [<options>]",
    discussion: """
      --socket (default $SWITCHYARD_SOCKET, or run/switchyard.sock), --address (default \
      $SWITCHYARD_ADDRESS: unix:PATH or tcp:HOST:PORT), and --ca, --cert, --key for a TLS \
      listener may come before or after the subcommand.

      Exit codes: 0 success, 1 the daemon answered with an error, 2 usage error, \
      3 cannot connect to the daemon, 4 a replayed change differs from the journal.
      """,
    version: switchyardVersion,
    subcommands: [
      Send.self, Get.self, Watch.self, Status.self, Describe.self, Metrics.self, Top.self, Log.self, Replay.self, Backup.self,
      Call.self,
    ]
  )

  /// Runs the command, with usage errors exiting 2 rather than argument-parser's `EX_USAGE` (64).
  static func main() async {
    do {
      var command = try Self.parseAsRoot(GlobalOptions.hoisted(Array(CommandLine.arguments.dropFirst())))
      if var command = command as? any AsyncParsableCommand {
        try await command.run()
      } else {
        try command.run()
      }
    } catch {
      let code = Self.exitCode(for: error)
      if code == .validationFailure {
        FileHandle.standardError.write(Data((Self.fullMessage(for: error) + "\n").utf8))
        Foundation.exit(ExitStatus.usage)
      }
      Self.exit(withError: error)
    }
  }
}

enum ExitStatus {
  static let daemonError: Int32 = 1
  static let usage: Int32 = 2
  static let cannotConnect: Int32 = 3
  static let replayDiffers: Int32 = 4
}

struct Send: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Send an action; prints the sequence number of the state that includes it.",
    discussion: """
      An action that changes nothing leaves the number as it was, and stderr says "no change". \
      ACTION is JSON, or a short form: a dotted path of case names, then optionally the \
      payload as JSON, in the same argument after a space or as the next argument:

        switchyard send counter.incrTapped
        switchyard send favoritePrimes.deleteFavoritePrimes '[0]'
        switchyard send 'signUp.emailChanged "a@b.c"'
        switchyard send '{"counter":{"incrTapped":{}}}'
      """
  )

  @OptionGroup var global: GlobalOptions

  @Argument(help: "The action: JSON, or a short form such as counter.incrTapped.")
  var action: String

  @Argument(help: "The payload of a short-form action, as JSON (default: {}).")
  var payload: String?

  func validate() throws {
    _ = try ShortForm.action(self.action, payload: self.payload)
  }

  func run() async throws {
    let action = try ShortForm.action(self.action, payload: self.payload)
    try await self.global.withClient { client in
      // The number before it: the same number after it means the action changed nothing, when
      // no other client changed the state meanwhile (then it reads as a change, as before).
      let before = try? await client.call(method: StoreInterface.Method.status.qualifiedName)["seq"]?.intValue
      let seq = try await client.send(action)
      print(seq)
      if let before, UInt64(clamping: before) == seq {
        printError("no change: the action left the state as it was (seq \(seq))")
      }
    }
  }
}

struct Get: AsyncParsableCommand {
  static let configuration = CommandConfiguration(abstract: "Print the state, or the part at a JSON Pointer, as pretty JSON.")

  @OptionGroup var global: GlobalOptions

  @Argument(help: "A JSON Pointer such as /primes/count (default: the whole state).")
  var pointer: String?

  @Option(help: "The state as it was at this sequence number, rebuilt from the daemon's journal.")
  var at: UInt64?

  func validate() throws {
    _ = try parsePointer(self.pointer)
  }

  func run() async throws {
    let pointer = try parsePointer(self.pointer)
    try await self.global.withClient { client in
      if let at = self.at {
        print(try await client.get(pointer, at: at).state.prettyPrinted())
      } else {
        print(try await client.get(pointer).state.prettyPrinted())
      }
    }
  }
}

struct Watch: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Follow the state live: a snapshot, then each change's sequence number, what made it, and its patch operations.",
    discussion: """
      Each change names the feature that made it and, when the daemon keeps a journal, the \
      action that caused it and who sent it:

        seq 7 primes ← counter.incrTapped (request, uid 1000, pid 4242)
          replace /count 7

      Reconnects by itself when the connection drops, and says so on stderr: "reconnecting to \
      <socket>: <why> …" once, then "reconnected at seq N" and what it missed, or a fresh \
      snapshot when the daemon began a new history (--json does not). Stop it with Ctrl-C.
      """
  )

  @OptionGroup var global: GlobalOptions

  @Argument(help: "A JSON Pointer such as /primes (default: the whole state).")
  var pointer: String?

  @Flag(help: "One JSON object per line, {\"seq\":…,\"state\":…} or {\"seq\":…,\"patch\":[…],\"cause\":{…}}, without colours.")
  var json = false

  func validate() throws {
    _ = try parsePointer(self.pointer)
  }

  func run() async throws {
    let pointer = try parsePointer(self.pointer)
    let style = Style.forTerminal(json: self.json)
    var configuration = SwitchyardClient<JSONValue, JSONValue>.Configuration()
    if !self.json {
      let socket = self.global.socketPath
      configuration.onReconnection = { event in
        switch event {
        case let .reconnecting(_, reason): printError("reconnecting to \(socket): \(reason) …")
        case let .reconnected(_, seq): printError("reconnected at seq \(seq)")
        }
      }
    }
    try await self.global.withClient(wireErrors: self.json, configuration: configuration) { client in
      for try await change in client.changesWithCauses(at: pointer) {
        let event = change.event
        if self.json {
          var line = event.jsonValue
          if case var .object(object) = line, let cause = change.cause {
            object["cause"] = cause
            line = .object(object)
          }
          writeLine(line.serialized())
          continue
        }
        switch event {
        case let .snapshot(seq, state):
          writeLine("\(style.bold("seq \(seq)")) \(style.dim("snapshot"))\n\(state.prettyPrinted())")
        case let .patch(seq, patch):
          var lines = [[style.bold("seq \(seq)"), change.cause.map { ShortForm.cause($0, style: style) }].compactMap { $0 }.joined(separator: " ")]
          for operation in patch.operations {
            lines.append("  " + describe(operation, style: style))
          }
          writeLine(lines.joined(separator: "\n"))
        }
      }
    }
  }
}

struct Call: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Make a raw Varlink call and print the parameters of its reply.",
    discussion: """
        switchyard call org.varlink.service.GetInfo
        switchyard call io.switchyard.Store.Get '{"path": "/primes/count"}'
      """
  )

  @OptionGroup var global: GlobalOptions

  @Argument(help: "The qualified method, such as io.switchyard.Store.Status.")
  var method: String

  @Argument(help: "The parameters, a JSON object (default: {}).")
  var parameters: String?

  func validate() throws {
    _ = try self.parsedParameters()
  }

  func run() async throws {
    let parameters = try self.parsedParameters()
    try await self.global.withClient(wireErrors: true) { client in
      print(try await client.call(method: self.method, parameters: parameters).prettyPrinted())
    }
  }

  private func parsedParameters() throws -> JSONObject {
    guard let parameters = self.parameters else { return [:] }
    guard case let .object(object) = try parseJSON(parameters, what: "parameters") else {
      throw ValidationError("the parameters must be a JSON object")
    }
    return object
  }
}

// MARK: - Helpers

func printError(_ message: String) {
  FileHandle.standardError.write(Data((message + "\n").utf8))
}

/// Writes a line to stdout and flushes it, so a pipe sees each change as it happens.
func writeLine(_ line: String) {
  writeText(line + "\n")
}

/// Writes `text` to stdout as it is, at once.
func writeText(_ text: String) {
  FileHandle.standardOutput.write(Data(text.utf8))
}

func parsePointer(_ text: String?) throws -> JSONPointer {
  guard let text, !text.isEmpty else { return .root }
  do {
    return try JSONPointer(parsing: text)
  } catch {
    throw ValidationError("invalid JSON Pointer \(text): \(error)")
  }
}

func parseJSON(_ text: String, what: String) throws -> JSONValue {
  do {
    return try JSONValue(parsing: text)
  } catch {
    throw ValidationError("the \(what) is not valid JSON: \(error)")
  }
}

func describe(_ operation: JSONPatch.Operation, style: Style) -> String {
  let name = style.colour(operation.name, for: operation)
  switch operation {
  case let .add(path, value), let .replace(path, value), let .test(path, value):
    return "\(name) \(path.description.isEmpty ? "/" : path.description) \(value.serialized())"
  case let .remove(path):
    return "\(name) \(path.description.isEmpty ? "/" : path.description)"
  case let .move(from, path), let .copy(from, path):
    return "\(name) \(from) → \(path)"
  }
}

/// ANSI styling, when stdout is a terminal.
struct Style {
  let enabled: Bool

  /// Styled when stdout is a terminal, `NO_COLOR` is not set and `json` output was not asked for.
  static func forTerminal(json: Bool) -> Style {
    Style(enabled: !json && isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
  }

  func wrap(_ text: String, _ code: String) -> String {
    self.enabled ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
  }

  func bold(_ text: String) -> String { self.wrap(text, "1") }
  func dim(_ text: String) -> String { self.wrap(text, "2") }
  func red(_ text: String) -> String { self.wrap(text, "31") }
  func green(_ text: String) -> String { self.wrap(text, "32") }
  func yellow(_ text: String) -> String { self.wrap(text, "33") }

  func colour(_ text: String, for operation: JSONPatch.Operation) -> String {
    switch operation {
    case .add, .copy: self.wrap(text, "32")
    case .remove: self.wrap(text, "31")
    case .replace, .move: self.wrap(text, "33")
    case .test: self.wrap(text, "36")
    }
  }
}
