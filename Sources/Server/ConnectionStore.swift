/// Where the server keeps each connection it admits so that the next process can take it over:
/// systemd's file descriptor store, as the daemon wires it. A connection is kept as it is
/// admitted and released when it closes; one the process hands over stays kept.
///
/// ```swift
/// let store: any ConnectionStore = …
/// if let name = store.keep(fd) { … }   // later: store.release(name)
/// ```
package protocol ConnectionStore: Sendable {
  /// The most connections it keeps: past it, a connection is refused.
  var capacity: Int { get }
  /// Keeps a copy of the connected socket `fd`; returns the name it is kept under, or `nil`
  /// when it could not be kept.
  func keep(_ fd: CInt) -> String?
  /// Drops the copy kept under `name`: the connection closed, and its peer is to see it.
  func release(_ name: String)
}
