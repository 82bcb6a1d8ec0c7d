// How the daemon is doing, from the same Status and Describe replies `switchyard status` and
// `top` read: features and their isolation, workers, clients, durability, and actions per
// second over the last two minutes as a small chart.

import { element, get } from './api.js';

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
    this.render(health);
    return health;
  }

  start() {
    setInterval(() => this.refresh().catch(() => {}), interval);
  }

  render({ status, features = [] }) {
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
        element('td', { text: worker?.lastExit ?? '' }));
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
    const label = document.createElementNS(namespace, 'text');
    label.setAttribute('x', 4);
    label.setAttribute('y', 12);
    label.textContent = `${top.toFixed(top < 10 ? 1 : 0)}/s`;
    svg.replaceChildren(axis, line, label);
    const now = this.rates.at(-1);
    document.getElementById('rate-now').textContent =
      now === undefined ? 'measuring…' : `${now.toFixed(1)} actions/s now, over the last ${this.rates.length * 2} s`;
  }
}
