import SwitchyardVarlink
import Testing

/// Varlink's address syntax, as `tls.listen`, `--address` and `SWITCHYARD_ADDRESS` take it.
@Suite struct VarlinkAddressTests {
  @Test func unixAndTCPAddressesAndBarePaths() throws {
    #expect(try VarlinkAddress(parsing: "unix:/run/switchyard.sock") == .unix(path: "/run/switchyard.sock"))
    #expect(try VarlinkAddress(parsing: "unix:/run/x.sock;mode=0600") == .unix(path: "/run/x.sock"))
    #expect(try VarlinkAddress(parsing: "run/switchyard.sock") == .unix(path: "run/switchyard.sock"))
    #expect(try VarlinkAddress(parsing: "tcp:127.0.0.1:7501") == .tcp(host: "127.0.0.1", port: 7501))
    #expect(try VarlinkAddress(parsing: "tcp:[::1]:7501") == .tcp(host: "::1", port: 7501))
    #expect(try VarlinkAddress(parsing: "tcp:db1.example.org:7501").description == "tcp:db1.example.org:7501")
    #expect(VarlinkAddress.tcp(host: "::1", port: 1).description == "tcp:[::1]:1")
  }

  @Test(arguments: ["tcp:host", "tcp::7501", "tcp:h:0", "tcp:h:65536", "tcp:h:x", "unix:", "", "ssh:host", "run/a:b"])
  func invalidAddressesAreRefused(_ text: String) {
    #expect(throws: VarlinkAddress.Invalid.self) { try VarlinkAddress(parsing: text) }
  }

  @Test func loopbackIsTheUnixSocketAndLoopbackHosts() throws {
    for text in ["unix:/x", "tcp:127.0.0.1:1", "tcp:127.9.9.9:1", "tcp:[::1]:1", "tcp:localhost:1"] {
      #expect(try VarlinkAddress(parsing: text).isLoopback, "\(text)")
    }
    for text in ["tcp:0.0.0.0:1", "tcp:10.0.0.1:1", "tcp:[::]:1", "tcp:example.org:1"] {
      #expect(try !VarlinkAddress(parsing: text).isLoopback, "\(text)")
    }
  }
}
