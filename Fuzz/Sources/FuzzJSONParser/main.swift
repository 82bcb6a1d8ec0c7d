import FuzzDriver
import SwitchyardJSON

/// Any bytes into the JSON parser: it parses or throws, and what it parses writes out and reads
/// back as the same value.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard let value = try? JSONValue(parsing: UnsafeRawBufferPointer(bytes)) else { return 0 }
  let again = try! JSONValue(parsing: value.serializedBytes())
  precondition(again == value, "a parsed value does not read back as itself")
  return 0
}

runFuzzer(fuzz)
