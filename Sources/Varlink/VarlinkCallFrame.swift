import OrderedCollections
import SwitchyardJSON

/// A Varlink call read straight from a frame's bytes: the envelope (`method`, `more`, `oneway`)
/// decoded, the `parameters` only located, so that a value in them can be decoded straight from
/// the bytes too (``JSONBytesDecoder``), without a ``JSONValue`` tree.
///
/// It accepts and refuses what `VarlinkCall(parsing: JSONValue(parsing: bytes))` does, with the
/// same errors: ``JSONParseError`` for bytes that are not JSON, ``VarlinkError`` (`InvalidRequest`)
/// for JSON that is not a call.
///
/// ```swift
/// let action = try frame.withUnsafeReadableBytes { bytes in   // a NIO ByteBuffer, not copied
///   let call = try VarlinkCallFrame(parsing: bytes)
///   return try call.decodeParameter(App.Action.self, named: "action", from: bytes)
/// }
/// ```
public struct VarlinkCallFrame: Sendable {
  /// The qualified method name, such as `io.switchyard.Store.Send`.
  public var method: String
  /// The caller wants every reply until one without `continues`.
  public var more: Bool
  /// The caller wants no reply.
  public var oneway: Bool
  /// Where the frame's values lie.
  public let layout: JSONLayout
  /// The `parameters` object; `nil` when the call has none (or `null`).
  public let parameters: JSONLayout.Value?

  /// The methods this package serves, `Send` first: a call to one of them shares its name's
  /// `String` instead of making one.
  static let knownMethods: [String] =
    StoreInterface.Method.allCases.map(\.qualifiedName) + ServiceInterface.Method.allCases.map(\.qualifiedName)

  /// Reads a call from a frame's bytes (without its NUL).
  ///
  /// - Throws: ``JSONParseError`` if the bytes are not JSON, ``VarlinkError`` if they are not a
  ///   call, as `VarlinkCall(parsing:)` says.
  public init(parsing bytes: UnsafeRawBufferPointer, maximumDepth: Int = JSONValue.defaultMaximumDepth) throws {
    try self.init(layout: JSONLayout(scanning: bytes, maximumDepth: maximumDepth), in: bytes)
  }

  /// Reads a call from a frame already checked: `layout`, made from `bytes`.
  public init(layout: JSONLayout, in bytes: UnsafeRawBufferPointer) throws(VarlinkError) {
    let root = layout.root
    guard layout.kind(of: root) == .object, bytes.count == layout.byteCount else {
      throw .invalidRequest("a call must be a JSON object")
    }
    guard
      let value = layout.member("method", of: root, in: bytes),
      let method = layout.string(of: value, among: Self.knownMethods, in: bytes) ?? layout.string(of: value, in: bytes)
    else {
      throw .invalidRequest("a call needs \"method\", a string")
    }
    self.method = method
    self.layout = layout
    switch layout.member("parameters", of: root, in: bytes) {
    case let parameters? where layout.kind(of: parameters) == .object: self.parameters = parameters
    case let parameters? where layout.kind(of: parameters) != .null: throw .invalidRequest("\"parameters\" must be an object")
    default: self.parameters = nil
    }
    self.more = try Self.flag("more", of: layout, in: bytes)
    self.oneway = try Self.flag("oneway", of: layout, in: bytes)
    if self.more && self.oneway { throw .invalidRequest("a call cannot be both \"more\" and \"oneway\"") }
  }

  /// The interface part of ``method``.
  public var interface: String { varlinkInterface(of: self.method) }

  /// The method's own name, the last part of ``method``.
  public var name: String { varlinkMethodName(of: self.method) }

  /// The bytes of the `parameters` object in the frame; `nil` when the call has none.
  public var parametersRange: Range<Int>? {
    self.parameters.map { self.layout.byteRange(of: $0) }
  }

  /// The parameter `name`'s value, if the call has it.
  public func parameter(_ name: String, in bytes: UnsafeRawBufferPointer) -> JSONLayout.Value? {
    self.parameters.flatMap { self.layout.member(name, of: $0, in: bytes) }
  }

  /// Decodes the parameter `name` straight from the frame's bytes; `nil` when the call does not
  /// have it. Coding paths start at the parameter.
  ///
  /// - Throws: what ``JSONBytesDecoder/decode(_:from:layout:at:)`` throws.
  public func decodeParameter<T: Decodable>(
    _ type: T.Type, named name: String, from bytes: UnsafeRawBufferPointer, decoder: JSONBytesDecoder = JSONBytesDecoder()
  ) throws -> T? {
    guard let value = self.parameter(name, in: bytes) else { return nil }
    return try decoder.decode(type, from: bytes, layout: self.layout, at: value)
  }

  /// The parameters as a tree, for methods that want one (`[:]` when the call has none).
  public func parametersObject(in bytes: UnsafeRawBufferPointer) throws -> JSONObject {
    guard let parameters, case let .object(object) = try self.layout.jsonValue(of: parameters, in: bytes) else { return [:] }
    return object
  }

  /// The call as a ``VarlinkCall``, its parameters a tree.
  public func call(in bytes: UnsafeRawBufferPointer) throws -> VarlinkCall {
    VarlinkCall(method: self.method, parameters: try self.parametersObject(in: bytes), more: self.more, oneway: self.oneway)
  }

  private static func flag(_ key: String, of layout: JSONLayout, in bytes: UnsafeRawBufferPointer) throws(VarlinkError) -> Bool {
    guard let value = layout.member(key, of: layout.root, in: bytes), layout.kind(of: value) != .null else { return false }
    guard let flag = layout.bool(of: value) else { throw .invalidRequest("\"\(key)\" must be a boolean") }
    return flag
  }
}

/// The interface part of a qualified method name: `io.switchyard.Store` of `io.switchyard.Store.Send`.
func varlinkInterface(of method: String) -> String {
  guard let dot = method.lastIndex(of: ".") else { return "" }
  return String(method[..<dot])
}

/// The method's own name in a qualified one: `Send` of `io.switchyard.Store.Send`.
func varlinkMethodName(of method: String) -> String {
  guard let dot = method.lastIndex(of: ".") else { return method }
  return String(method[method.index(after: dot)...])
}
