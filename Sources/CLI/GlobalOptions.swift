import ArgumentParser
import Foundation
import SwitchyardClient
import SwitchyardJSON

/// Options every subcommand takes: where the daemon is, and the TLS files for a `tcp:` address.
struct GlobalOptions: ParsableArguments {
  @Option(
    name: .long,
    help: ArgumentHelp(
      "The daemon's socket.",
      discussion: "Defaults to $SWITCHYARD_SOCKET, or run/switchyard.sock.",
      valueName: "path"
    ),
    completion: .file()
  )
  var socket: String?

  @Option(
    name: .long,
    help: ArgumentHelp(
      "The daemon's address: unix:PATH, or tcp:HOST:PORT for its TLS listener.",
      discussion: """
        Defaults to $SWITCHYARD_ADDRESS; --socket names a Unix socket the same way. Several, \
        separated by commas, name the daemons of a cluster: a call goes to the next when one \
        cannot be reached, and a send to the leader a standby names.
        """,
      valueName: "address"
    )
  )
  var address: String?

  @Option(name: .long, help: ArgumentHelp("The CA (PEM) the daemon's certificate chains to ($SWITCHYARD_CA).", valueName: "file"), completion: .file())
  var ca: String?

  @Option(name: .long, help: ArgumentHelp("Your client certificate (PEM) for a TLS listener ($SWITCHYARD_CERT).", valueName: "file"), completion: .file())
  var cert: String?

  @Option(name: .long, help: ArgumentHelp("Your client certificate's private key (PEM) ($SWITCHYARD_KEY).", valueName: "file"), completion: .file())
  var key: String?

  /// The options that take a value and may come before the subcommand.
  static let names = ["--socket", "--address", "--ca", "--cert", "--key"]

  /// The arguments with the global options given before the subcommand moved after its name,
  /// where its parser reads them: `switchyard --socket S status` reads as
  /// `switchyard status --socket S`, as `systemctl` and `varlinkctl` take their options
  /// anywhere.
  static func hoisted(_ arguments: [String]) -> [String] {
    var global: [String] = []
    var index = arguments.startIndex
    while index < arguments.endIndex {
      let argument = arguments[index]
      if Self.names.contains(argument), index + 1 < arguments.endIndex {
        global += arguments[index...(index + 1)]
        index += 2
      } else if Self.names.contains(where: { argument.hasPrefix($0 + "=") }) {
        global.append(argument)
        index += 1
      } else {
        break
      }
    }
    guard !global.isEmpty, index < arguments.endIndex, !arguments[index].hasPrefix("-") else { return arguments }
    return [arguments[index]] + global + arguments[(index + 1)...]
  }

  /// Where the daemon is, as the views show it: the address, or the socket's path.
  var socketPath: String {
    self.address ?? self.socket ?? Self.environment("SWITCHYARD_ADDRESS") ?? Self.environment("SWITCHYARD_SOCKET")
      ?? "run/switchyard.sock"
  }

  /// The TLS files given, by option or environment; `nil` when none is.
  var tls: SwitchyardTLS? {
    let tls = SwitchyardTLS(
      certificateAuthority: self.ca ?? Self.environment("SWITCHYARD_CA"),
      certificate: self.cert ?? Self.environment("SWITCHYARD_CERT"),
      key: self.key ?? Self.environment("SWITCHYARD_KEY")
    )
    return tls == SwitchyardTLS() ? nil : tls
  }

  private static func environment(_ name: String) -> String? {
    ProcessInfo.processInfo.environment[name].flatMap { $0.isEmpty ? nil : $0 }
  }

  /// A client of the daemon, and the error handling every subcommand shares: daemon errors exit
  /// 1, connection errors 3.
  ///
  /// - Parameter wireErrors: Print an error reply as it came, its name and parameters, alone
  ///   (`--json`, `call`); otherwise a sentence that says what happened and what to do comes
  ///   first, and the wire form after it.
  func withClient(
    wireErrors: Bool = false, configuration: SwitchyardClient<JSONValue, JSONValue>.Configuration = .init(),
    _ body: (SwitchyardClient<JSONValue, JSONValue>) async throws -> Void
  ) async throws {
    var configuration = configuration
    configuration.tls = self.tls
    let client: SwitchyardClient<JSONValue, JSONValue>
    do {
      // A --socket path is a path, whatever it holds; an address is parsed.
      let isAddress = self.address != nil || (self.socket == nil && Self.environment("SWITCHYARD_ADDRESS") != nil)
      let addresses = self.socketPath.split(separator: ",").map(String.init)
      client =
        isAddress && addresses.count > 1
        ? SwitchyardClient<JSONValue, JSONValue>(addresses: addresses, configuration: configuration)
        : isAddress
          ? try SwitchyardClient<JSONValue, JSONValue>(address: self.socketPath, configuration: configuration)
          : SwitchyardClient<JSONValue, JSONValue>(socketPath: self.socketPath, configuration: configuration)
    } catch {
      printError("switchyard: \(error)")
      throw ExitCode(ExitStatus.usage)
    }
    defer { client.close() }
    do {
      try await body(client)
    } catch let error as SwitchyardError {
      let wire = "\(error.name) \(error.parameters.serialized())"
      printError(wireErrors ? wire : "switchyard: \(error.sentence)\n  (\(wire))")
      throw ExitCode(ExitStatus.daemonError)
    } catch let error as SwitchyardConnectionError {
      printError("switchyard: \(error)")
      if case .cannotConnect = error { throw ExitCode(ExitStatus.cannotConnect) }
      throw ExitCode(ExitStatus.daemonError)
    }
  }
}
