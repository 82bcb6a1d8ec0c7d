/// A connection the previous process handed over, to adopt: its socket, the name it is kept
/// under, and what to read before its socket — `nil` when the previous process wrote no state
/// for it (it crashed), and the connection cannot be served where it was.
package struct AdoptedConnection: Sendable {
  package var fd: CInt
  package var name: String
  package var pending: [UInt8]?

  package init(fd: CInt, name: String, pending: [UInt8]?) {
    self.fd = fd
    self.name = name
    self.pending = pending
  }
}
