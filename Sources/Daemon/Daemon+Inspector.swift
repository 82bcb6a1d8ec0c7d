import NIOCore
import SwitchyardAccess
import SwitchyardInspector
import SwitchyardJSON
import SwitchyardMetrics
import SwitchyardSynchronization

#if canImport(Glibc)
  import Glibc
#endif

extension Daemon {
  /// Mounts the inspector on the HTTP endpoint, when it is on and `http.inspector` lets it be
  /// served on its address, with a token made now; `Status` gives its URL to the callers who
  /// may read the journal.
  func serveInspector(on endpoint: ListeningMetricsServer?, responder: StoreResponder) {
    guard let endpoint, let address = self.configuration.metricsListen, let port = endpoint.localAddress?.port else {
      return
    }
    switch self.configuration.metrics.inspector {
    case .off: return
    case .loopback where !address.isLoopback:
      // Its token would cross the network in the clear.
      self.logger.notice(
        "the inspector is served on a loopback address only: set http.inspector to any to serve it here",
        metadata: ["address": "\(address)"]
      )
      return
    case .loopback, .any: break
    }
    let token = InspectorToken()
    // A journal's location is its database file when it has one (SQLite), with the WAL beside it.
    let journalFile = responder.journalReader?.journal.location
    let health: @Sendable () -> JSONValue = {
      var health: JSONObject = [
        "status": .object(responder.status()), "features": responder.describe(grants: Grants())["features"] ?? .array([]),
      ]
      if let journalFile, let bytes = Self.fileBytes(journalFile, "\(journalFile)-wal") { health["journalBytes"] = .int(Int64(bytes)) }
      return .object(health)
    }
    let state: @Sendable (JSONPointer) -> (seq: UInt64, value: JSONValue)? = { responder.changeLog.get($0) }
    var reads = Inspector.Reads(journal: responder.journalReader, health: health, state: state)
    let configuration = responder.configuration
    reads.send = responder.inspectorSend { configuration.value.metrics.inspectorSend == .on }
    if let reader = responder.journalReader {
      let replay = responder.replay
      reads.replay = { since, until, isWanted in .object(try await replay(reader, since, until, isWanted)) }
    }
    endpoint.mounts.mount(Inspector(token: token, reads: reads), at: Inspector.path)
    // An address every interface answers on is reached at loopback from here.
    let host =
      switch address.host {
      case "0.0.0.0", "": "127.0.0.1"
      case "::": "[::1]"
      case let host where host.contains(":"): "[\(host)]"
      case let host: host
      }
    let url = "http://\(host):\(port)\(Inspector.path)"
    responder.inspectorLink.set("\(url)?token=\(token)")
    // Without the token, which is for the journal's readers only: `switchyard status` gives it.
    self.logger.info("serving the inspector; `switchyard status` gives an admin its URL", metadata: ["url": "\(url)"])
  }
}

extension Daemon {
  /// The bytes of the files that exist among `paths`; `nil` when none does.
  fileprivate static func fileBytes(_ paths: String...) -> Int? {
    let sizes = paths.compactMap { path -> Int? in
      var info = stat()
      return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }
    return sizes.isEmpty ? nil : sizes.reduce(0, +)
  }
}

/// The inspector's URL, token included, once it is mounted: what `Status` tells an admin.
final class InspectorLink: Sendable {
  private let url = Mutex<String?>(nil)

  func set(_ url: String) {
    self.url.withLock { $0 = url }
  }

  var value: String? { self.url.withLock { $0 } }
}

extension StoreResponder {
  /// `Status`, with the inspector's URL and who holds each listener's connections for a caller
  /// who may read the journal, as the token in it lets the holder do.
  func status(for grants: Grants) -> JSONObject {
    var status = self.status(naming: grants.isAdmin)
    if grants.isAdmin, let url = self.inspectorLink.value { status["inspector"] = .string(url) }
    return status
  }
}
