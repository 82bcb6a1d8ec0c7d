import NIOCore
import SwitchyardJSON

// Replies and errors written straight into a frame's bytes: the same bytes as
// `VarlinkMessageEncoder.frame(message)`, without building the message's tree around the
// parameters (keys in the writer's sorted order: "continues" and "error" before "parameters").

extension VarlinkReply {
  /// The reply as a frame, its NUL included: `VarlinkMessageEncoder.frame(message)`, written
  /// without the message's tree.
  ///
  /// ```swift
  /// VarlinkReply(parameters: ["seq": 3]).frame()  // {"parameters":{"seq":3}}\0
  /// ```
  public func frame() -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(64)
    bytes.append(contentsOf: self.continues ? #"{"continues":true,"parameters":"#.utf8 : #"{"parameters":"#.utf8)
    JSONValue.object(self.parameters).serialize(appendingTo: &bytes)
    bytes.append(UInt8(ascii: "}"))
    bytes.append(0)
    return bytes
  }
}

extension VarlinkError {
  /// The error as a frame, its NUL included: `VarlinkMessageEncoder.frame(message)`, written
  /// without the message's tree.
  ///
  /// ```swift
  /// VarlinkError.expectedMore().frame()  // {"error":"org.varlink.service.ExpectedMore","parameters":{}}\0
  /// ```
  public func frame() -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(96)
    bytes.append(contentsOf: #"{"error":"#.utf8)
    JSONValue.string(self.name).serialize(appendingTo: &bytes)
    bytes.append(contentsOf: #","parameters":"#.utf8)
    JSONValue.object(self.parameters).serialize(appendingTo: &bytes)
    bytes.append(UInt8(ascii: "}"))
    bytes.append(0)
    return bytes
  }
}

extension VarlinkReply {
  /// Writes the reply `{"parameters":{"name":N}}` and its NUL into `buffer`, without a
  /// parameters object or an intermediate array: what every `Send` and `SendBatch` answers
  /// (`"seq"`). `name` is written as it is: it must need no escaping in JSON.
  ///
  /// ```swift
  /// var buffer = ByteBufferAllocator().buffer(capacity: 32)
  /// VarlinkReply.writeIntegerParameter("seq", 7, to: &buffer)  // {"parameters":{"seq":7}}\0
  /// ```
  public static func writeIntegerParameter(_ name: StaticString, _ value: UInt64, to buffer: inout ByteBuffer) {
    buffer.writeStaticString(#"{"parameters":{""#)
    buffer.writeStaticString(name)
    buffer.writeStaticString(#"":"#)
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 decimal digits at most, in 24 bytes
    withUnsafeMutableBytes(of: &digits) { digits in
      var value = value
      var index = digits.count
      repeat {
        index -= 1
        digits[index] = UInt8(ascii: "0") + UInt8(value % 10)
        value /= 10
      } while value != 0
      buffer.writeBytes(UnsafeRawBufferPointer(rebasing: digits[index...]))
    }
    buffer.writeStaticString("}}\0")
  }
}
