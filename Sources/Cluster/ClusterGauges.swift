import CoreMetrics

/// The cluster as Prometheus gauges, beside the daemon's metrics (made by their factory):
/// whether this daemon leads, the lease's epoch, a standby's lag in changes and milliseconds,
/// and the members seen.
///
/// ```swift
/// let gauges = ClusterGauges(factory: daemon.metrics.factory)
/// // switchyard_cluster_leader 0, switchyard_cluster_lag_changes 3, …
/// ```
package struct ClusterGauges: Sendable {
  let leader: Gauge
  let epoch: Gauge
  let lagChanges: Gauge
  let lagMilliseconds: Gauge
  let members: Gauge

  package init(factory: any MetricsFactory) {
    self.leader = Gauge(label: "switchyard_cluster_leader", factory: factory)
    self.epoch = Gauge(label: "switchyard_cluster_epoch", factory: factory)
    self.lagChanges = Gauge(label: "switchyard_cluster_lag_changes", factory: factory)
    self.lagMilliseconds = Gauge(label: "switchyard_cluster_lag_milliseconds", factory: factory)
    self.members = Gauge(label: "switchyard_cluster_members", factory: factory)
  }

  func record(role: ClusterRole, epoch: Int64, lagChanges: UInt64, lagMilliseconds: Double, members: Int) {
    self.leader.record(role == .leader ? 1 : 0)
    self.epoch.record(epoch)
    self.lagChanges.record(Int64(clamping: lagChanges))
    self.lagMilliseconds.record(lagMilliseconds)
    self.members.record(members)
  }
}
