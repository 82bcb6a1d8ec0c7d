import NIOCore
import NIOSSL
import NIOTLS

/// How a client proves who it is to a daemon's TLS listener and checks the daemon: the CA the
/// daemon's certificate must chain to, and the client's own certificate and key (PEM files).
///
/// ```swift
/// var configuration = SwitchyardClient<JSONValue, JSONValue>.Configuration()
/// configuration.tls = SwitchyardTLS(certificateAuthority: "ca.crt", certificate: "operator.crt", key: "operator.key")
/// let client = try SwitchyardClient<JSONValue, JSONValue>(address: "tcp:db1.example:7501", configuration: configuration)
/// ```
public struct SwitchyardTLS: Sendable, Equatable {
  /// The CA certificates (PEM) the daemon's certificate must chain to; `nil` for the system's.
  public var certificateAuthority: String?
  /// The client's certificate (PEM), for a listener that requires one.
  public var certificate: String?
  /// The client certificate's private key (PEM).
  public var key: String?

  public init(certificateAuthority: String? = nil, certificate: String? = nil, key: String? = nil) {
    self.certificateAuthority = certificateAuthority
    self.certificate = certificate
    self.key = key
  }

  /// The context a connection's handshake uses: TLS 1.3, the daemon verified against the CA and
  /// the host name (or the IP address) connected to.
  func context() throws -> NIOSSLContext {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.minimumTLSVersion = .tlsv13
    if let certificateAuthority {
      configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificateAuthority))
    }
    if let certificate {
      configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
    }
    if let key {
      configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
    }
    return try NIOSSLContext(configuration: configuration)
  }
}

/// Completes its promise when the connection's TLS handshake is done, or fails it with what
/// ended it: connecting waits for it, so that a refused certificate is an error of the connect.
final class TLSHandshakeWaiter: ChannelInboundHandler, RemovableChannelHandler {
  typealias InboundIn = ByteBuffer
  let done: EventLoopPromise<Void>

  init(done: EventLoopPromise<Void>) {
    self.done = done
  }

  func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
    if case TLSUserEvent.handshakeCompleted = event {
      self.done.succeed()
      context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
    context.fireUserInboundEventTriggered(event)
  }

  func errorCaught(context: ChannelHandlerContext, error: any Error) {
    self.done.fail(error)
    context.fireErrorCaught(error)
  }

  func channelInactive(context: ChannelHandlerContext) {
    self.done.fail(ChannelError.eof)
    context.fireChannelInactive()
  }

  /// A connection that failed before it was active ends here: the promise is never left open.
  func handlerRemoved(context: ChannelHandlerContext) {
    self.done.fail(ChannelError.ioOnClosedChannel)
  }
}
