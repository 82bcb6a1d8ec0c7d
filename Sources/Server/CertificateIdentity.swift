import NIOSSL

/// Who a TLS client is, as its certificate says and the CA vouches: the subject's common name
/// and the subject alternative names an access rule can match (DNS names, URIs).
///
/// ```swift
/// let identity = CertificateIdentity(commonName: "operator", dnsNames: [], uris: ["spiffe://example.org/ops"])
/// ```
package struct CertificateIdentity: Sendable, Hashable, CustomStringConvertible {
  package var commonName: String?
  package var dnsNames: [String]
  package var uris: [String]

  package init(commonName: String?, dnsNames: [String] = [], uris: [String] = []) {
    self.commonName = commonName
    self.dnsNames = dnsNames
    self.uris = uris
  }

  /// The identity in a verified peer certificate. Names that are not UTF-8 are left out, and each
  /// list keeps its first 16: a client's certificate is bytes it chose.
  init(_ certificate: NIOSSLCertificate) {
    self.commonName = certificate.subjectName.last { $0.type == .commonName }?.value
    var dnsNames: [String] = []
    var uris: [String] = []
    for name in certificate._subjectAlternativeNames() {
      let text = name.contents.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
      guard let text else { continue }
      switch name.nameType {
      case .dnsName where dnsNames.count < 16: dnsNames.append(text)
      case .uri where uris.count < 16: uris.append(text)
      default: break
      }
    }
    self.dnsNames = dnsNames
    self.uris = uris
  }

  /// The name the journal records a request's sender by: the common name, else the first URI,
  /// else the first DNS name.
  package var name: String? {
    self.commonName ?? self.uris.first ?? self.dnsNames.first
  }

  /// `CN=operator` with its SANs, for the log: each name made safe by ``loggable(_:)``.
  package var description: String {
    var parts = ["CN=\(loggable(self.commonName ?? ""))"]
    parts += self.dnsNames.map { "DNS:\(loggable($0))" }
    parts += self.uris.map { "URI:\(loggable($0))" }
    return parts.joined(separator: " ")
  }
}
