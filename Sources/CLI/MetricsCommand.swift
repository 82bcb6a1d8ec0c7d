import ArgumentParser
import SwitchyardClient

struct Metrics: AsyncParsableCommand {
  static let configuration = CommandConfiguration(
    abstract: "Print the daemon's metrics as Prometheus text.",
    discussion: """
      The same text a Prometheus server scrapes from metrics.listen, through \
      io.switchyard.Store.Metrics (the read permission):

        switchyard metrics | grep switchyard_calls_total
      """
  )

  @OptionGroup var global: GlobalOptions

  func run() async throws {
    try await self.global.withClient { client in
      writeText(try await client.metrics())
    }
  }
}
