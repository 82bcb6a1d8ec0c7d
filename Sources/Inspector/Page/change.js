// One change: its cause, its JSON Patch as a readable diff, and its feature's state before and
// after it, as a tree; step buttons move to the change before or after.

import { brief, element, get, pathName, reduceTime, valueAt } from './api.js';
import { renderTree } from './tree.js';

export class ChangeView {
  constructor({ features, filter, onMove }) {
    this.features = features;
    this.filter = filter;
    this.onMove = onMove;
    this.side = 'after';
    this.panel = document.getElementById('change');
    document.getElementById('step-back').addEventListener('click', () => this.step(-1));
    document.getElementById('step-forward').addEventListener('click', () => this.step(1));
    document.getElementById('state-before').addEventListener('click', () => this.showSide('before'));
    document.getElementById('state-after').addEventListener('click', () => this.showSide('after'));
  }

  /** Shows the change numbered `seq` (its entry when the timeline has it). */
  async show(seq, entry) {
    if (!entry || entry.seq !== seq) {
      const page = await get('/inspector/api/journal', { before: seq + 1, limit: 1 });
      entry = page.entries.find((candidate) => candidate.seq === seq);
      if (!entry) return this.fail(`the journal holds no change ${seq}`);
    }
    this.entry = entry;
    const pointer = this.features().get(entry.feature) ?? '';
    this.pointer = pointer;
    document.getElementById('change-none').hidden = true;
    this.panel.hidden = false;
    document.getElementById('change-title').textContent = `seq ${entry.seq} · ${entry.feature ?? '?'} · ${entry.case || 'action not known'}`;
    const when = new Date(entry.time * 1000).toISOString();
    const who = entry.certificate !== undefined ? ` from certificate ${entry.certificate}`
      : entry.uid !== undefined ? ` from uid ${entry.uid}, pid ${entry.pid}` : '';
    const took = reduceTime(entry) ? `, reduced in ${reduceTime(entry)}` : '';
    document.getElementById('change-cause').textContent = `${entry.origin ?? 'cause not known'}${who}, ${when}${took}`;
    document.getElementById('change-action').textContent = entry.action === undefined ? '(action not known)' : JSON.stringify(entry.action);
    document.getElementById('state-feature').textContent = entry.feature ?? 'the application';
    const [before, after] = await Promise.all([
      entry.seq > 0 ? get('/inspector/api/state', { at: entry.seq - 1, path: pointer }).catch((error) => ({ error })) : { state: undefined },
      get('/inspector/api/state', { at: entry.seq, path: pointer }).catch((error) => ({ error })),
    ]);
    if (this.entry !== entry) return;
    this.states = { before, after };
    this.renderDiff(entry.patch, before.state);
    this.showSide(this.side);
  }

  renderDiff(patch, before) {
    const list = document.getElementById('diff');
    list.replaceChildren();
    for (const operation of patch) {
      const relative = operation.path.startsWith(this.pointer) ? operation.path.slice(this.pointer.length) : null;
      const old = relative === null ? undefined : valueAt(before, relative);
      const item = element('li', { class: `op op-${operation.op}`, 'data-path': operation.path },
        element('span', { class: 'kind', text: operation.op }),
        element('span', { class: 'path', text: pathName(operation.path) }), ' ');
      switch (operation.op) {
        case 'add':
          item.append(element('span', { class: 'new', text: brief(operation.value) }));
          break;
        case 'remove':
          item.append(element('span', { class: 'old', text: brief(old) }));
          break;
        case 'replace':
          item.append(element('span', { class: 'old', text: brief(old) }), ' → ', element('span', { class: 'new', text: brief(operation.value) }));
          break;
        default:
          item.append(element('span', { text: `from ${pathName(operation.from ?? '')}` }));
      }
      list.append(item);
    }
  }

  showSide(side) {
    this.side = side;
    document.getElementById('state-before').classList.toggle('selected', side === 'before');
    document.getElementById('state-after').classList.toggle('selected', side === 'after');
    const state = this.states?.[side];
    const seq = side === 'before' ? this.entry.seq - 1 : this.entry.seq;
    document.getElementById('state-seq').textContent = String(seq);
    const tree = document.getElementById('state-tree');
    if (!state || state.error) {
      tree.replaceChildren(element('p', { class: 'muted', text: state?.error?.message ?? 'no state before the first change' }));
      return;
    }
    const changed = new Set(this.entry.patch.map((operation) => operation.path));
    renderTree(tree, state.state, this.pointer, changed, (text) => this.copy(text));
  }

  /** The change before (-1) or after (+1) this one, of the timeline's feature when it has one. */
  async step(direction) {
    if (!this.entry) return;
    const { feature } = this.filter();
    const params = direction < 0 ? { before: this.entry.seq, limit: 1, feature } : { after: this.entry.seq, limit: 1, feature };
    const page = await get('/inspector/api/journal', params);
    const entry = page.entries[0];
    if (entry) this.onMove(entry.seq, entry);
  }

  copy(text) {
    const note = document.getElementById('copied');
    note.hidden = false;
    note.textContent = text;
    navigator.clipboard?.writeText(text).then(() => { note.textContent = `copied: ${text}`; }, () => {});
  }

  fail(message) {
    document.getElementById('change-none').hidden = false;
    document.getElementById('change-none').textContent = message;
    this.panel.hidden = true;
  }
}
