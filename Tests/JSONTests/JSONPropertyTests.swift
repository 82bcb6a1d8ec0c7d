import Foundation
import PropertyBased
import SwitchyardTestSupport
import Testing

@testable import SwitchyardJSON

@Suite("JSON properties")
struct JSONPropertyTests {
  @Test("diff(a, b) applied to a gives b, for b derived from a by random edits")
  func diffOfMutationsRoundTrips() async {
    await propertyCheck(count: 300, input: JSONGen.mutatedPair) { pair in
      let patch = JSONPatch(from: pair.old, to: pair.new)
      let result = try patch.applied(to: pair.old)
      #expect(result == pair.new, "patch: \(patch)")
      // Only add/remove/replace, and nothing at all for equal values.
      for operation in patch.operations {
        switch operation {
        case .add, .remove, .replace: break
        default: Issue.record("unexpected operation \(operation)")
        }
      }
      if pair.old == pair.new {
        #expect(patch.isEmpty)
      }
    }
  }

  @Test("diff(a, b) applied to a gives b, for unrelated arrays with repeated elements")
  func diffOfUnrelatedArraysRoundTrips() async {
    await propertyCheck(count: 300, input: JSONGen.arrayPair) { pair in
      let patch = JSONPatch(from: pair.old, to: pair.new)
      let result = try patch.applied(to: pair.old)
      #expect(result == pair.new, "patch: \(patch)")
      // Never worse than rewriting every element of the shorter side and adding/removing the rest.
      guard case .array(let old)? = pair.old["list"], case .array(let new)? = pair.new["list"] else {
        Issue.record("generator changed shape")
        return
      }
      let naive = zip(old, new).count { $0 != $1 } + abs(old.count - new.count)
      #expect(patch.count <= naive)
    }
  }

  @Test("diff(a, b) applied to a gives b, for unrelated random values")
  func diffOfUnrelatedValuesRoundTrips() async {
    await propertyCheck(count: 200, input: JSONGen.value, JSONGen.value) { old, new in
      let patch = JSONPatch(from: old, to: new)
      let result = try patch.applied(to: old)
      #expect(result == new, "patch: \(patch)")
    }
  }

  @Test("a patch that fails part-way leaves the document exactly as it was")
  func failedPatchesAreAtomic() async {
    await propertyCheck(count: 300, input: JSONGen.mutatedPair, Gen.int(in: 0...Int.max)) { pair, seed in
      var rng = SplitMix64(seed: UInt64(seed))
      // Some valid operations (including moves and copies), then one that must fail.
      var operations = JSONPatch(from: pair.old, to: pair.new).operations
      if case .object = pair.new {
        operations.append(.copy(from: "", path: "/copied"))
        operations.append(.move(from: "/copied", path: "/moved"))
      }
      operations.insert(.test(path: "/definitely/missing", value: nil), at: Int.random(in: 0...operations.count, using: &rng))
      var document = pair.old
      let error = #expect(throws: JSONPatchError.self) {
        try JSONPatch(operations: operations).apply(to: &document)
      }
      #expect(error?.pointer == "/definitely/missing")
      #expect(jsonIdentical(document, pair.old), "document: \(document)")

      // And the same operations without the failure apply in place to the expected result.
      operations.removeAll { $0 == .test(path: "/definitely/missing", value: nil) }
      var applied = pair.old
      try JSONPatch(operations: operations).apply(to: &applied)
      #expect(applied == (try JSONPatch(operations: operations).applied(to: pair.old)))
    }
  }

  @Test("diff ignores member order and number representation")
  func diffOfScrambledCopyIsEmpty() async {
    await propertyCheck(count: 200, input: JSONGen.value, Gen.int(in: 0...Int.max)) { value, seed in
      var rng = SplitMix64(seed: UInt64(seed))
      let scrambled = JSONRandom.scramble(value, using: &rng)
      #expect(scrambled == value)
      #expect(scrambled.hashValue == value.hashValue)
      let reparsed = try JSONValue(parsing: scrambled.serialized())
      #expect(reparsed == value)
      #expect(JSONPatch(from: value, to: scrambled).isEmpty)
      // Member order alone never changes the text.
      let reordered = JSONRandom.scramble(value, numbers: false, using: &rng)
      #expect(reordered.serialized() == value.serialized())
    }
  }

  @Test("serialize then parse gives back an equal value with identical text")
  func serializationRoundTrips() async {
    await propertyCheck(count: 300, input: JSONGen.value) { value in
      let text = value.serialized()
      let parsed = try JSONValue(parsing: text)
      #expect(parsed == value, "text: \(text)")
      #expect(parsed.serialized() == text)
      #expect(try JSONValue(parsing: value.serializedBytes()) == value)
    }
  }

  @Test("Foundation's JSONSerialization accepts what we write")
  func foundationReadsOurOutput() async {
    await propertyCheck(count: 100, input: JSONGen.value) { value in
      let data = Data(value.serializedBytes())
      #expect(throws: Never.self) {
        try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
      }
    }
  }

  @Test("patches survive their wire form")
  func patchWireFormRoundTrips() async {
    await propertyCheck(count: 100, input: JSONGen.mutatedPair) { pair in
      let patch = JSONPatch(from: pair.old, to: pair.new)
      let wire = try JSONValue(parsing: patch.jsonValue.serialized())
      #expect(try JSONPatch(jsonValue: wire) == patch)
      #expect(try patch.serializedBytes().withUnsafeBytes { try JSONPatch(parsing: $0) } == patch)
      let viaFoundation = try JSONDecoder().decode(JSONPatch.self, from: JSONEncoder().encode(patch))
      // Foundation reads large integral doubles back as integers: numbers agree as Doubles.
      #expect(jsonEqualAsDoubles(viaFoundation.jsonValue, patch.jsonValue))
    }
  }

  @Test("a patch written straight from its operations is the text of its tree")
  func patchTextIsItsTreesText() async {
    await propertyCheck(count: 100, input: JSONGen.mutatedPair) { pair in
      let patch = JSONPatch(from: pair.old, to: pair.new)
      #expect(patch.serializedBytes() == patch.jsonValue.serializedBytes())
    }
  }

  @Test("encode then decode gives back the same model")
  func codingRoundTrips() async {
    await propertyCheck(count: 200, input: JSONGen.model) { model in
      let value = try JSONValueEncoder().encode(model)
      let decoded = try JSONValueDecoder().decode(JSONTestModel.self, from: value)
      #expect(decoded == model)
    }
  }

  @Test("the encoder agrees with Foundation's JSONEncoder, and the decoder reads its output")
  func encoderMatchesFoundation() async {
    await propertyCheck(count: 200, input: JSONGen.model) { model in
      let foundation = JSONEncoder()
      foundation.dataEncodingStrategy = .deferredToData
      // Ours writes dates as RFC 3339 text; Foundation's `.iso8601` drops the fraction.
      foundation.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(RFC3339.string(from: date))
      }
      let text = try foundation.encode(model)
      // Foundation keeps Swift's "_0" wrapper around single unlabeled payloads; ours unwraps it.
      let expected = jsonUnwrappingUnlabeledPayloads(try JSONValue(parsing: text))
      let actual = try JSONValueEncoder().encode(model)
      #expect(jsonEqualAsDoubles(actual, expected), "ours: \(actual)\nFoundation: \(expected)")
      // Decoding Foundation's output gives the model back (doubles written as integer text
      // aside, see `jsonEqualAsDoubles`).
      if actual == expected {
        #expect(try JSONValueDecoder().decode(JSONTestModel.self, from: expected) == model)
      }
    }
  }

  @Test("JSONValue's own Codable works with Foundation's coders")
  func jsonValueThroughFoundation() async {
    await propertyCheck(count: 200, input: JSONGen.value) { value in
      let data = try JSONEncoder().encode(value)
      let decoded = try JSONDecoder().decode(JSONValue.self, from: data)
      // Foundation writes large doubles as integer text and reads integral exponent forms
      // ("9.8e+17") as integers, so numbers only agree as Doubles; everything else is exact.
      #expect(jsonEqualAsDoubles(decoded, value), "decoded: \(decoded)")
      #expect(jsonEqualAsDoubles(decoded, try JSONValue(parsing: data)))
    }
  }
}
