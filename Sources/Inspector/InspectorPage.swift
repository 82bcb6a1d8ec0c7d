import NIOCore
import SwitchyardMetrics

/// The page's files, compiled into the binary (SwiftPM's `embedInCode` resources): plain HTML,
/// CSS and JavaScript modules, no third-party code, nothing to build.
enum InspectorPage {
  /// The page's only sources are its own files: no inline script, nothing from elsewhere.
  static var contentSecurityPolicy: String {
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
  }

  /// The files under `/inspector/assets/`, by name, with their types.
  static let assets: [Substring: (type: String, bytes: [UInt8])] = [
    "inspector.css": ("text/css; charset=utf-8", PackageResources.inspector_css),
    "app.js": ("text/javascript; charset=utf-8", PackageResources.app_js),
    "api.js": ("text/javascript; charset=utf-8", PackageResources.api_js),
    "timeline.js": ("text/javascript; charset=utf-8", PackageResources.timeline_js),
    "change.js": ("text/javascript; charset=utf-8", PackageResources.change_js),
    "tree.js": ("text/javascript; charset=utf-8", PackageResources.tree_js),
    "health.js": ("text/javascript; charset=utf-8", PackageResources.health_js),
    "chart.js": ("text/javascript; charset=utf-8", PackageResources.chart_js),
    "replay.js": ("text/javascript; charset=utf-8", PackageResources.replay_js),
    "send.js": ("text/javascript; charset=utf-8", PackageResources.send_js),
    "icon.svg": ("image/svg+xml", PackageResources.icon_svg),
  ]

  static func servePage(on exchange: HTTPExchange) {
    exchange.respond(
      .ok, contentType: "text/html; charset=utf-8", body: ByteBuffer(bytes: PackageResources.index_html),
      headers: [("Content-Security-Policy", Self.contentSecurityPolicy), ("X-Frame-Options", "DENY")]
    )
  }

  static func serveAsset(named name: Substring, on exchange: HTTPExchange) {
    guard let asset = Self.assets[name] else {
      return exchange.respond(.notFound, body: "not found: no such file of the inspector\n")
    }
    exchange.respond(.ok, contentType: asset.type, body: ByteBuffer(bytes: asset.bytes))
  }
}
