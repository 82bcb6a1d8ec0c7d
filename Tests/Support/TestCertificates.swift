import Foundation

/// A CA and the certificates the TLS tests need, made with `openssl` in a temporary directory
/// when a test starts and removed with it: none is ever committed.
///
/// ```swift
/// let certificates = try TestCertificates()
/// defer { certificates.remove() }
/// let client = try certificates.client("operator", uris: ["spiffe://test/operator"])
/// ```
public struct TestCertificates: Sendable {
  /// A certificate and its key, as PEM files.
  public struct Pair: Sendable {
    public let certificate: String
    public let key: String
  }

  public let directory: String
  /// The CA's certificate, which the server and client certificates chain to.
  public let ca: String
  /// The server's certificate, for `localhost` and `127.0.0.1`.
  public let server: Pair
  private let caKey: String

  /// Makes a CA (`name`) and a server certificate it signs.
  public init(name: String = "Switchyard Test CA") throws {
    self.directory = FileManager.default.temporaryDirectory.appendingPathComponent("tls-\(UUID().uuidString.prefix(8))").path
    try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
    self.ca = "\(self.directory)/ca.crt"
    self.caKey = "\(self.directory)/ca.key"
    try Self.openssl(
      ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", self.caKey, "-out", self.ca,
       "-subj", "/CN=\(name)", "-days", "2"]
    )
    self.server = try Self.issue(
      "server", subject: "localhost", extensions: "subjectAltName=DNS:localhost,IP:127.0.0.1", days: 2,
      ca: self.ca, caKey: self.caKey, in: self.directory
    )
  }

  /// A client certificate with common name `commonName` and these SANs; `days` below zero makes
  /// one that has expired.
  public func client(_ commonName: String, dnsNames: [String] = [], uris: [String] = [], days: Int = 2) throws -> Pair {
    let names = dnsNames.map { "DNS:\($0)" } + uris.map { "URI:\($0)" }
    return try Self.issue(
      "client-\(commonName)-\(days)", subject: commonName,
      extensions: names.isEmpty ? "extendedKeyUsage=clientAuth" : "subjectAltName=\(names.joined(separator: ","))",
      days: days, ca: self.ca, caKey: self.caKey, in: self.directory
    )
  }

  public func remove() {
    try? FileManager.default.removeItem(atPath: self.directory)
  }

  private static func issue(
    _ name: String, subject: String, extensions: String, days: Int, ca: String, caKey: String, in directory: String
  ) throws -> Pair {
    let key = "\(directory)/\(name).key"
    let request = "\(directory)/\(name).csr"
    let certificate = "\(directory)/\(name).crt"
    let extensionsFile = "\(directory)/\(name).ext"
    try Data(extensions.utf8).write(to: URL(fileURLWithPath: extensionsFile))
    try Self.openssl(
      ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=\(subject)"]
    )
    try Self.openssl(
      ["x509", "-req", "-in", request, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-out", certificate,
       "-days", "\(days)", "-extfile", extensionsFile]
    )
    return Pair(certificate: certificate, key: key)
  }

  /// Runs `openssl`, a child that ends in milliseconds, and waits for it by polling: not with
  /// Foundation's `Process`, whose `waitUntilExit` holds a pool thread until a monitor thread other
  /// children can delay sees it end (see ``ChildProcess``).
  private static func openssl(_ arguments: [String]) throws {
    let process = try ChildProcess("/usr/bin/openssl", arguments)
    let deadline = ContinuousClock.now + .seconds(30)
    while process.isRunning, ContinuousClock.now < deadline { usleep(1_000) }
    guard process.ended == .exited(0) else {
      throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "openssl \(arguments.first ?? "") failed"])
    }
  }
}
