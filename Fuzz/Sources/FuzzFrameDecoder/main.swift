import FuzzDriver
import NIOCore
import NIOEmbedded
import SwitchyardVarlink

/// Any bytes through the NUL framing, in chunks of the size the first byte picks (1–32), with a
/// limit of 64 bytes so that the fuzzer reaches it: the frames that come out, each with its NUL,
/// are exactly the bytes that went in, up to the first message over the limit, which fails the
/// stream, and nothing else does.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
  guard let data else { return 0 }
  guard size > 0 else { return 0 }
  let chunk = Int(data[0] % 32) + 1
  let input = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
  let channel = EmbeddedChannel(handler: FrameReader(VarlinkFrameDecoder(maximumLength: 64)))
  var out: [UInt8] = []
  var failed = false
  var offset = 0
  while offset < input.count, !failed {
    let end = min(offset + chunk, input.count)
    do {
      try channel.writeInbound(channel.allocator.buffer(bytes: input[offset..<end]))
    } catch is VarlinkFrameTooLarge {
      failed = true
    } catch {
      preconditionFailure("unexpected error \(error)")
    }
    while let frame = try? channel.readInbound(as: ByteBuffer.self) {
      precondition(frame.readableBytes <= 64, "a frame over the limit came out")
      out += frame.readableBytesView + [0]
    }
    offset = end
  }
  precondition(Array(input.prefix(out.count)) == out, "the frames are not the bytes that went in")
  // The stream fails only for a message over the limit: the one after the last frame out.
  let rest = input[out.count...]
  let next = rest.prefix { $0 != 0 }
  if failed {
    precondition(next.count > 64, "a stream failed without a message over the limit")
  } else if let lastNUL = input.lastIndex(of: 0) {
    precondition(out.count == lastNUL + 1, "a complete frame did not come out")
  }
  _ = try? channel.finish()
  return 0
}

runFuzzer(fuzz)
