import Foundation
import Testing

/// A real `switchyardd`, started for one test on a socket of its own and stopped after it.
final class DaemonProcess: @unchecked Sendable {
  let directory: URL
  let socketPath: String
  let process = Process()
  private let stderr = Pipe()

  /// The directory the test bundle was built into, where `switchyardd` is too.
  static var productsDirectory: URL {
    URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
  }

  /// Starts the daemon and waits until its socket accepts connections.
  init(environment: [String: String] = [:], arguments: [String] = []) async throws {
    self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
    self.socketPath = self.directory.appendingPathComponent("s.sock").path
    self.process.executableURL = Self.productsDirectory.appendingPathComponent("switchyardd")
    self.process.arguments = ["--socket", self.socketPath] + arguments
    var processEnvironment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SWITCHYARD_") }
    processEnvironment.merge(environment) { $1 }
    self.process.environment = processEnvironment
    self.process.standardError = self.stderr
    self.process.standardOutput = FileHandle.nullDevice
    try self.process.run()
    let deadline = ContinuousClock.now + .seconds(10)
    while (try? VarlinkTestClient(path: self.socketPath)) == nil {
      guard self.process.isRunning, ContinuousClock.now < deadline else {
        throw DaemonFailedToStart(log: self.log)
      }
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  deinit {
    if self.process.isRunning {
      self.process.interrupt()
      self.process.terminate()
      self.process.waitUntilExit()
    }
    try? FileManager.default.removeItem(at: self.directory)
  }

  /// A new connection to the daemon.
  func connect() throws -> VarlinkTestClient {
    try VarlinkTestClient(path: self.socketPath)
  }

  /// Sends SIGTERM and waits for the exit status.
  func terminate() async -> Int32 {
    kill(self.process.processIdentifier, SIGTERM)
    let deadline = ContinuousClock.now + .seconds(10)
    while self.process.isRunning && ContinuousClock.now < deadline {
      try? await Task.sleep(for: .milliseconds(20))
    }
    if self.process.isRunning {
      Issue.record("switchyardd did not exit within 10 s of SIGTERM")
      self.process.terminate()
    }
    self.process.waitUntilExit()
    return self.process.terminationStatus
  }

  /// What the daemon logged, once it has exited.
  var log: String {
    String(decoding: self.stderr.fileHandleForReading.availableData, as: UTF8.self)
  }
}

struct DaemonFailedToStart: Error, CustomStringConvertible {
  let log: String
  var description: String { "switchyardd did not start:\n\(self.log)" }
}
