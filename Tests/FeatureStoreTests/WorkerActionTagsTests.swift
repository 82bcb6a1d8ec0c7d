import SwitchyardJSON
import SwitchyardWorkers
import Testing

@testable import SwitchyardFeatureStore

/// What a worker sends the daemon about the action it reduces: an effect's action sent while
/// an action reduces waits for that action's answer, so the daemon numbers the change before
/// whatever the effect causes (a favorite saved in `primes`, then the activity feed's entry).
struct WorkerActionTagsTests {
  let tags = WorkerActionTags(page: InProgressPage(fd: -1))

  @Test func anEffectsActionSentWhileAnActionReducesComesAfterItsAnswer() {
    self.tags.queue(7)
    self.tags.begin()
    #expect(self.tags.hold(effect: ["favoritesChanged": ["added": [5]]]))
    let answer = self.tags.finish()
    #expect(answer.effects == [["favoritesChanged": ["added": [5]]]], "handed over with the answer, to send after it")
    #expect(self.tags.finish().effects == [], "and only once")
  }

  @Test func anEffectsActionSentBetweenActionsGoesAtOnce() {
    #expect(!self.tags.hold(effect: ["tick": [:]]))
    self.tags.queue(1)
    self.tags.begin()
    _ = self.tags.finish()
    #expect(!self.tags.hold(effect: ["tick": [:]]))
  }
}
