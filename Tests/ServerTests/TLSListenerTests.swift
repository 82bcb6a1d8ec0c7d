import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import SwitchyardJSON
import SwitchyardTestSupport
import SwitchyardVarlink
import Testing

@testable import SwitchyardServer

/// A TCP listener with TLS, on loopback, with certificates made for the test: who gets in, who
/// they are once in, and what happens to clients that misbehave before or after the handshake.
@Suite(.serialized) struct TLSListenerTests {
  /// Answers every call with who the server says the caller is.
  struct Identity: VarlinkResponder {
    func prepare(
      _ call: VarlinkCallFrame, caller: Caller?, whenClosed: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> PreparedCall {
      let certificate = caller?.certificate
      let isRemote = caller?.isRemote ?? false
      let identity = caller?.identity
      return .answering {
        [
          "remote": .bool(isRemote), "commonName": certificate?.commonName.map(JSONValue.string) ?? .null,
          "uris": .array((certificate?.uris ?? []).map(JSONValue.string)), "identity": identity.map(JSONValue.string) ?? .null,
        ]
      }
    }

    func error(for refusal: ServerRefusal) -> VarlinkError { VarlinkError("test.Refused", [:]) }
  }

  static let certificates = Result { try TestCertificates() }

  /// Runs `body` with the port of a server listening on 127.0.0.1 with `settings` (the test CA's
  /// server certificate, and its CA for clients, unless changed).
  static func withServer(
    frameTimeout: Duration = .seconds(10), maximumMessageBytes: Int = 1 << 20, counters: ServerCounters = ServerCounters(),
    configured change: (inout TLSSettings) -> Void = { _ in }, _ body: (Int) async throws -> Void
  ) async throws {
    let certificates = try Self.certificates.get()
    var settings = TLSSettings()
    settings.listen = [.tcp(host: "127.0.0.1", port: 0)]
    (settings.certificate, settings.key, settings.certificateAuthority) =
      (certificates.server.certificate, certificates.server.key, certificates.ca)
    change(&settings)
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    defer { group.shutdownGracefully { _ in } }
    let server = VarlinkServer(
      responder: Identity(), counters: counters,
      listener: .tcp(host: "127.0.0.1", port: 0, tls: try TLSServerContext(settings)),
      limits: { ServerLimits(maximumMessageBytes: maximumMessageBytes, frameTimeout: frameTimeout) },
      loop: group.next(), logger: Logger(label: "test")
    )
    let running = Task { try await server.run {} }
    var port: Int?
    for _ in 0..<200 where port == nil {
      port = await server.localAddresses().first?.port
      if port == nil { try await Task.sleep(for: .milliseconds(10)) }
    }
    var failure: (any Error)?
    do { try await body(try #require(port)) } catch { failure = error }
    // The server stops before its event loop does.
    server.drain()
    _ = await running.result
    if let failure { throw failure }
  }

  @Test func aClientWithACertificateFromTheCAIsItsCertificatesIdentity() async throws {
    let client = try Self.certificates.get().client("operator", uris: ["spiffe://test/operator"])
    try await Self.withServer { port in
      let reply = try await TLSTestClient.call(port: port, certificate: client)
      #expect(reply?["remote"] == .bool(true))
      #expect(reply?["commonName"] == .string("operator"))
      #expect(reply?["uris"] == .array([.string("spiffe://test/operator")]))
    }
  }

  @Test func aConnectionCountsUnderItsIdentityWhileOpenAndARefusedHandshakeUnderItsListener() async throws {
    let certificates = try Self.certificates.get()
    let counters = ServerCounters()
    try await Self.withServer(counters: counters) { port in
      #expect(try await TLSTestClient.call(port: port, certificate: nil) == nil, "no certificate")
      let reply = try await TLSTestClient.call(port: port, certificate: try certificates.client("operator"))
      #expect(reply?["identity"] == .string("operator"))
      try await eventually { counters.byListener.snapshot.first?.connections == 0 }
      let listener = try #require(counters.byListener.snapshot.first)
      #expect(listener.refusedHandshakes == 1)
      #expect(listener.identities.isEmpty, "an identity is forgotten with its last connection")
    }
  }

  @Test func aCertificateIsNamedByItsCommonNameElseItsFirstURIElseItsFirstDNSName() {
    #expect(CertificateIdentity(commonName: "operator", dnsNames: ["a.example"], uris: ["spiffe://x"]).name == "operator")
    #expect(CertificateIdentity(commonName: nil, dnsNames: ["a.example"], uris: ["spiffe://x"]).name == "spiffe://x")
    #expect(CertificateIdentity(commonName: nil, dnsNames: ["a.example"]).name == "a.example")
    #expect(Caller(remote: nil).identity == "no certificate")
    #expect(Caller(pid: 42, uid: 1000, gid: 1000).identity == "uid 1000")
  }

  @Test func clientsWithoutAValidCertificateGetNoAnswer() async throws {
    let certificates = try Self.certificates.get()
    let foreign = try TestCertificates(name: "Another CA")
    defer { foreign.remove() }
    let expired = try certificates.client("expired", days: -1)
    try await Self.withServer { port in
      #expect(try await TLSTestClient.call(port: port, certificate: nil) == nil, "no certificate")
      #expect(try await TLSTestClient.call(port: port, certificate: try foreign.client("stranger")) == nil, "another CA's")
      #expect(try await TLSTestClient.call(port: port, certificate: expired) == nil, "expired")
      // The listener goes on serving.
      let reply = try await TLSTestClient.call(port: port, certificate: try certificates.client("operator"))
      #expect(reply?["commonName"] == .string("operator"))
    }
  }

  @Test func aListenerWithoutClientAuthenticationTakesClientsWithoutACertificate() async throws {
    try await Self.withServer(configured: { $0.clientAuthentication = .none }) { port in
      let reply = try await TLSTestClient.call(port: port, certificate: nil)
      #expect(reply?["remote"] == .bool(true))
      #expect(reply?["commonName"] == .null)
    }
  }

  @Test func garbageInsteadOfAClientHelloClosesTheConnection() async throws {
    try await Self.withServer { port in
      let closed = try await TLSTestClient.plain(port: port, sending: Array(#"{"method":"test.X"}"#.utf8) + [0])
      #expect(closed, "closed without a Varlink reply")
    }
  }

  @Test func aHandshakeThatNeverFinishesIsClosedAtTheFrameTimeout() async throws {
    try await Self.withServer(frameTimeout: .milliseconds(300)) { port in
      let start = ContinuousClock.now
      let closed = try await TLSTestClient.plain(port: port, sending: [])
      #expect(closed)
      #expect(ContinuousClock.now - start < .seconds(5))
    }
  }

  @Test func anOversizedFrameAfterTheHandshakeClosesTheConnection() async throws {
    let client = try Self.certificates.get().client("operator")
    try await Self.withServer(maximumMessageBytes: 1024) { port in
      let reply = try await TLSTestClient.call(port: port, certificate: client, frame: Array(repeating: UInt8(ascii: " "), count: 4096) + [0])
      #expect(reply == nil)
    }
  }

  @Test func aReloadAppliesToTheNextHandshake() async throws {
    let certificates = try Self.certificates.get()
    let other = try TestCertificates(name: "Next CA")
    defer { other.remove() }
    var settings = TLSSettings()
    (settings.certificate, settings.key, settings.certificateAuthority) = (certificates.server.certificate, certificates.server.key, certificates.ca)
    let context = try TLSServerContext(settings)
    settings.certificateAuthority = other.ca
    try context.reload(settings)
    settings.key = "/nonexistent/key.pem"
    #expect(throws: ServerError.self) { try context.reload(settings) }
  }
}

/// A Varlink client over TLS, or a plain TCP one that never starts TLS.
enum TLSTestClient {
  /// Makes one call (`frame`, by default a `test.WhoAmI`) and returns its reply's parameters;
  /// `nil` when the connection ends first.
  static func call(
    port: Int, certificate: TestCertificates.Pair?, frame: [UInt8] = Array(#"{"method":"test.WhoAmI"}"#.utf8) + [0]
  ) async throws -> JSONValue? {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(try TLSListenerTests.certificates.get().ca))
    if let certificate {
      configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate.certificate).map { .certificate($0) }
      configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: certificate.key, format: .pem))
    }
    let context = try NIOSSLContext(configuration: configuration)
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
      .connect(host: "127.0.0.1", port: port) { channel in
        channel.eventLoop.makeCompletedFuture {
          try channel.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: "localhost"))
          return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
        }
      }
    return try await channel.executeThenClose { inbound, outbound in
      try? await outbound.write(ByteBuffer(bytes: frame))
      var received: [UInt8] = []
      do {
        for try await buffer in inbound {
          received += buffer.readableBytesView
          if let end = received.firstIndex(of: 0) {
            return try JSONValue(parsing: Array(received[..<end]))["parameters"]
          }
        }
      } catch {}
      return nil
    }
  }

  /// Connects without TLS, sends `bytes`, and returns whether the server closed the connection
  /// within 10 s.
  static func plain(port: Int, sending bytes: [UInt8]) async throws -> Bool {
    let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton).connect(host: "127.0.0.1", port: port).get()
    if !bytes.isEmpty { try await channel.writeAndFlush(ByteBuffer(bytes: bytes)) }
    let start = ContinuousClock.now
    let giveUp = channel.eventLoop.scheduleTask(in: .seconds(10)) { channel.close(promise: nil) }
    try? await channel.closeFuture.get()
    giveUp.cancel()
    return ContinuousClock.now - start < .seconds(9)
  }
}
