import Foundation

/// A state directory of a test's own, outside the daemon's directory (which goes with the
/// daemon), removed when the test lets go of it.
public final class TemporaryStateDirectory: Sendable {
  public let path = FileManager.default.temporaryDirectory.appendingPathComponent("switchyard-state-\(UUID().uuidString.prefix(8))").path

  public init() {}

  deinit {
    try? FileManager.default.removeItem(atPath: self.path)
  }
}
