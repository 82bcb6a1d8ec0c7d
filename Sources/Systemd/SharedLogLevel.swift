import Logging
import SwitchyardSynchronization

/// The daemon's log level, read by every handler that ``DaemonLogging/bootstrap(identifier:level:environment:)``
/// makes, so that a configuration reload changes it for loggers that already exist.
public final class SharedLogLevel: Sendable {
  private let rawValue: Atomic<Int>

  public init(_ level: Logger.Level) {
    self.rawValue = Atomic(Self.index(of: level))
  }

  /// The current level.
  public var level: Logger.Level {
    get { Logger.Level.allCases[self.rawValue.load(ordering: .relaxed)] }
    set { self.rawValue.store(Self.index(of: newValue), ordering: .relaxed) }
  }

  private static func index(of level: Logger.Level) -> Int {
    Logger.Level.allCases.firstIndex(of: level)!
  }
}

/// A handler whose level follows a ``SharedLogLevel`` unless a logger sets its own.
package struct SharedLevelLogHandler<Base: LogHandler>: LogHandler {
  package var base: Base
  package let sharedLevel: SharedLogLevel
  private var ownLevel: Logger.Level?

  package init(_ base: Base, level: SharedLogLevel) {
    self.base = base
    self.sharedLevel = level
  }

  package var logLevel: Logger.Level {
    get { self.ownLevel ?? self.sharedLevel.level }
    set { self.ownLevel = newValue }
  }

  package var metadata: Logger.Metadata {
    get { self.base.metadata }
    set { self.base.metadata = newValue }
  }

  package var metadataProvider: Logger.MetadataProvider? {
    get { self.base.metadataProvider }
    set { self.base.metadataProvider = newValue }
  }

  package subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { self.base[metadataKey: key] }
    set { self.base[metadataKey: key] = newValue }
  }

  package func log(event: LogEvent) {
    self.base.log(event: event)
  }
}
