import Glibc

/// A worker could not be started, its link failed, or one side broke the link's protocol: the
/// worker cannot go on. A code says which, and the context what it was about.
///
/// ```swift
/// do { try link.run() } catch let error where error.code == .protocolViolation { … }
/// ```
package struct WorkerError: Error, CustomStringConvertible, Sendable {
  /// What failed.
  package struct Code: Hashable, Sendable, CustomStringConvertible {
    /// The code's name, as a log line shows it.
    package let description: String

    private init(_ name: String) {
      self.description = name
    }

    /// Starting the worker's process failed (a pipe, its page, `posix_spawn`).
    package static let spawn = Code("spawn")
    /// The process started as a worker cannot serve as one: its daemon is gone, or it was asked
    /// for a feature it cannot host.
    package static let start = Code("start")
    /// A system call on the worker's link failed.
    package static let link = Code("link")
    /// The other side of the link sent something that is not a frame of the protocol, or a
    /// frame it may not send.
    package static let protocolViolation = Code("protocolViolation")
  }

  package let code: Code
  /// The system call that failed (`spawn`, `link`); `nil` otherwise.
  package let operation: String?
  /// The `errno` it failed with.
  package let errno: CInt?
  /// What the other side sent (`protocolViolation`), or why the worker cannot start (`start`).
  package let detail: String?

  /// Starting a worker failed in `operation`, with `errno` `code`.
  package static func spawn(_ operation: String, _ code: CInt) -> WorkerError {
    WorkerError(code: .spawn, operation: operation, errno: code, detail: nil)
  }

  /// The link's system call `call` failed with `errno` `code`.
  package static func link(_ call: String, _ code: CInt) -> WorkerError {
    WorkerError(code: .link, operation: call, errno: code, detail: nil)
  }

  /// The worker process cannot start serving: `detail` says why.
  package static func start(_ detail: String) -> WorkerError {
    WorkerError(code: .start, operation: nil, errno: nil, detail: detail)
  }

  /// The other side broke the protocol: `detail` says how.
  package static func protocolViolation(_ detail: String) -> WorkerError {
    WorkerError(code: .protocolViolation, operation: nil, errno: nil, detail: detail)
  }

  package var description: String {
    let failure = "\(self.operation ?? "") failed: \(self.errno.map { String(cString: strerror($0)) } ?? "")"
    switch self.code {
    case .spawn: return failure
    case .link: return "worker link: \(failure)"
    case .start: return "worker: \(self.detail ?? "")"
    default: return "worker link: \(self.detail ?? "")"
    }
  }
}
