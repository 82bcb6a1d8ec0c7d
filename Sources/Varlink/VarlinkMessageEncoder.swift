import NIOCore
import SwitchyardJSON

/// Writes Varlink messages: each JSON object followed by a NUL byte. The other direction of
/// ``VarlinkFrameDecoder``; the daemon writes replies with it and the client calls.
///
/// ```swift
/// try channel.pipeline.syncOperations.addHandlers(
///   FrameReader(VarlinkFrameDecoder(maximumLength: 1 << 20)),
///   MessageToByteHandler(VarlinkMessageEncoder())
/// )
/// ```
public struct VarlinkMessageEncoder: MessageToByteEncoder {
  public typealias OutboundIn = JSONValue

  public init() {}

  public func encode(data message: JSONValue, out: inout ByteBuffer) {
    out.writeBytes(Self.frame(message))
  }

  /// The bytes of one message, NUL included: for the few places that write past the pipeline
  /// (a refusal before a connection is served).
  public static func frame(_ message: JSONValue) -> [UInt8] {
    var bytes = message.serializedBytes()
    bytes.append(0)
    return bytes
  }
}
