import SwitchyardPostgresJournal
import Testing

/// `PostgresJournal.answer(within:orThrow:_:)`: the answer when it comes in time, the error at
/// the limit when it does not, however the two race.
@Suite(.serialized) struct DeadlineTests {
  private struct Late: Error {}

  @Test func anAnswerGivenInTimeIsNeverTakenForALateOne() async throws {
    // Many at once, on every thread of the pool: the answer and the timer's waking race.
    let answers = try await withThrowingTaskGroup(of: Int.self) { group in
      for value in 0..<20_000 {
        group.addTask { try await PostgresJournal.answer(within: .seconds(30), orThrow: { Late() }) { value } }
      }
      return try await group.reduce(into: 0) { count, _ in count += 1 }
    }
    #expect(answers == 20_000)
  }

  @Test func aBodyThatDoesNotAnswerFailsAtTheLimitNotWhenItEnds() async throws {
    let start = ContinuousClock.now
    await #expect(throws: Late.self) {
      try await PostgresJournal.answer(within: .milliseconds(50), orThrow: { Late() }) {
        try await Task.sleep(for: .seconds(3600))
      }
    }
    // The bound tells the limit from the body's hour, not how late a loaded pool ran the timer
    // (11 s once, beside the whole suite).
    #expect(ContinuousClock.now - start < .seconds(600), "at the limit, not when the body ends")
  }
}
