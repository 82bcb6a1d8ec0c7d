@testable import SwitchyardDaemon

extension Subscriber {
  /// The next item, one at a time: how a test reads a subscriber no connection delivers.
  func next() async -> Item {
    while true {
      if let item = self.take(limit: 1).first { return item }
      try? await Task.sleep(for: .milliseconds(1))
    }
  }
}
