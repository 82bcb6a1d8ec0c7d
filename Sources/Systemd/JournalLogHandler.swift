import CSystemd
import Foundation
import Logging

/// A swift-log handler that writes native journal entries through `sd_journal_sendv`.
///
/// Each entry carries `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`, `CODE_FILE`, `CODE_LINE` and
/// `CODE_FUNC`, and one field per metadata key, named after it (``JournalFields/fieldName(for:)``):
///
/// ```swift
/// logger.info("feature started", metadata: ["feature": "primes"])
/// // MESSAGE=feature started
/// // SWITCHYARD_FEATURE=primes
/// ```
///
/// so that `journalctl SWITCHYARD_FEATURE=primes` finds every line about a feature. With no
/// journald listening, entries are dropped (libsystemd's behaviour); ``DaemonLogging`` only picks
/// this handler when stderr is connected to the journal.
public struct JournalLogHandler: LogHandler {
  public let label: String
  public let identifier: String
  public var metadata: Logger.Metadata = [:]
  public var metadataProvider: Logger.MetadataProvider?
  public var logLevel: Logger.Level = .info

  /// - Parameter identifier: The entries' `SYSLOG_IDENTIFIER`, what `journalctl -t` selects.
  public init(label: String, identifier: String, metadataProvider: Logger.MetadataProvider? = nil) {
    self.label = label
    self.identifier = identifier
    self.metadataProvider = metadataProvider
  }

  public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { self.metadata[key] }
    set { self.metadata[key] = newValue }
  }

  public func log(event: LogEvent) {
    var metadata = self.metadata
    if let provided = self.metadataProvider?.get() { metadata.merge(provided) { _, new in new } }
    if let own = event.metadata { metadata.merge(own) { _, new in new } }
    if let error = event.error, metadata["error"] == nil { metadata["error"] = "\(error)" }
    let fields = JournalFields.entry(
      message: event.message.description,
      level: event.level,
      identifier: self.identifier,
      file: event.file,
      line: event.line,
      function: event.function,
      metadata: metadata
    )
    JournalFields.send(fields)
  }
}

/// How log events become journal fields.
public enum JournalFields {
  /// The prefix of the fields made from metadata.
  public static let prefix = "SWITCHYARD_"

  /// The journal fields of one entry, in order, as `NAME=value` strings.
  public static func entry(
    message: String,
    level: Logger.Level,
    identifier: String,
    file: String,
    line: UInt,
    function: String,
    metadata: Logger.Metadata
  ) -> [String] {
    var fields = [
      "MESSAGE=\(message)",
      "PRIORITY=\(priority(of: level))",
      "SYSLOG_IDENTIFIER=\(identifier)",
      "CODE_FILE=\(file)",
      "CODE_LINE=\(line)",
      "CODE_FUNC=\(function)",
    ]
    for key in metadata.keys.sorted() {
      fields.append("\(fieldName(for: key))=\(metadata[key]!)")
    }
    return fields
  }

  /// The syslog priority journald files a level under (`journalctl -p`).
  public static func priority(of level: Logger.Level) -> Int {
    switch level {
    case .trace, .debug: 7
    case .info: 6
    case .notice: 5
    case .warning: 4
    case .error: 3
    case .critical: 2
    }
  }

  /// The field a metadata key becomes: `SWITCHYARD_` and the key in upper case, with every
  /// character journald does not allow in a field name (anything but `A-Z`, `0-9` and `_`)
  /// replaced by `_`, and cut to journald's 64 characters. `peer.uid` becomes
  /// `SWITCHYARD_PEER_UID`.
  public static func fieldName(for key: String) -> String {
    var name = prefix
    for scalar in key.unicodeScalars {
      switch scalar {
      case "a"..."z": name.unicodeScalars.append(Unicode.Scalar(scalar.value - 32)!)
      case "A"..."Z", "0"..."9", "_": name.unicodeScalars.append(scalar)
      default: name.append("_")
      }
    }
    return String(name.prefix(64))
  }

  /// Sends one entry to journald.
  package static func send(_ fields: [String]) {
    var buffers = fields.map { Array($0.utf8) }
    var vectors: [iovec] = []
    vectors.reserveCapacity(buffers.count)
    // The iovecs point into `buffers`, which stay alive and unmoved until sd_journal_sendv returns.
    buffers.withUnsafeMutableBufferPointer { buffers in
      for index in buffers.indices {
        buffers[index].withUnsafeMutableBytes { bytes in
          vectors.append(iovec(iov_base: bytes.baseAddress, iov_len: bytes.count))
        }
      }
      _ = sd_journal_sendv(vectors, Int32(vectors.count))
    }
  }
}
