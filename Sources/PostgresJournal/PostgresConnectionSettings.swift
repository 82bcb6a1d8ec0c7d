import Foundation
import NIOSSL
import PostgresNIO

/// Where the PostgreSQL journal is (`journal.postgresql`): a connection URL, or libpq-style
/// parameters separated by spaces. A host that starts with `/` is the directory of the server's
/// Unix socket, as with libpq.
///
/// ```swift
/// let url = try PostgresConnectionSettings(parsing: "postgresql://switchyard@db.internal/journal?sslmode=verify-full")
/// let local = try PostgresConnectionSettings(parsing: "host=/run/postgresql dbname=journal user=switchyard")
/// ```
package struct PostgresConnectionSettings: Sendable, Equatable {
  /// How the connection is secured: libpq's `sslmode`, without its `allow`.
  package enum TLSMode: String, Sendable, Equatable {
    /// Never TLS.
    case disable
    /// TLS when the server offers it, its certificate verified (the default over TCP).
    case prefer
    /// TLS or no connection, the certificate not verified (libpq's `require`).
    case require
    /// TLS or no connection, the certificate verified against the system's roots and the host.
    case verifyFull = "verify-full"
  }

  package var host: String
  package var port: Int
  package var user: String
  package var password: String?
  package var database: String?
  package var tls: TLSMode

  /// Whether `host` is the directory of a Unix socket.
  package var isUnixSocket: Bool { self.host.hasPrefix("/") }

  /// The server's Unix socket, as libpq names it in `host`'s directory.
  package var socketPath: String { self.host + "/.s.PGSQL.\(self.port)" }

  package init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String? = nil, tls: TLSMode? = nil) {
    self.host = host
    self.port = port
    self.user = user
    self.password = password
    self.database = database
    self.tls = tls ?? (host.hasPrefix("/") ? .disable : .prefer)
  }

  /// Reads `text`: `postgresql://` or `postgres://` URL, or `key=value` pairs (`host`, `port`,
  /// `user`, `password`, `dbname`, `sslmode`; a value in single quotes may hold spaces).
  package init(parsing text: String) throws {
    let parameters = text.contains("://") ? try Self.urlParameters(text) : try Self.keywordParameters(text)
    for key in parameters.keys where !Self.keys.contains(key) {
      throw PostgresConnectionSettingsError("unknown parameter \(key) in journal.postgresql (known: \(Self.keys.sorted().joined(separator: ", ")))")
    }
    let port = try parameters["port"].map { text in
      guard let port = Int(text), (1...65535).contains(port) else {
        throw PostgresConnectionSettingsError("port \(text) in journal.postgresql is no TCP port")
      }
      return port
    }
    let tls = try parameters["sslmode"].map { mode in
      // libpq's verify-ca verifies the chain; here the host is verified too.
      guard let tls = TLSMode(rawValue: mode == "verify-ca" ? "verify-full" : mode) else {
        throw PostgresConnectionSettingsError("sslmode \(mode) in journal.postgresql is not disable, prefer, require or verify-full")
      }
      return tls
    }
    self.init(
      host: parameters["host"].flatMap { $0.isEmpty ? nil : $0 } ?? "localhost", port: port ?? 5432,
      user: parameters["user"] ?? "postgres", password: parameters["password"], database: parameters["dbname"], tls: tls
    )
  }

  private static let keys: Set<String> = ["host", "port", "user", "password", "dbname", "sslmode"]

  private static func urlParameters(_ text: String) throws -> [String: String] {
    guard let components = URLComponents(string: text), ["postgresql", "postgres"].contains(components.scheme) else {
      throw PostgresConnectionSettingsError("journal.postgresql is not a postgresql:// URL")
    }
    var parameters: [String: String] = [:]
    if let host = components.percentEncodedHost?.removingPercentEncoding, !host.isEmpty { parameters["host"] = host }
    if let port = components.port { parameters["port"] = String(port) }
    if let user = components.user { parameters["user"] = user }
    if let password = components.password { parameters["password"] = password }
    let database = String(components.path.drop(while: { $0 == "/" }))
    if !database.isEmpty { parameters["dbname"] = database }
    for item in components.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
    return parameters
  }

  private static func keywordParameters(_ text: String) throws -> [String: String] {
    var parameters: [String: String] = [:]
    var rest = Substring(text)
    while true {
      rest = rest.drop(while: \.isWhitespace)
      guard !rest.isEmpty else { return parameters }
      guard let equals = rest.firstIndex(of: "=") else {
        throw PostgresConnectionSettingsError("\(rest.prefix(while: { !$0.isWhitespace })) in journal.postgresql is not key=value")
      }
      let key = String(rest[..<equals]).trimmingCharacters(in: .whitespaces)
      rest = rest[rest.index(after: equals)...]
      var value = ""
      if rest.first == "'" {
        rest = rest.dropFirst()
        while let character = rest.first, character != "'" {
          rest = rest.dropFirst()
          if character == "\\", let escaped = rest.first {
            value.append(escaped)
            rest = rest.dropFirst()
          } else {
            value.append(character)
          }
        }
        guard rest.first == "'" else { throw PostgresConnectionSettingsError("a quote of journal.postgresql is not closed") }
        rest = rest.dropFirst()
      } else {
        value = String(rest.prefix(while: { !$0.isWhitespace }))
        rest = rest.dropFirst(value.count)
      }
      parameters[key] = value
    }
  }

  /// Where the journal is, for the operator's messages: never the password.
  package var location: String {
    let database = self.database ?? self.user
    return self.isUnixSocket ? "postgresql:\(self.socketPath)/\(database)" : "postgresql://\(self.host):\(self.port)/\(database)"
  }

  /// postgres-nio's configuration, with `parameters` sent at the start of each connection.
  package func clientConfiguration(parameters: [(String, String)]) -> PostgresClient.Configuration {
    var configuration: PostgresClient.Configuration
    if self.isUnixSocket {
      configuration = .init(unixSocketPath: self.socketPath, username: self.user, password: self.password, database: self.database)
    } else {
      var verified = TLSConfiguration.makeClientConfiguration()
      verified.certificateVerification = .fullVerification
      var unverified = TLSConfiguration.makeClientConfiguration()
      unverified.certificateVerification = .none
      let tls: PostgresClient.Configuration.TLS =
        switch self.tls {
        case .disable: .disable
        case .prefer: .prefer(verified)
        case .require: .require(unverified)
        case .verifyFull: .require(verified)
        }
      configuration = .init(
        host: self.host, port: self.port, username: self.user, password: self.password, database: self.database, tls: tls
      )
    }
    configuration.options.additionalStartupParameters = parameters
    return configuration
  }
}

/// `journal.postgresql` cannot be read: the message says what is wrong in it.
package struct PostgresConnectionSettingsError: Error, CustomStringConvertible, Equatable {
  package let description: String

  init(_ description: String) {
    self.description = description
  }
}
