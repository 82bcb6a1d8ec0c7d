import NIOSSL
import SwitchyardSynchronization

/// The TLS context each new handshake of a TCP listener uses, made from ``TLSSettings`` and
/// replaced by a reload: established connections keep the one they shook hands with.
///
/// ```swift
/// let tls = try TLSServerContext(settings)
/// try tls.reload(newSettings)  // on SIGHUP: the next handshake uses the new certificates
/// ```
package final class TLSServerContext: Sendable {
  private let current: Mutex<NIOSSLContext>
  private let servesInheritedSocket: Bool

  /// - Throws: ``ServerError/Code/cannotLoadTLS`` naming the file that cannot be used, or the
  ///   setting that does not fit the others (a listener without client authentication off
  ///   loopback, a missing CA).
  /// - Parameter servesInheritedSocket: A socket systemd passed is served too, even without
  ///   `tls.listen` addresses.
  package init(_ settings: TLSSettings, servesInheritedSocket: Bool = false) throws(ServerError) {
    self.servesInheritedSocket = servesInheritedSocket
    self.current = Mutex(try Self.context(settings, servesInheritedSocket: servesInheritedSocket))
  }

  /// The context the next handshake uses.
  var context: NIOSSLContext { self.current.withLock { $0 } }

  /// Reads the certificates, key and CA again; on failure the running context stays.
  package func reload(_ settings: TLSSettings) throws(ServerError) {
    let context = try Self.context(settings, servesInheritedSocket: self.servesInheritedSocket)
    self.current.withLock { $0 = context }
  }

  private static func context(_ settings: TLSSettings, servesInheritedSocket: Bool) throws(ServerError) -> NIOSSLContext {
    if let problem = settings.problem(servingInheritedSocket: servesInheritedSocket) { throw .cannotLoadTLS(problem.key, TLSSettings.Problem(description: problem.sentence)) }
    let chain: [NIOSSLCertificate]
    let key: NIOSSLPrivateKey
    do {
      chain = try NIOSSLCertificate.fromPEMFile(settings.certificate)
    } catch {
      throw .cannotLoadTLS(settings.certificate, error)
    }
    do {
      key = try NIOSSLPrivateKey(file: settings.key, format: .pem)
    } catch {
      throw .cannotLoadTLS(settings.key, error)
    }
    var configuration = TLSConfiguration.makeServerConfiguration(
      certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key)
    )
    configuration.minimumTLSVersion = settings.minimumVersion == .tls13 ? .tlsv13 : .tlsv12
    switch settings.clientAuthentication {
    case .required:
      do {
        configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(settings.certificateAuthority))
      } catch {
        throw .cannotLoadTLS(settings.certificateAuthority, error)
      }
      // Verified against the CA, without a host name: a client's name is its identity, not where it is.
      configuration.certificateVerification = .noHostnameVerification
    case .none:
      configuration.certificateVerification = .none
    }
    do {
      return try NIOSSLContext(configuration: configuration)
    } catch {
      throw .cannotLoadTLS(settings.certificate, error)
    }
  }
}
