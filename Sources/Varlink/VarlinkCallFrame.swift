import OrderedCollections
import SwitchyardJSON

/// A Varlink call as the server reads it from a frame's bytes: the envelope (`method`, `more`,
/// `oneway`) decoded, the `parameters` only located, so that a value in them is decoded straight
/// from the bytes too (an action goes from bytes to its Swift value in one pass), and a tree is
/// built only for what wants one.
///
/// It accepts and refuses what `VarlinkCall(parsing: JSONValue(parsing: bytes))` does, with the
/// same errors: ``JSONParseError`` for bytes that are not JSON, ``VarlinkError`` (`InvalidRequest`)
/// for JSON that is not a call. It points into the bytes it was read from: use it only while
/// they live (a responder, only while it prepares the call), and never keep it.
///
/// ```swift
/// let action = try frame.withUnsafeReadableBytes { bytes in   // a NIO ByteBuffer, not copied
///   try VarlinkCallFrame(parsing: bytes).decodeParameter(App.Action.self, named: "action")
/// }
/// ```
public struct VarlinkCallFrame {
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
  /// The frame's bytes (without its NUL): valid only while the buffer they are in is.
  public let bytes: UnsafeRawBufferPointer

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
    self.bytes = bytes
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

  /// Where the parameter `name` lies in the frame; `nil` when the call does not have it.
  public func parameterLayout(_ name: String) -> JSONLayout.Value? {
    self.parameters.flatMap { self.layout.member(name, of: $0, in: self.bytes) }
  }

  /// The parameter `name` as a tree; `nil` when the call does not have it.
  public func parameter(_ name: String) -> JSONValue? {
    // The layout checked the frame, so a tree of any part of it can be built.
    self.parameterLayout(name).flatMap { try? self.layout.jsonValue(of: $0, in: self.bytes) }
  }

  /// Decodes the parameter `name` straight from the frame's bytes; `nil` when the call does not
  /// have it. Coding paths start at the parameter.
  ///
  /// - Throws: what ``JSONBytesDecoder/decode(_:from:layout:at:)`` throws.
  public func decodeParameter<T: Decodable>(
    _ type: T.Type, named name: String, decoder: JSONBytesDecoder = JSONBytesDecoder()
  ) throws -> T? {
    guard let value = self.parameterLayout(name) else { return nil }
    return try self.decode(type, at: value, decoder: decoder)
  }

  /// Decodes the value at `value` straight from the frame's bytes.
  public func decode<T: Decodable>(_ type: T.Type, at value: JSONLayout.Value, decoder: JSONBytesDecoder) throws -> T {
    try decoder.decode(type, from: self.bytes, layout: self.layout, at: value)
  }

  /// The elements of the array at `value`, in order; empty for anything else.
  public func elements(of value: JSONLayout.Value) -> [JSONLayout.Value] {
    self.layout.elements(of: value)
  }

  /// Whether `value` is an array.
  public func isArray(_ value: JSONLayout.Value) -> Bool {
    self.layout.kind(of: value) == .array
  }

  /// The bytes of `value` in place: valid only while the frame's are.
  public func bytes(of value: JSONLayout.Value) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: self.bytes[self.layout.byteRange(of: value)])
  }

  /// The bytes of `value`, exactly as the client sent them: valid JSON, since the frame's layout
  /// checked it.
  public func text(of value: JSONLayout.Value) -> [UInt8] {
    Array(self.bytes(of: value))
  }

  /// The parameters as a tree, for methods that want one (`[:]` when the call has none).
  public func parametersObject() throws -> JSONObject {
    guard let parameters, case let .object(object) = try self.layout.jsonValue(of: parameters, in: self.bytes) else { return [:] }
    return object
  }

  /// The whole call, its parameters a tree: for the methods that are not on the hot path.
  public func tree() -> VarlinkCall {
    // The layout checked the frame, so its parameters make a tree.
    let parameters = (try? self.parametersObject()) ?? [:]
    return VarlinkCall(method: self.method, parameters: parameters, more: self.more, oneway: self.oneway)
  }

  /// Runs `body` with `call` as the server reads it from the wire: for whoever prepares calls
  /// without a connection (tests, tools).
  ///
  /// ```swift
  /// let prepared = try VarlinkCallFrame.reading(VarlinkCall(method: "org.varlink.service.GetInfo")) {
  ///   responder.prepare($0, caller: nil, whenClosed: { _ in })
  /// }
  /// ```
  public static func reading<Result>(_ call: VarlinkCall, _ body: (VarlinkCallFrame) throws -> Result) throws -> Result {
    let text = Array(call.message.serialized().utf8)
    return try text.withUnsafeBytes { bytes in try body(VarlinkCallFrame(parsing: bytes)) }
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
