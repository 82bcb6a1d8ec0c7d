import FuzzDriver
import SwitchyardJSON

/// A document and a patch, the bytes before and after the first NUL. The patch parses or throws,
/// the same from its text as from its tree, and what parses writes out and reads back as itself. It applies or throws; a patch that throws
/// leaves the document as it was (application is atomic). What it makes of the document, the
/// diff the daemon would publish for that change makes too.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let split = bytes.firstIndex(of: 0),
    let original = try? JSONValue(parsing: Array(bytes[..<split])),
    case let patchText = Array(bytes[(split + 1)...]),
    let patchJSON = try? JSONValue(parsing: patchText)
  else { return 0 }
  // How the daemon reads a worker's change: straight from the text, the same patch or none.
  let fromText = patchText.withUnsafeBytes { try? JSONPatch(parsing: $0) }
  guard let patch = try? JSONPatch(jsonValue: patchJSON) else {
    precondition(fromText == nil, "a text whose tree is no patch reads as one")
    return 0
  }
  precondition(fromText == patch, "a patch read from its text is not the one read from its tree")
  precondition((try? JSONPatch(jsonValue: patch.jsonValue)) == patch, "a patch does not read back as itself")
  var document = original
  do {
    try patch.apply(to: &document)
  } catch {
    precondition(document == original, "a failed patch changed the document")
    return 0
  }
  var again = original
  let diff = JSONPatch(from: original, to: document)
  do {
    try diff.apply(to: &again)
  } catch {
    preconditionFailure("the diff of a change does not apply: \(error)")
  }
  precondition(again == document, "the diff of a change makes something else")
  return 0
}

runFuzzer(fuzz)
