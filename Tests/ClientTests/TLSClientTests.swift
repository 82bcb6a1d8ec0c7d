import Foundation
import PrimeTime
@_spi(Testing) import SwitchyardClient
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing

/// The client and the CLI by address, against a real `switchyardd` with a TLS listener on
/// loopback and certificates made for the test.
@Suite(.serialized) struct TLSClientTests {
  typealias Client = SwitchyardClient<App.Action, App.State>

  /// A daemon serving TLS on a free loopback port, where `operator` may read and write.
  static func daemon(_ certificates: TestCertificates) async throws -> (DaemonProcess, address: String) {
    let port = try freeTCPPort()
    let configuration = "\(certificates.directory)/switchyard-\(port).json"
    try Data(
      #"{"switchyard":{"access":{"rules":{"operator":{"commonName":"operator","allow":["read","write"]}}}}}"#.utf8
    ).write(to: URL(fileURLWithPath: configuration))
    let daemon = try await DaemonProcess(
      environment: [
        "SWITCHYARD_TLS_LISTEN": "tcp:127.0.0.1:\(port)", "SWITCHYARD_TLS_CERTIFICATE": certificates.server.certificate,
        "SWITCHYARD_TLS_KEY": certificates.server.key, "SWITCHYARD_TLS_CA": certificates.ca,
      ],
      arguments: ["--config", configuration]
    )
    return (daemon, "tcp:127.0.0.1:\(port)")
  }

  @Test func aSubscriptionOverTLSResumesWithSinceAfterItsConnectionDrops() async throws {
    let certificates = try TestCertificates()
    defer { certificates.remove() }
    let (daemon, address) = try await Self.daemon(certificates)
    let identity = try certificates.client("operator")
    var configuration = Client.Configuration()
    configuration.tls = SwitchyardTLS(certificateAuthority: certificates.ca, certificate: identity.certificate, key: identity.key)
    configuration.reconnectDelay = .milliseconds(300)
    let client = try Client(address: address, configuration: configuration)
    let recorder = Recorder(client.subscribe(path: "/primes", as: Primes.State.self))
    try await eventually("the first snapshot") { !recorder.recorded.seqs.isEmpty }
    for _ in 0..<3 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber saw 3") { recorder.seq == 3 }
    client.dropSubscriptionConnections()
    for _ in 0..<2 { try await client.send(.counter(.incrTapped)) }
    try await eventually("the subscriber resumed and saw 5") { recorder.seq == 5 }
    let recorded = recorder.recorded
    #expect(recorded.seqs == [0, 1, 2, 3, 4, 5], "every change once, in order")
    #expect(recorded.snapshots == 1, "resumed with since, over a new TLS connection")
    #expect(recorded.latest?.count == 5)
    recorder.cancel()
    client.close()
    #expect(await daemon.terminate() == 0)
  }

  @Test func theCLITakesTheAddressAndTheFilesByOptionOrEnvironment() async throws {
    let certificates = try TestCertificates()
    defer { certificates.remove() }
    let (daemon, address) = try await Self.daemon(certificates)
    let identity = try certificates.client("operator")
    let cli = CLITests()
    var output = try await cli.run(
      ["--address", address, "--ca", certificates.ca, "--cert", identity.certificate, "--key", identity.key, "send", "counter.incrTapped"]
    )
    #expect(output.status == 0, "\(output.stderr)")
    output = try await cli.run(
      ["--address", address, "--ca", certificates.ca, "--cert", identity.certificate, "--key", identity.key, "status"]
    )
    #expect(output.stdout.contains("Listeners: unix:\(daemon.socketPath) 0, \(address) 1"), "its own connection: \(output.stdout)")
    output = try await cli.run(
      ["get", "/primes/count"],
      environment: [
        "SWITCHYARD_ADDRESS": address, "SWITCHYARD_CA": certificates.ca, "SWITCHYARD_CERT": identity.certificate,
        "SWITCHYARD_KEY": identity.key,
      ]
    )
    #expect(output.status == 0, "\(output.stderr)")
    #expect(output.stdout.contains("1"), "\(output.stdout)")
    // Without a certificate the daemon refuses the handshake: nothing is answered.
    output = try await cli.run(["--address", address, "--ca", certificates.ca, "get"])
    #expect(output.status == 3, "cannot connect")
    #expect(output.stderr.contains("the TLS session failed"), "\(output.stderr)")
    #expect(output.stdout.isEmpty, "\(output.stdout)")
    output = try await cli.run(["--address", "tcp:nowhere", "get"])
    #expect(output.status == 2, "\(output.stderr)")
    #expect(await daemon.terminate() == 0)
  }
}
