import SwitchyardChangeFeed
import SwitchyardTestSupport

extension Subscriber {
  /// The next item, one at a time: how a test reads a subscriber no connection delivers.
  func next() async -> Item {
    await polled { self.take(limit: 1).first }
  }
}
