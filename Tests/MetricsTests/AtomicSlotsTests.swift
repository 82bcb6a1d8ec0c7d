import SwitchyardSynchronization
import Testing

@testable import SwitchyardMetrics

private final class Made: Sendable {
  let index: Int
  init(_ index: Int) { self.index = index }
}

private final class MakeCount: Sendable {
  let value = Atomic<Int>(0)
}

/// The slots the call counters are found in: each made once, whoever asks first.
struct AtomicSlotsTests {
  @Test func aSlotIsMadeOnceAndKeptEvenWhenManyThreadsAskAtOnce() async {
    let slots = AtomicSlots<Made>(count: 4)
    let made = MakeCount()
    let seen = await withTaskGroup(of: ObjectIdentifier.self) { group in
      for _ in 0..<16 {
        group.addTask {
          ObjectIdentifier(slots.value(at: 2) { made.value.add(1, ordering: .relaxed); return Made(2) })
        }
      }
      return await Set(group)
    }
    #expect(seen.count == 1, "every caller got the object that was stored")
    #expect(made.value.load(ordering: .relaxed) >= 1)
    #expect(slots.existing(at: 2)?.index == 2)
    #expect(slots.existing(at: 1) == nil)
  }

  @Test func theSlotsReleaseWhatTheyHoldWhenTheyGo() {
    weak var held: Made?
    do {
      let slots = AtomicSlots<Made>(count: 1)
      held = slots.value(at: 0) { Made(0) }
      #expect(held != nil)
    }
    #expect(held == nil)
  }
}
