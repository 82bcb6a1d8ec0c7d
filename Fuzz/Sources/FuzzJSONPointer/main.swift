import FuzzDriver
import SwitchyardJSON

/// Any text as a JSON Pointer: it parses or throws; a parsed pointer writes out as itself and
/// looks up a value, or nothing, in a document with objects and arrays.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  guard let pointer = try? JSONPointer(parsing: text) else { return 0 }
  precondition((try? JSONPointer(parsing: pointer.description)) == pointer, "a pointer does not read back as itself")
  // Built for each input: LeakSanitizer cannot follow the pointers Swift keeps in an enum's
  // spare bits, so a JSONValue held in a global between inputs is reported as leaked.
  let document: JSONValue = ["a": [1, ["b": [2, 3]], "c"], "": ["~": 0, "/": [[]]], "0": [[], [:]]]
  _ = document.value(at: pointer)
  return 0
}

runFuzzer(fuzz)
