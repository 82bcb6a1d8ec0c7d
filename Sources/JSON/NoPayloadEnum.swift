/// The cases of an enum without associated values — a type's `CodingKeys`, a `String`-backed
/// enum — made from nothing but the type.
///
/// ```swift
/// enum Color: String, Codable { case red, green }
/// _NoPayloadEnum.cases(of: Color.self)   // [.red, .green]
/// _NoPayloadEnum.cases(of: Int.self)     // nil: not an enum
/// ```
///
/// Swift cannot list the cases of an enum it knows only as a type parameter, and synthesized
/// `CodingKeys` are neither `CaseIterable` nor named outside their type; but finding where a type
/// keeps its dates (``JSONDateFields``) needs to decode each case of every enum it meets, and
/// the synthesized `init(from:)` of an enum asks its decoder which key (which case) it holds.
/// So this reads the enum's type metadata, whose layout is part of Swift's stable ABI
/// (`docs/ABI/TypeMetadata.rst` in the Swift repository): the metadata's first word is its kind
/// (0x201 for an enum), its second the address of its nominal type descriptor, which holds at
/// byte offsets 20 and 24 the number of cases with a payload and without one. An enum with no
/// payload cases keeps its case's index, in declaration order, as its whole value
/// (`docs/ABI/TypeLayout.rst`), so the cases are those indexes in as many bytes as the type has.
/// swift-case-paths read enum metadata the same way before Swift had macros.
///
/// Anything else — a struct, a class, an enum with payloads, an `Optional` (kind 0x202), an
/// enum of more than 65,536 cases — gives `nil`.
enum _NoPayloadEnum {
  static func cases<T>(of type: T.Type) -> [T]? {
    let metadata = unsafeBitCast(T.self as Any.Type, to: UnsafeRawPointer.self)
    guard metadata.load(as: UInt.self) == 0x201 else { return nil }
    let descriptor = metadata.load(fromByteOffset: MemoryLayout<UInt>.size, as: UnsafeRawPointer.self)
    let payloadCases = descriptor.load(fromByteOffset: 20, as: UInt32.self) & 0x00FF_FFFF
    let emptyCases = Int(descriptor.load(fromByteOffset: 24, as: UInt32.self))
    guard payloadCases == 0, emptyCases > 0 else { return nil }
    switch MemoryLayout<T>.size {
    case 0 where emptyCases == 1:
      return [unsafeBitCast((), to: T.self)]
    case 1 where emptyCases <= 1 << 8:
      return (0..<emptyCases).map { unsafeBitCast(UInt8($0), to: T.self) }
    case 2 where emptyCases <= 1 << 16:
      return (0..<emptyCases).map { unsafeBitCast(UInt16($0), to: T.self) }
    default:
      return nil
    }
  }
}
