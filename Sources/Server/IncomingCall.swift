import SwitchyardJSON
import SwitchyardVarlink

/// A call as the server read it: the envelope decoded, the parameters only located in the
/// frame, so that the responder decodes what it needs straight from the bytes (an action goes
/// from bytes to its Swift value in one pass) and builds a tree only for what wants one.
///
/// It lives only while ``VarlinkResponder/prepare(_:caller:whenClosed:)`` runs: `bytes` is the
/// connection's read buffer. Take values out of it there; never keep the call.
///
/// ```swift
/// frame.withUnsafeReadableBytes { bytes in
///   let call = IncomingCall(frame: try VarlinkCallFrame(parsing: bytes), bytes: bytes)
///   let action = try call.parameterLayout("action").map { try call.decode(App.Action.self, at: $0, decoder: decoder) }
/// }
/// ```
package struct IncomingCall {
  package let frame: VarlinkCallFrame
  package let bytes: UnsafeRawBufferPointer

  package init(frame: VarlinkCallFrame, bytes: UnsafeRawBufferPointer) {
    self.frame = frame
    self.bytes = bytes
  }

  /// The qualified method name, such as `org.varlink.service.GetInfo`.
  package var method: String { self.frame.method }
  /// The interface part of ``method``.
  package var interface: String { self.frame.interface }
  /// The method's own name.
  package var name: String { self.frame.name }
  /// The caller wants every reply until one without `continues`.
  package var more: Bool { self.frame.more }
  /// The caller wants no reply.
  package var oneway: Bool { self.frame.oneway }

  /// Where the parameter `name` lies in the frame; `nil` when the call does not have it.
  package func parameterLayout(_ name: String) -> JSONLayout.Value? {
    self.frame.parameter(name, in: self.bytes)
  }

  /// The elements of the array at `value`, in order; empty for anything else.
  package func elements(of value: JSONLayout.Value) -> [JSONLayout.Value] {
    self.frame.layout.elements(of: value)
  }

  /// The bytes of `value`, exactly as the client sent them: valid JSON, since the frame's
  /// layout checked it.
  package func text(of value: JSONLayout.Value) -> [UInt8] {
    Array(self.bytes(of: value))
  }

  /// The bytes of `value` in place, as ``text(of:)`` copies them: valid only while the call is.
  package func bytes(of value: JSONLayout.Value) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(rebasing: self.bytes[self.frame.layout.byteRange(of: value)])
  }

  /// Whether `value` is an array.
  package func isArray(_ value: JSONLayout.Value) -> Bool {
    self.frame.layout.kind(of: value) == .array
  }

  /// Decodes the value at `value` straight from the frame's bytes.
  package func decode<T: Decodable>(_ type: T.Type, at value: JSONLayout.Value, decoder: JSONBytesDecoder) throws -> T {
    try decoder.decode(type, from: self.bytes, layout: self.frame.layout, at: value)
  }

  /// The parameter `name` as a tree; `nil` when the call does not have it.
  package func parameter(_ name: String) -> JSONValue? {
    // The layout checked the frame, so a tree of any part of it can be built.
    self.parameterLayout(name).flatMap { try? self.frame.layout.jsonValue(of: $0, in: self.bytes) }
  }

  /// The whole call, its parameters a tree: for the methods that are not on the hot path.
  package func tree() -> VarlinkCall {
    let parameters = (try? self.frame.parametersObject(in: self.bytes)) ?? [:]
    return VarlinkCall(method: self.method, parameters: parameters, more: self.more, oneway: self.oneway)
  }
}

extension IncomingCall {
  /// Runs `body` with `call` as the server would read it from the wire: for whoever prepares
  /// calls without a connection (tests, tools).
  ///
  /// ```swift
  /// let prepared = try IncomingCall.reading(VarlinkCall(method: "org.varlink.service.GetInfo")) {
  ///   responder.prepare($0, caller: nil, whenClosed: { _ in })
  /// }
  /// ```
  package static func reading<Result>(_ call: VarlinkCall, _ body: (IncomingCall) throws -> Result) throws -> Result {
    let text = Array(call.message.serialized().utf8)
    return try text.withUnsafeBytes { bytes in
      try body(IncomingCall(frame: try VarlinkCallFrame(parsing: bytes), bytes: bytes))
    }
  }
}
