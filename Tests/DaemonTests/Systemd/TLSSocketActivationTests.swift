import Foundation
import SwitchyardTestSupport
import Testing

/// A TLS listener's TCP socket passed by systemd (`FileDescriptorName=varlink-tls`) beside the
/// Unix one: the first TLS client starts the daemon, which serves it on the inherited socket.
@Suite(.serialized) struct TLSSocketActivationTests {
  @Test func aSecondSocketNamedVarlinkTLSIsServedWithTLS() async throws {
    let certificates = try TestCertificates()
    defer { certificates.remove() }
    let identity = try certificates.client("operator")
    let configuration = "\(certificates.directory)/switchyard.json"
    try Data(#"{"switchyard":{"access":{"rules":{"ops":{"commonName":"operator","allow":["read"]}}}}}"#.utf8)
      .write(to: URL(fileURLWithPath: configuration))
    let port = Int.random(in: 20_000..<60_000)
    let socket = temporaryPath("activated.sock")
    defer { unlink(socket) }
    let tls = [
      "SWITCHYARD_TLS_CERTIFICATE": certificates.server.certificate, "SWITCHYARD_TLS_KEY": certificates.server.key,
      "SWITCHYARD_TLS_CA": certificates.ca,
    ]
    let products = DaemonProcess.productsDirectory
    let activator = try ChildProcess(
      "/usr/bin/systemd-socket-activate",
      ["--listen=\(socket)", "--listen=127.0.0.1:\(port)", "--fdname=varlink:varlink-tls"] + tls.keys.map { "--setenv=\($0)" }
        + [products.appendingPathComponent("switchyardd").path, "--socket", temporaryPath("configured.sock"), "--config", configuration],
      environment: tls.merging(["PATH": "/usr/bin:/bin"]) { $1 }, stderr: .collect
    )
    let arguments = ["--address", "tcp:127.0.0.1:\(port)", "--ca", certificates.ca, "--cert", identity.certificate, "--key", identity.key]
    var answer: ChildProcess?
    for _ in 0..<100 {
      let cli = try ChildProcess(products.appendingPathComponent("switchyard").path, arguments + ["get", "/primes/count"], stdout: .collect)
      if await cli.exit(within: .seconds(20)) == .exited(0) {
        answer = cli
        break
      }
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(answer?.stdout == "0\n", "\(activator.stderr)")
    activator.signal(SIGTERM)
    #expect(await activator.exit(within: .seconds(10)) == .exited(0), "\(activator.stderr)")
  }
}
