// How the daemon is doing, from the same figures `switchyard status`, `top` and `metrics` read
// (Status, Describe, the Prometheus text): features and their isolation, workers and their
// memory, subscribers per path, clients, durability, and live charts over the last minutes of
// actions per second, reduction latency (p50, p99) and how far behind subscribers are.

import { Chart } from './chart.js';
import { element, get, metrics } from './api.js';

const interval = 2000;
// Five minutes of samples, each chart's ring bounded by it.
const samples = 150;

export class Health {
  constructor() {
    this.previous = null;
    this.features = new Map();
    this.rate = new Chart(document.getElementById('rate-chart'), ['rate'], samples);
    this.latency = new Chart(document.getElementById('latency-chart'), ['p50', 'p99'], samples);
    this.lag = new Chart(document.getElementById('lag-chart'), ['deepest'], samples);
  }

  /** Reads the health once. */
  async refresh() {
    const health = await get('/inspector/api/health');
    const status = health.status;
    const now = performance.now();
    let rate;
    if (this.previous) rate = Math.max(0, (status.actions - this.previous.actions) / ((now - this.previous.at) / 1000));
    this.previous = { at: now, actions: status.actions };
    this.features = new Map((health.features ?? []).map((feature) => [feature.name, feature.state]));
    const figures = await metrics().catch(() => null);
    const latencies = figures ? this.latencies(figures) : { perFeature: new Map(), all: {} };
    this.render(health, figures, latencies.perFeature);
    if (rate !== undefined) this.chart(rate, latencies.all, figures);
    return health;
  }

  /** The reduce time's p50 and p99 since the last read: per feature and over all of them. */
  latencies(figures) {
    const buckets = new Map();
    for (const { labels, value } of figures.switchyard_reduce_duration_seconds_bucket ?? []) {
      if (!buckets.has(labels.feature)) buckets.set(labels.feature, []);
      buckets.get(labels.feature).push([Number(labels.le), value]);
    }
    const perFeature = new Map();
    const all = new Map();
    for (const [feature, cumulative] of buckets) {
      cumulative.sort((a, b) => a[0] - b[0]);
      const before = this.buckets?.get(feature);
      const counts = cumulative.map(([le, count], index) => [le, count - (before?.[index]?.[1] ?? 0)]);
      for (const [le, count] of counts) all.set(le, (all.get(le) ?? 0) + count);
      perFeature.set(feature, percentiles(counts));
    }
    this.buckets = buckets;
    return { perFeature, all: percentiles([...all].sort((a, b) => a[0] - b[0])) };
  }

  start() {
    setInterval(() => this.refresh().catch(() => {}), interval);
  }

  render({ status, features = [], journalBytes }, figures, latencies) {
    const memory = new Map((figures?.switchyard_worker_resident_memory_bytes ?? []).map(({ labels, value }) => [labels.feature, value]));
    const workers = new Map((status.workers ?? []).map((worker) => [worker.feature, worker]));
    const rows = features.map((feature) => {
      const worker = workers.get(feature.name) ?? feature.worker;
      return element('tr', { 'data-feature': feature.name },
        element('td', { text: feature.name }),
        element('td', { text: feature.state }),
        element('td', { text: feature.isolation }),
        element('td', { class: 'pid', text: worker?.pid ?? '' }),
        element('td', { class: worker && worker.state !== 'running' ? 'bad' : '', text: worker?.state ?? '' }),
        element('td', { class: 'restarts', text: worker ? String(worker.restarts ?? 0) : '' }),
        element('td', { text: worker?.lastExit ?? '' }),
        element('td', { class: 'memory', text: mebibytes(memory.get(feature.name)) }),
        element('td', { class: 'latency', text: latency(latencies.get(feature.name)) }));
    });
    document.querySelector('#features tbody').replaceChildren(...rows);
    const paths = (figures?.switchyard_path_subscribers ?? []).map(({ labels, value }) =>
      element('tr', { 'data-path': labels.path }, element('td', { class: 'path', text: labels.path || '(the whole state)' }),
        element('td', { class: 'count', text: String(value) })));
    document.querySelector('#paths tbody').replaceChildren(...paths);
    document.getElementById('paths-none').hidden = paths.length > 0;
    const durability = status.durability ?? {};
    const facts = [
      ['up', `${Math.round(status.uptime)} s`],
      ['seq', status.seq],
      ['actions', status.actions],
      ['connections', status.connections],
      ['subscribers', status.subscribers],
      ['durability', durability.mode ?? 'off'],
      ['last sync', durability.synced !== undefined ? `seq ${durability.synced}` : '(none)'],
      ['history', durability.journal ?? '(none)'],
      ['journal size', journalBytes !== undefined ? mebibytes(journalBytes) : '(none)'],
      ['state directory', durability.directory ?? '(none)'],
    ];
    if (durability.unavailable) facts.push(['journal unavailable', durability.unavailable]);
    document.getElementById('daemon').replaceChildren(...facts.flatMap(([name, value]) => [
      element('dt', { text: name }), element('dd', { 'data-fact': name, text: String(value) })]));
  }

  chart(rate, latencies, figures) {
    const seconds = (chart) => chart.length * interval / 1000;
    const rateTop = this.rate.push({ rate });
    document.getElementById('rate-now').textContent =
      `${rate.toFixed(1)} actions/s now; the chart's top is ${rateTop.toFixed(rateTop < 10 ? 1 : 0)}/s, over the last ${seconds(this.rate)} s`;
    const finite = (value) => (Number.isFinite(value) ? value : undefined);
    const latencyTop = this.latency.push({ p50: finite(latencies.p50), p99: finite(latencies.p99) });
    document.getElementById('latency-now').textContent = latencies.p50 === undefined
      ? `no reduction in the last ${interval / 1000} s; over the last ${seconds(this.latency)} s`
      : `p50 ≤ ${duration(latencies.p50)}, p99 ≤ ${duration(latencies.p99)} now; the chart's top is ${duration(latencyTop)}, over the last ${seconds(this.latency)} s`;
    const deepest = figures?.switchyard_subscriber_queue_depth_max?.[0]?.value ?? 0;
    const queued = figures?.switchyard_subscriber_queued_changes?.[0]?.value ?? 0;
    const lagTop = this.lag.push({ deepest });
    document.getElementById('lag-now').textContent =
      `${deepest} changes behind in the longest queue, ${queued} queued in all; the chart's top is ${lagTop}, over the last ${seconds(this.lag)} s`;
  }
}

/** p50 and p99 of cumulative bucket counts `[[le, count]]`: the bound each is known to be under. */
function percentiles(counts) {
  const total = counts.at(-1)?.[1] ?? 0;
  const quantile = (q) => total > 0 ? counts.find(([, count]) => count >= q * total)?.[0] : undefined;
  return { p50: quantile(0.5), p99: quantile(0.99) };
}

function mebibytes(bytes) {
  return bytes ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : '';
}

function duration(seconds) {
  return seconds === Infinity ? '∞' : seconds < 0.001 ? `${Math.round(seconds * 1e6)} µs` : `${(seconds * 1000).toFixed(1)} ms`;
}

/** A bucket's upper bound, as the reduce time is known to be under it. */
function latency(figures) {
  if (figures?.p50 === undefined) return '';
  return `≤ ${duration(figures.p50)} / ≤ ${duration(figures.p99)}`;
}
