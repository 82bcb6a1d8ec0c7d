import FuzzDriver
import PrimeTime
import SwitchyardRuntime

/// Every action type PrimeTime's features take, decoded from any JSON, the way the daemon
/// decodes a client's: the first byte picks the type, the rest is the JSON. Decoding succeeds or
/// throws; what decodes encodes and decodes again as itself.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  guard size > 1 else { return 0 }
  let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)
  guard let json = try? JSONValue(parsing: UnsafeRawBufferPointer(bytes)) else { return 0 }
  switch data[0] % 7 {
  case 0: roundTrip(App.Action.self, json)
  case 1: roundTrip(Primes.Action.self, json)
  case 2: roundTrip(Counter.Action.self, json)
  case 3: roundTrip(PrimeModal.Action.self, json)
  case 4: roundTrip(FavoritePrimes.Action.self, json)
  case 5: roundTrip(FavoritesChange.self, json)
  default: roundTrip(SignUp.Action.self, json)
  }
  return 0
}

private func roundTrip<Action: Codable & Equatable>(_ type: Action.Type, _ json: JSONValue) {
  guard let action = try? JSONValueDecoder().decode(Action.self, from: json) else { return }
  let again = try! JSONValueDecoder().decode(Action.self, from: JSONValueEncoder().encode(action))
  precondition(again == action, "an action does not read back as itself")
}

runFuzzer(fuzz)
