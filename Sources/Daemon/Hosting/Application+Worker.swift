import Foundation
import Logging
import SwitchyardJSON
import SwitchyardRuntime
import SwitchyardWorkers

/// The worker side of a feature hosted in a process: what `switchyardd worker` runs.
extension Application {
  /// Runs the feature `name` as a worker of the daemon whose pid is `parent`: the link to the
  /// daemon is two pipes, fd 3 to read and fd 5 to write; the page where the worker notes the
  /// action it is reducing is fd 4, and stderr is a pipe the daemon logs under the feature's name.
  ///
  /// Returns when the daemon closes the link.
  public func runWorker(feature name: String, parent: pid_t, logLevel: String) async throws {
    LoggingSystem.bootstrap { label in
      var handler = StreamLogHandler.standardError(label: label)
      handler.logLevel = Logger.Level(rawValue: logLevel) ?? .info
      return handler
    }
    try bindToDaemon(parent)
    guard let feature = self.features.first(where: { $0.name == name }) else {
      throw WorkerError.start("the application has no feature named \(name)")
    }
    guard let worker = feature.worker else {
      throw WorkerError.start("feature \(name) cannot run in a worker: its state and actions are not Codable")
    }
    try await worker.run(.worker, InProgressPage(fd: 4), Self.globalActionDecoder())
  }
  /// Reads the application's action from a client's text as the daemon did before it passed the
  /// text on: from its cases when the action type reads them, through `Codable` otherwise. The
  /// daemon refused unknown keys already.
  private static func globalActionDecoder() -> GlobalActionDecoder {
    let decodeCases = caseDecoder(of: Action.self)
    let decoder = JSONBytesDecoder(refusesUnknownKeys: false)
    return { action, body in
      if let decodeCases, let decoded = decodeCases(action) { return RoutedAction.with(decoded, body) }
      RoutedAction.with(try decoder.decode(Action.self, from: action.bytes, layout: action.layout, at: action.value), body)
    }
  }
}
