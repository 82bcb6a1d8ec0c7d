import FuzzDriver
import SwitchyardJSON
import SwitchyardVarlink

/// Any bytes as a Varlink call, as the daemon reads one: JSON, then the envelope
/// (`method`, `parameters`, `more`, `oneway`), which is a call or a `VarlinkError`.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  let bytes = UnsafeRawBufferPointer(UnsafeBufferPointer(start: data, count: size))
  guard let message = try? JSONValue(parsing: bytes) else { return 0 }
  guard let call = try? VarlinkCall(parsing: message) else { return 0 }
  _ = (call.interface, call.name)
  precondition(!(call.more && call.oneway), "a call cannot be both more and oneway")
  return 0
}

runFuzzer(fuzz)
