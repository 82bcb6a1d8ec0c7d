import SwitchyardVarlink

/// The TCP listeners (`tls.*`): where they listen and the certificates their TLS uses. Every
/// TCP listener speaks TLS; with ``clientAuthentication`` `.required` (the default) a client must
/// present a certificate that chains to ``certificateAuthority``, and that certificate is its
/// identity in the access policy.
///
/// ```json
/// "tls": {
///   "listen": ["tcp:0.0.0.0:7501"],
///   "certificate": "/etc/switchyard/tls/server.crt",
///   "key": "/etc/switchyard/tls/server.key",
///   "ca": "/etc/switchyard/tls/ca.crt"
/// }
/// ```
package struct TLSSettings: Sendable, Equatable {
  /// Whether a client must present a certificate.
  package enum ClientAuthentication: String, Sendable, CaseIterable {
    /// It must, chaining to the CA: mutual TLS.
    case required
    /// It need not, and is nobody to the access policy: only on a loopback address.
    case none
  }

  /// The oldest TLS version a listener accepts.
  package enum MinimumVersion: String, Sendable, CaseIterable {
    case tls13 = "1.3"
    case tls12 = "1.2"
  }

  /// The TCP addresses (`tcp:host:port`) served beside the Unix socket.
  package var listen: [VarlinkAddress] = []
  /// The server's certificate chain, PEM, the server's own first.
  package var certificate = ""
  /// The server certificate's private key, PEM.
  package var key = ""
  /// The CA certificates (PEM) a client certificate must chain to.
  package var certificateAuthority = ""
  package var clientAuthentication = ClientAuthentication.required
  package var minimumVersion = MinimumVersion.tls13

  package init() {}

  /// Why the settings cannot be used together: ``problem``'s sentence.
  package struct Problem: Error, CustomStringConvertible {
    package let description: String
  }

  /// What makes these settings unusable, as a sentence naming the key; `nil` when they are
  /// usable. A listener without client authentication is refused on anything but loopback.
  package var problem: (key: String, sentence: String)? { self.problem(servingInheritedSocket: false) }

  /// ``problem``, for listeners that include a TCP socket systemd passed: its address is not
  /// known to be loopback, so it always requires client certificates.
  package func problem(servingInheritedSocket: Bool) -> (key: String, sentence: String)? {
    guard !self.listen.isEmpty || servingInheritedSocket else { return nil }
    if let address = self.listen.first(where: { if case .tcp = $0 { false } else { true } }) {
      return ("tls.listen", "tls.listen takes tcp:host:port addresses, not \(address)")
    }
    if self.certificate.isEmpty { return ("tls.certificate", "a TLS listener needs tls.certificate (the server's certificate, PEM)") }
    if self.key.isEmpty { return ("tls.key", "a TLS listener needs tls.key (the server certificate's private key, PEM)") }
    switch self.clientAuthentication {
    case .required where self.certificateAuthority.isEmpty:
      return ("tls.ca", "a TLS listener needs tls.ca (the CA client certificates chain to), or tls.clientAuthentication none on loopback")
    case .none:
      if let remote = self.listen.first(where: { !$0.isLoopback }) {
        return ("tls.clientAuthentication", "tls.clientAuthentication none is only for loopback addresses, not \(remote)")
      }
      if servingInheritedSocket {
        return ("tls.clientAuthentication", "tls.clientAuthentication none is only for loopback addresses, not a socket systemd passed")
      }
    case .required:
      break
    }
    return nil
  }
}
