import ArgumentParser
import SwitchyardVarlink
import Testing

@testable import SwitchyardCommands

/// The smallest application there is: one counter.
struct TinyCounter: DaemonMain {
  struct State: Codable, Sendable { var count = Count.State() }

  @DescribedAction
  enum Action: Codable, Sendable { case count(Count.Action) }

  struct Count: Reducer {
    struct State: Codable, Sendable { var value = 0 }
    @DescribedAction
    enum Action: Codable, Sendable { case increment }
    func reduce(into state: inout State, action: Action) -> Effect<Action> {
      state.value += 1
      return .none
    }
  }

  static let application = Application(
    initialState: State(),
    features: [.actor("count", state: \.count, action: .case(\Action.Cases.count)) { Count() }]
  )
}

/// An application that names itself.
struct Renamed: DaemonMain {
  static let commandName = "renamed-d"
  static let abstract = "Renamed's own abstract."
  static let version = "9.8.7"
  static var application: Application<TinyCounter.State, TinyCounter.Action> { TinyCounter.application }
}

/// What conforming to ``DaemonMain`` gives an executable, parsed in process; the
/// fixture daemon (`Tests/Fixture`) is the same conformance run as a process, in DaemonTests.
@Suite struct DaemonMainTests {
  @Test func theCommandIsNamedAfterTheType() {
    #expect(TinyCounter.commandName == "tiny-counter")
    #expect(DaemonCommand<TinyCounter>.configuration.commandName == "tiny-counter")
    #expect(TinyCounter.version == switchyardVersion)
    #expect(TinyCounter.abstract.hasPrefix("Hosts tiny-counter's features"))
  }

  @Test(arguments: [
    ("Switchyardd", "switchyardd"), ("SwitchyardFixture", "switchyard-fixture"), ("Flagsd", "flagsd"),
    ("HTTPServer", "http-server"), ("Daemon2Go", "daemon2-go"), ("Wrapper<Int>", "wrapper"),
  ])
  func hyphenation(type: String, command: String) {
    #expect(hyphenatedCommandName(type) == command)
  }

  @Test func anApplicationMayNameAndVersionItself() {
    let configuration = DaemonCommand<Renamed>.configuration
    #expect((configuration.commandName, configuration.abstract, configuration.version) == ("renamed-d", "Renamed's own abstract.", "9.8.7"))
  }

  @Test func serveIsTheDefaultCommandWithTheServeOptions() throws {
    let command = try DaemonCommand<TinyCounter>.parseAsRoot(["--socket", "/tmp/x.sock", "--state-directory", "/tmp/state"])
    let serve = try #require(command as? ServeCommand<TinyCounter>)
    #expect((serve.options.socket, serve.options.stateDirectory, serve.options.config) == ("/tmp/x.sock", "/tmp/state", nil))
    #expect(try DaemonCommand<TinyCounter>.parseAsRoot(["serve", "--config", "c.json"]) is ServeCommand<TinyCounter>)
  }

  /// The command line `WorkerLaunch` starts a worker with.
  @Test func theWorkerSubcommandTakesWhatTheDaemonPasses() throws {
    let command = try DaemonCommand<TinyCounter>.parseAsRoot(["worker", "--feature", "count", "--parent", "42", "--log-level", "debug"])
    let worker = try #require(command as? WorkerCommand<TinyCounter>)
    #expect((worker.options.feature, worker.options.parent, worker.options.logLevel) == ("count", 42, "debug"))
  }

  @Test func helpShowsServeAndItsOptionsButNotTheWorker() {
    let help = DaemonCommand<TinyCounter>.helpMessage(columns: 200)
    #expect(help.contains("USAGE: tiny-counter"))
    #expect(help.contains("serve (default)"))
    #expect(!help.contains("\n  worker"), "the worker subcommand is hidden")
    let serveHelp = DaemonCommand<TinyCounter>.helpMessage(for: ServeCommand<TinyCounter>.self, columns: 200)
    #expect(serveHelp.contains("--state-directory"))
  }

  @Test func aUsageErrorExitsWith64() {
    #expect {
      try DaemonCommand<TinyCounter>.parseAsRoot(["--no-such-option"])
    } throws: { error in
      DaemonCommand<TinyCounter>.exitCode(for: error) == .validationFailure && ExitCode.validationFailure.rawValue == 64
    }
  }
}
