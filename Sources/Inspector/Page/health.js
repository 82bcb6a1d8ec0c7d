// How the daemon is doing, from the same figures `switchyard status`, `top` and `metrics` read
// (Status, Describe, the Prometheus text): features and their isolation, workers and their
// memory, reduce time percentiles over the last interval, clients, durability, and actions per
// second over the last two minutes as a small chart.

import { element, get, metrics } from './api.js';

const interval = 2000;
const samples = 60;

export class Health {
  constructor() {
    this.rates = [];
    this.previous = null;
    this.features = new Map();
  }

  /** Reads the health once; `onFeatures` gets the features the first time. */
  async refresh() {
    const health = await get('/inspector/api/health');
    const status = health.status;
    const now = performance.now();
    if (this.previous) {
      const seconds = (now - this.previous.at) / 1000;
      this.rates.push(Math.max(0, (status.actions - this.previous.actions) / seconds));
      if (this.rates.length > samples) this.rates.shift();
    }
    this.previous = { at: now, actions: status.actions };
    this.features = new Map((health.features ?? []).map((feature) => [feature.name, feature.state]));
    const figures = await metrics().catch(() => null);
    this.render(health, figures ? this.perFeature(figures) : new Map());
    return health;
  }

  /** Per feature: its worker's memory, and its reduce time's p50 and p99 since the last read. */
  perFeature(figures) {
    const result = new Map();
    for (const { labels, value } of figures.switchyard_worker_resident_memory_bytes ?? []) {
      result.set(labels.feature, { memory: value });
    }
    const buckets = new Map();
    for (const { labels, value } of figures.switchyard_reduce_duration_seconds_bucket ?? []) {
      if (!buckets.has(labels.feature)) buckets.set(labels.feature, []);
      buckets.get(labels.feature).push([Number(labels.le), value]);
    }
    for (const [feature, cumulative] of buckets) {
      cumulative.sort((a, b) => a[0] - b[0]);
      const before = this.buckets?.get(feature);
      const counts = cumulative.map(([le, count], index) => [le, count - (before?.[index]?.[1] ?? 0)]);
      const total = counts.at(-1)?.[1] ?? 0;
      const quantile = (q) => total > 0 ? counts.find(([, count]) => count >= q * total)?.[0] : undefined;
      result.set(feature, { ...result.get(feature), p50: quantile(0.5), p99: quantile(0.99) });
    }
    this.buckets = buckets;
    return result;
  }

  start() {
    setInterval(() => this.refresh().catch(() => {}), interval);
  }

  render({ status, features = [] }, figures) {
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
        element('td', { class: 'memory', text: memory(figures.get(feature.name)?.memory) }),
        element('td', { class: 'latency', text: latency(figures.get(feature.name)) }));
    });
    document.querySelector('#features tbody').replaceChildren(...rows);
    const durability = status.durability ?? {};
    const facts = [
      ['up', `${Math.round(status.uptime)} s`],
      ['seq', status.seq],
      ['actions', status.actions],
      ['connections', status.connections],
      ['subscribers', status.subscribers],
      ['durability', durability.mode ?? 'off'],
      ['journal', durability.journal ?? '(none)'],
      ['state directory', durability.directory ?? '(none)'],
    ];
    if (durability.unavailable) facts.push(['journal unavailable', durability.unavailable]);
    document.getElementById('daemon').replaceChildren(...facts.flatMap(([name, value]) => [
      element('dt', { text: name }), element('dd', { text: String(value) })]));
    this.chart();
  }

  chart() {
    const svg = document.getElementById('rate-chart');
    const namespace = 'http://www.w3.org/2000/svg';
    const top = Math.max(1, ...this.rates);
    const points = this.rates.map((rate, index) =>
      `${(600 * (index + samples - this.rates.length)) / (samples - 1)},${115 - (105 * rate) / top}`).join(' ');
    const line = document.createElementNS(namespace, 'polyline');
    line.setAttribute('points', points);
    const axis = document.createElementNS(namespace, 'line');
    for (const [key, value] of Object.entries({ x1: 0, y1: 115, x2: 600, y2: 115 })) axis.setAttribute(key, value);
    svg.replaceChildren(axis, line);
    // The scale is said in text: the chart stretches to its box, and text in it would too.
    const now = this.rates.at(-1);
    document.getElementById('rate-now').textContent = now === undefined ? 'measuring…'
      : `${now.toFixed(1)} actions/s now; the chart's top is ${top.toFixed(top < 10 ? 1 : 0)}/s, over the last ${this.rates.length * 2} s`;
  }
}

function memory(bytes) {
  return bytes ? `${(bytes / (1 << 20)).toFixed(1)} MiB` : '';
}

/** A bucket's upper bound, as the reduce time is known to be under it. */
function latency(figures) {
  if (figures?.p50 === undefined) return '';
  const text = (seconds) => seconds === Infinity ? '∞' : seconds < 0.001 ? `${Math.round(seconds * 1e6)} µs` : `${(seconds * 1000).toFixed(1)} ms`;
  return `≤ ${text(figures.p50)} / ≤ ${text(figures.p99)}`;
}
