import Benchmark
import Foundation
import SwitchyardRuntime

// A client's `Send` frame to its action: the tree path the daemon takes today against decoding
// straight from the frame's bytes. This target does not depend on SwitchyardVarlink, so the
// envelope is read here with the calls `VarlinkCall(parsing:)` and `VarlinkCallFrame` make.

enum DecodeBenchCounterAction: Codable, Equatable, Sendable {
  case incrTapped
  case decrTapped
  case set(to: Int)
}

struct DecodeBenchProfile: Codable, Equatable, Sendable {
  var name: String
  var email: String
  var age: Int?
  var tags: [String]
  var favorites: [Int]
  var settings: [String: Bool]
}

enum DecodeBenchAction: Codable, Equatable, Sendable {
  case counter(DecodeBenchCounterAction)
  case favoritePrimes(removeAt: [Int])
  case signUp(DecodeBenchProfile)
}

let decodeBenchFrames: [(String, [UInt8])] = [
  ("typical", Array(#"{"method":"io.switchyard.Store.Send","parameters":{"action":{"counter":{"incrTapped":{}}}}}"#.utf8)),
  (
    "bigger",
    Array(
      #"""
      {"method":"io.switchyard.Store.Send","more":false,"parameters":{"action":{"signUp":{"name":"Blob \u00e9","email":"blob@example.com","age":42,"tags":["a","b","c","d","e","f","g","h"],"favorites":[2,3,5,7,11,13,17,19,23,29,31,37,41,43,47],"settings":{"dark":true,"sound":false,"beta":true,"digest":false}}}}}
      """#.utf8
    )
  ),
]

/// Today's path: parse a tree, read the envelope from it, decode the action from the tree, then
/// re-encode the action and compare, to find keys it does not have.
func decodeThroughTree(_ frame: [UInt8]) throws -> DecodeBenchAction {
  let message = try JSONValue(parsing: frame)
  guard case let .object(call) = message, case .string? = call["method"], case let .object(parameters)? = call["parameters"],
    let action = parameters["action"]
  else { throw DecodeBenchError() }
  let decoded = try JSONValueDecoder().decode(DecodeBenchAction.self, from: action)
  if decodeBenchHasUnknownKey(action, comparedTo: try JSONValueEncoder().encode(decoded)) { throw DecodeBenchError() }
  return decoded
}

/// The new path: check and index the frame once, read the envelope from its layout, decode the
/// action straight from the bytes, unknown keys found in the same pass.
func decodeFromBytes(_ frame: [UInt8]) throws -> DecodeBenchAction {
  try frame.withUnsafeBytes { bytes in
    let layout = try JSONLayout(scanning: bytes)
    guard let method = layout.member("method", of: layout.root, in: bytes), layout.string(of: method, in: bytes) != nil,
      let parameters = layout.member("parameters", of: layout.root, in: bytes),
      let action = layout.member("action", of: parameters, in: bytes)
    else { throw DecodeBenchError() }
    return try JSONBytesDecoder().decode(DecodeBenchAction.self, from: bytes, layout: layout, at: action)
  }
}

struct DecodeBenchError: Error {}

/// Whether `sent` has a non-null object member that `encoded` lacks (the daemon's re-encode check).
func decodeBenchHasUnknownKey(_ sent: JSONValue, comparedTo encoded: JSONValue) -> Bool {
  switch (sent, encoded) {
  case let (.object(sent), .object(encoded)):
    sent.contains { key, value in
      encoded[key].map { decodeBenchHasUnknownKey(value, comparedTo: $0) } ?? !value.isNull
    }
  case let (.array(sent), .array(encoded)):
    zip(sent, encoded).contains { decodeBenchHasUnknownKey($0, comparedTo: $1) }
  default:
    false
  }
}

func decodeBenchmarks() {
  for (name, frame) in decodeBenchFrames {
    Benchmark("Send frame to action, \(name), through a tree and re-encode") { benchmark in
      for _ in benchmark.scaledIterations {
        blackHole(try decodeThroughTree(frame))
      }
    }
    Benchmark("Send frame to action, \(name), straight from bytes") { benchmark in
      for _ in benchmark.scaledIterations {
        blackHole(try decodeFromBytes(frame))
      }
    }
  }
}
