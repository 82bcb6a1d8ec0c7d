import NIOCore

/// A request's body as the endpoint reads it for a route that takes one (not `GET` or `HEAD`):
/// its first ``limit`` bytes, and whether more came, which the route refuses (413) rather than
/// reads. The whole request stays within ``RequestDeadlineHandler/maximumBytes`` besides.
///
/// ```swift
/// guard !exchange.body.isTooLarge else { return exchange.respond(.payloadTooLarge, body: "…") }
/// let bytes = exchange.body.bytes  // nil: the request had none
/// ```
package struct HTTPRequestBody: Sendable {
  /// The most bytes of a body kept: half of what a request may be, so its head fits beside it.
  package static var limit: Int { 64 << 10 }

  /// The body, when the request had one within ``limit``.
  package private(set) var bytes: ByteBuffer?
  /// More than ``limit`` bytes came: none of them is kept.
  package private(set) var isTooLarge = false

  init() {}

  mutating func append(_ part: ByteBuffer) {
    guard !self.isTooLarge else { return }
    guard (self.bytes?.readableBytes ?? 0) + part.readableBytes <= Self.limit else {
      self.bytes = nil
      self.isTooLarge = true
      return
    }
    if self.bytes == nil {
      self.bytes = part
    } else {
      var part = part
      self.bytes?.writeBuffer(&part)
    }
  }
}
