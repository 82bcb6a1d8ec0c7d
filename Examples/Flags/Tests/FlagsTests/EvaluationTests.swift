import Testing

@testable import Flags

@Suite struct EvaluationTests {
  let flag = Flag.State(id: "beta", salt: "9f1c07aa5e3d2b11")

  @Test func theKillSwitchWinsOverEverything() {
    var flag = self.flag
    flag.release = .production(Rollout.State(percent: 100))
    flag.isEnabled = false
    for environment in Environment.allCases {
      #expect(flag.evaluate(for: "host-1", in: environment) == Evaluation(isOn: false, reason: .disabled))
    }
  }

  @Test func aFlagIsOnInTheEnvironmentsItIsReleasedTo() {
    var flag = self.flag
    flag.release = .staging
    #expect(flag.evaluate(for: "host-1", in: .development) == Evaluation(isOn: true, reason: .released(to: .staging)))
    #expect(flag.evaluate(for: "host-1", in: .staging) == Evaluation(isOn: true, reason: .released(to: .staging)))
    #expect(flag.evaluate(for: "host-1", in: .production) == Evaluation(isOn: false, reason: .notReleased(releasedTo: .staging)))
  }

  @Test func inProductionAFlagIsOnForTheSubjectsWithinItsRollout() {
    var flag = self.flag
    let subjects = (0..<1_000).map { "host-\($0)" }
    func onCount(_ percent: Int) -> Int {
      flag.release = .production(Rollout.State(percent: percent))
      return subjects.filter { flag.isOn(for: $0, in: .production) }.count
    }
    #expect(onCount(0) == 0)
    #expect(onCount(100) == 1_000)
    #expect((150...250).contains(onCount(20)))
    // Everywhere but production, a flag released to production is on for everyone.
    flag.release = .production(Rollout.State(percent: 0))
    #expect(subjects.allSatisfy { flag.isOn(for: $0, in: .staging) })
  }

  @Test func raisingARolloutKeepsEverySubjectThatWasIn() {
    var flag = self.flag
    let subjects = (0..<1_000).map { "host-\($0)" }
    flag.release = .production(Rollout.State(percent: 10))
    let atTen = Set(subjects.filter { flag.isOn(for: $0, in: .production) })
    flag.release = .production(Rollout.State(percent: 30))
    let atThirty = Set(subjects.filter { flag.isOn(for: $0, in: .production) })
    #expect(atTen.isSubset(of: atThirty))
    #expect(atThirty.count > atTen.count)
  }

  @Test func bucketsAreTheSameInEveryProcessAndEveryVersion() {
    // 64-bit FNV-1a of "salt:subject", modulo 100, as computed independently (Python); a
    // service's subjects keep their buckets across restarts and upgrades.
    #expect(bucket(of: "host-42", salt: "9f1c07aa5e3d2b11") == 79)
    #expect(bucket(of: "host-1", salt: "9f1c07aa5e3d2b11") == 0)
    #expect(bucket(of: "ada", salt: "5eed") == 72)
  }

  @Test func differentSaltsReachDifferentSubjects() {
    let subjects = (0..<2_000).map { "host-\($0)" }
    let first = Set(subjects.filter { bucket(of: $0, salt: "aaaa") < 10 })
    let second = Set(subjects.filter { bucket(of: $0, salt: "bbbb") < 10 })
    // Independent 10 % samples share about 1 % of subjects, not 10 %.
    #expect(first.intersection(second).count < 60)
  }

  @Test func theReasonReadsAsASentence() {
    #expect("\(Evaluation.Reason.rollout(bucket: 17, percent: 20))" == "bucket 17 is within the rollout's 20 %")
    #expect("\(Evaluation.Reason.rollout(bucket: 20, percent: 20))" == "bucket 20 is outside the rollout's 20 %")
    #expect("\(Evaluation.Reason.notReleased(releasedTo: .development))" == "it is released to development only")
  }
}
