import Foundation
import FuzzDriver
import PrimeTime
import SwitchyardJSON
import SwitchyardRuntime
import SwitchyardVarlink

/// Any bytes read straight from bytes, checked against the tree path the daemon used before:
/// the first byte picks an action type, the rest is a frame. The frame's layout is refused
/// exactly where `JSONValue(parsing:)` refuses it; its envelope is read exactly as
/// `VarlinkCall(parsing:)` reads it; its `parameters.action` (or the whole frame) decodes to the
/// same action, or fails with the same error at the same path, as through `JSONValueDecoder`;
/// with unknown keys refused, what decodes is what the tree decodes; and an action that reads its
/// cases (`@DescribedAction(decoding: .fromCases)`, as the daemon asks first) reads only what the
/// bytes decoder decodes, as the same action.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data, size > 1 else { return 0 }
  let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(start: data + 1, count: size - 1))
  checkDateParser(bytes)
  let tree: JSONValue
  let layout: JSONLayout
  switch (Result { try JSONValue(parsing: bytes) }, Result { () throws(JSONParseError) in try JSONLayout(scanning: bytes) }) {
  case (.success(let value), .success(let scanned)):
    tree = value
    layout = scanned
  case (.failure(let parseError), .failure(let scanError)):
    precondition(parseError as? JSONParseError == scanError, "the layout refuses \(scanError), the parser \(parseError)")
    return 0
  case (let parsed, let scanned):
    preconditionFailure("the parser says \(parsed), the layout \(scanned)")
  }

  let treeCall = Result { () throws(VarlinkError) in try VarlinkCall(parsing: tree) }
  let bytesCall = Result { try VarlinkCallFrame(layout: layout, in: bytes).tree() }
  switch (treeCall, bytesCall) {
  case (.success(let a), .success(let b)): precondition(a == b, "the envelope reads as \(b), not \(a)")
  case (.failure(let a), .failure(let b)): precondition(a == b as? VarlinkError, "the envelope fails with \(b), not \(a)")
  default: preconditionFailure("the envelope reads as \(bytesCall), not \(treeCall)")
  }

  let value = tree.value(at: JSONPointer(tokens: ["parameters", "action"])) ?? tree
  let target = layout.member("parameters", of: layout.root, in: bytes).flatMap { layout.member("action", of: $0, in: bytes) } ?? layout.root
  switch data[0] % 7 {
  case 0: compare(App.Action.self, value, bytes, layout, target)
  case 1: compare(Primes.Action.self, value, bytes, layout, target)
  case 2: compare(Counter.Action.self, value, bytes, layout, target)
  case 3: compare(PrimeModal.Action.self, value, bytes, layout, target)
  case 4: compare(FavoritePrimes.Action.self, value, bytes, layout, target)
  case 5: compare(SignUp.Action.self, value, bytes, layout, target)
  default: compare(DatedAction.self, value, bytes, layout, target)
  }
  return 0
}

/// An action with dates where a client puts them, so that client bytes reach the date parser
/// through both decoders.
private enum DatedAction: Codable, Equatable {
  case remind(at: Date, every: [Date]?)
  case snooze(Date)
  case window(from: Date, to: Date)
}

/// The date parser on the raw bytes, which must give a date or nil: a date it gives writes out
/// as text that reads back as the same date.
private func checkDateParser(_ bytes: UnsafeRawBufferPointer) {
  guard let date = RFC3339.date(fromUTF8: bytes) else { return }
  guard let text = RFC3339.string(from: date) else { preconditionFailure("\(date) read but cannot be written") }
  precondition(RFC3339.date(from: text) == date, "\(text) does not read back as \(date)")
}

private func compare<Action: Codable & Equatable>(
  _ type: Action.Type, _ value: JSONValue, _ bytes: UnsafeRawBufferPointer, _ layout: JSONLayout, _ target: JSONLayout.Value
) {
  let tree = Result { try JSONValueDecoder().decode(Action.self, from: value) }
  let lenient = Result { try JSONBytesDecoder(refusesUnknownKeys: false).decode(Action.self, from: bytes, layout: layout, at: target) }
  switch (tree, lenient) {
  case (.success(let a), .success(let b)): precondition(a == b, "decoded \(b), not \(a)")
  case (.failure(let a), .failure(let b)):
    precondition(describe(a) == describe(b), "failed with \(describe(b)), not \(describe(a))")
  default: preconditionFailure("decoded \(lenient), not \(tree)")
  }
  let strict = Result { try JSONBytesDecoder().decode(Action.self, from: bytes, layout: layout, at: target) }
  switch (tree, strict) {
  case (.success(let a), .success(let b)): precondition(a == b, "decoded \(b), not \(a)")
  case (.success, .failure(let error)): precondition(error is JSONUnknownKeyError, "refused with \(error)")
  case (.failure, .success(let b)): preconditionFailure("decoded \(b) where the tree fails")
  case (.failure, .failure): break
  }
  if let cases = Action.self as? any CaseDecodedAction.Type,
    let read = cases.decodeCases(from: ActionBytes(bytes: bytes, layout: layout, value: target))
  {
    guard case .success(let decoded) = strict else { preconditionFailure("the cases read \(read) where Codable gives \(strict)") }
    precondition(read as? Action == decoded, "the cases read \(read), not \(decoded)")
  }
}

private func describe(_ error: any Error) -> String {
  guard let error = error as? DecodingError else { return "\(error)" }
  switch error {
  case .typeMismatch(let type, let context): return "typeMismatch \(type) \(jsonPathDescription(context.codingPath)) \(context.debugDescription)"
  case .valueNotFound(let type, let context): return "valueNotFound \(type) \(jsonPathDescription(context.codingPath)) \(context.debugDescription)"
  case .keyNotFound(let key, let context): return "keyNotFound \(key.stringValue) \(jsonPathDescription(context.codingPath))"
  case .dataCorrupted(let context): return "dataCorrupted \(jsonPathDescription(context.codingPath)) \(context.debugDescription)"
  @unknown default: return "\(error)"
  }
}

runFuzzer(fuzz)
