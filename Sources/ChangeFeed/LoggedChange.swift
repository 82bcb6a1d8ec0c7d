import SwitchyardJSON

/// One change as the change log holds it: its number in the log — the `seq` of the protocol,
/// one more than the change before it across every feature — and its patch over the composed
/// state. A store counts its own changes with another number, its version.
package struct LoggedChange: Sendable, Hashable {
  package let seq: UInt64
  package let patch: JSONPatch

  package init(seq: UInt64, patch: JSONPatch) {
    self.seq = seq
    self.patch = patch
  }
}
