import Foundation
import SwitchyardRuntime
import SwitchyardTestSupport
import Testing
@testable import SwitchyardSystemd

#if canImport(Glibc)
  import Glibc
#endif

/// systemd's file descriptor store, through a datagram socket standing in for `NOTIFY_SOCKET`:
/// the messages, and the descriptors they carry (`SCM_RIGHTS`), as systemd receives them.
@Suite(.serialized) struct FileDescriptorStoreTests {
  @Test func aStoredSocketArrivesWithItsNameAndKeepsItsPeerConnected() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let store = try #require(FileDescriptorStore(notifySocket: notify.path, capacity: 8))
    let (ours, peer) = try socketPair()
    defer { close(peer) }
    let name = try #require(StoredDescriptors.connectionName(of: ours))
    #expect(name.hasPrefix("conn-"))
    #expect(store.store(ours, name: name))

    let message = try #require(await notify.receive(timeout: .seconds(5)))
    #expect(message.fields["FDSTORE"] == "1")
    #expect(message.fields["FDNAME"] == name)
    #expect(message.descriptors.count == 1)
    let kept = try #require(message.descriptors.first)
    #expect(StoredDescriptors.connectionName(of: kept) == name, "the same socket: same device and inode")

    close(ours)
    #expect(!hasHungUp(peer), "the store's copy keeps the connection open when this process's closes")
    close(kept)
    #expect(hasHungUp(peer), "once the last copy is closed, the peer sees the end")
  }

  @Test func removingNamesWhatToDrop() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let store = try #require(FileDescriptorStore(notifySocket: notify.path, capacity: 8))
    #expect(store.remove(name: "conn-1-2"))
    let message = try #require(await notify.receive(timeout: .seconds(5)))
    #expect(message.text == "FDSTOREREMOVE=1\nFDNAME=conn-1-2")
    #expect(message.descriptors.isEmpty)
  }

  @Test func contentsGoInAMemoryFileThatReadsBackWhole() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let store = try #require(FileDescriptorStore(notifySocket: notify.path, capacity: 8))
    let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    #expect(store.store(contents: bytes, name: StoredDescriptors.stateName))
    let message = try #require(await notify.receive(timeout: .seconds(5)))
    #expect(message.fields["FDNAME"] == StoredDescriptors.stateName)
    #expect(message.fields["FDPOLL"] == "0", "a memory file has nothing to poll: systemd must not watch it")
    let fd = try #require(message.descriptors.first)
    defer { close(fd) }
    #expect(StoredDescriptors.contents(of: fd) == bytes)
  }

  @Test func theStoreIsOnOnlyUnderAServiceManagerThatSizedIt() {
    #expect(FileDescriptorStore(environment: [:]) == nil)
    #expect(FileDescriptorStore(environment: ["NOTIFY_SOCKET": "@x"]) == nil, "FileDescriptorStoreMax= unset: nothing is kept")
    #expect(FileDescriptorStore(environment: ["SWITCHYARD_FDSTORE": "16"]) == nil, "no service manager")
    #expect(FileDescriptorStore(environment: ["NOTIFY_SOCKET": "@x", "SWITCHYARD_FDSTORE": "0"]) == nil)
    #expect(FileDescriptorStore(environment: ["NOTIFY_SOCKET": "@x", "SWITCHYARD_FDSTORE": "16"])?.capacity == 16)
  }

  @Test func passedDescriptorsAreSortedIntoConnectionsAndState() throws {
    var stored = StoredDescriptors()
    let (first, second) = try socketPair()
    let name = try #require(StoredDescriptors.connectionName(of: first))
    let keptConnection = stored.keep(first, name: name)
    let keptListener = stored.keep(second, name: "varlink")
    #expect(keptConnection)
    #expect(!keptListener, "a socket unit's descriptor is not the store's")
    #expect(stored.connections == [name: first])
    #expect(stored.state == nil, "no state: the previous process did not hand over (a crash)")
    stored.closeAll()
    close(second)
  }

  @Test func underAConnectionsNameOnlyAConnectedUnixStreamSocketIsKept() throws {
    var stored = StoredDescriptors()
    var ends: [CInt] = [0, 0]
    #expect(pipe(&ends) == 0)
    var datagrams: [CInt] = [0, 0]
    #expect(socketpair(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0, &datagrams) == 0)
    let listening = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    // An abstract address: nothing to remove afterwards.
    withUnsafeMutableBytes(of: &address.sun_path) { path in
      for (index, byte) in Array("\0switchyard-store-test-\(getpid())".utf8).enumerated() { path[index] = byte }
    }
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    #expect(bound == 0 && listen(listening, 1) == 0)
    let (connected, peer) = try socketPair()
    let others = [(ends[0], "a pipe"), (datagrams[0], "a datagram socket"), (listening, "a listening socket")]
    for (fd, what) in others + [(connected, "a connection")] {
      let taken = stored.keep(fd, name: "conn-\(fd)")
      #expect(taken, "\(what) under a connection's name is taken")
    }
    let checked = stored.checked()
    for (fd, what) in others {
      #expect(fcntl(fd, F_GETFD) == -1, "\(what) is closed")
    }
    #expect(checked.connections == ["conn-\(connected)": connected], "only the connected stream socket is kept")
    checked.closeAll()
    close(peer)
    close(ends[1])
    close(datagrams[1])
  }

  // MARK: Helpers

  private func socketPair() throws -> (CInt, CInt) {
    var fds: [CInt] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
    return (fds[0], fds[1])
  }

  /// Whether the other end of `fd` is closed: a read would return end of file.
  private func hasHungUp(_ fd: CInt) -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    guard poll(&poller, 1, 100) == 1 else { return false }
    var byte: UInt8 = 0
    return recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) == 0
  }
}

/// The daemon keeps every connection it admits in the store, and drops it there when it closes.
@Suite(.serialized) struct StoredConnectionTests {
  @Test func eachConnectionIsStoredAsItIsAdmittedAndRemovedAsItCloses() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path, "SWITCHYARD_FDSTORE": "16"])
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    var client: VarlinkTestClient? = try VarlinkTestClient(path: daemon.socketPath)
    #expect(try client?.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    let stored = try #require(await notify.receive(until: { $0.fields["FDSTORE"] == "1" }))
    let name = try #require(stored.last?.fields["FDNAME"])
    #expect(name.hasPrefix("conn-"))
    for fd in stored.flatMap(\.descriptors) { close(fd) }
    client = nil
    #expect(
      await notify.receive(until: { $0.fields["FDSTOREREMOVE"] == "1" && $0.fields["FDNAME"] == name }) != nil,
      "a connection closed is removed: its copy in the store would keep it open"
    )
    _ = client
    #expect(await daemon.terminate() == 0)
  }

  @Test func aFullStoreRefusesTheConnectionsPastIt() async throws {
    let notify = try NotifySocket(path: temporaryPath("notify"))
    // Room for the state and two connections.
    let daemon = try await DaemonProcess(environment: ["NOTIFY_SOCKET": notify.path, "SWITCHYARD_FDSTORE": "3"])
    _ = try #require(await notify.receive(until: { $0.fields["READY"] == "1" }))
    // The probe that saw the daemon listen may still hold a place for a moment.
    var first: VarlinkTestClient?
    try await eventually {
      first = try VarlinkTestClient(path: daemon.socketPath)
      return (try? first?.call("io.switchyard.Store.Status")["connections"]) == 1
    }
    let second = try VarlinkTestClient(path: daemon.socketPath)
    #expect(try second.call("io.switchyard.Store.Get", ["path": "/primes/count"])["state"] == 0)
    let third = try VarlinkTestClient(path: daemon.socketPath)
    #expect(try third.read()?["error"] == "io.switchyard.Store.TooManyConnections")
    _ = first
    #expect(await daemon.terminate() == 0)
    #expect(daemon.log.contains("the file descriptor store is full"))
  }
}
