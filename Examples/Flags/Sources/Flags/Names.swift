/// Whether a client's `name` for a flag or a setting is one: 1 to `maximumLength` ASCII letters,
/// digits, `-`, `_` and `.`.
///
/// Such a name is its own JSON Pointer token (`/flags/new-checkout`, `/settings/search.timeoutMs`,
/// no `/` or `~` to escape), reads well in a shell, and keeps what a client can add bounded.
///
/// ```swift
/// isValidName("new-checkout", maximumLength: 64)  // true
/// isValidName("a/b", maximumLength: 64)           // false
/// ```
public func isValidName(_ name: String, maximumLength: Int) -> Bool {
  (1...maximumLength).contains(name.utf8.count) && name.utf8.allSatisfy(isNameByte)
}

private func isNameByte(_ byte: UInt8) -> Bool {
  switch byte {
  case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
    true
  case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
    true
  default:
    false
  }
}
