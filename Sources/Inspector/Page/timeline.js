// The timeline: every journaled change, newest first, following the journal live; filtered by
// feature and action case, searched by seq, paged back a page at a time.

import { element, follow, get, reduceTime } from './api.js';

const pageSize = 100;
// Rows the table keeps: past them the oldest go, and paging back brings them again.
const maximumRows = 2000;

export class Timeline {
  constructor({ onSelect }) {
    this.onSelect = onSelect;
    this.body = document.querySelector('#timeline tbody');
    this.older = document.getElementById('older');
    this.empty = document.getElementById('timeline-empty');
    this.live = document.getElementById('live');
    this.filter = { feature: '', action: '' };
    this.next = null;
    this.selected = null;
    // While a seq is searched, the table shows the changes before it, not the newest.
    this.atNewest = true;
    this.older.addEventListener('click', () => this.loadOlder());
  }

  /** The newest page, with the filter now, then new changes as they come. */
  async reload(before = null) {
    this.body.replaceChildren();
    this.atNewest = before === null;
    const page = await get('/inspector/api/journal', { ...this.filter, before, limit: pageSize });
    this.append(page.entries);
    this.next = page.next;
    this.showPaging();
    // When the rows are in, from the navigation's start: what the first-render figure reads.
    performance.mark('timeline-rows');
    if (!this.events) this.listen(page.latest);
    return page;
  }

  async loadOlder() {
    if (this.next === null) return;
    const page = await get('/inspector/api/journal', { ...this.filter, before: this.next, limit: pageSize });
    this.append(page.entries);
    this.next = page.next;
    this.showPaging();
  }

  setFilter(feature, action) {
    this.filter = { feature, action: action.trim() };
    return this.reload();
  }

  listen(since) {
    this.events = follow(since);
    this.events.addEventListener('open', () => this.setLive('open', 'live'));
    this.events.addEventListener('error', () => {
      // Refused rather than cut (a daemon started again has a new token): the browser gives up.
      if (this.events.readyState === EventSource.CLOSED) {
        this.setLive('closed', 'disconnected: `switchyard status` gives the URL of a daemon started again');
      } else {
        this.setLive('connecting', 'reconnecting');
      }
    });
    this.events.addEventListener('change', (event) => {
      const entry = JSON.parse(event.data);
      this.latest = entry.seq;
      if (this.atNewest && this.matches(entry)) this.prepend(entry);
    });
    // The journal no longer holds where the stream was: start again from the newest.
    this.events.addEventListener('reset', () => {
      this.events.close();
      this.events = null;
      this.reload();
    });
  }

  setLive(state, text) {
    this.live.className = `live ${state}`;
    this.live.textContent = text;
  }

  matches(entry) {
    if (this.filter.feature && entry.feature !== this.filter.feature) return false;
    const action = this.filter.action;
    return !action || entry.case === action || entry.case.startsWith(`${action}.`);
  }

  row(entry) {
    const time = new Date(entry.time * 1000);
    const sender = entry.certificate ?? (entry.uid !== undefined ? `uid ${entry.uid}` : undefined);
    const from = entry.origin === 'request' && sender !== undefined ? sender : (entry.origin ?? '');
    const row = element('tr', { 'data-seq': entry.seq },
      element('td', { text: entry.seq }),
      element('td', { text: time.toLocaleTimeString([], { hour12: false }) + `.${String(time.getMilliseconds()).padStart(3, '0')}` }),
      element('td', { text: entry.feature ?? '?' }),
      element('td', { class: 'case', text: entry.case || '(not known)' }),
      element('td', { class: 'duration', text: reduceTime(entry) }),
      element('td', { class: 'muted', text: from }));
    row.entry = entry;
    row.addEventListener('click', () => this.select(entry.seq));
    if (entry.seq === this.selected) row.classList.add('selected');
    return row;
  }

  append(entries) {
    for (const entry of entries) this.body.append(this.row(entry));
    this.trim();
  }

  prepend(entry) {
    const row = this.row(entry);
    row.classList.add('fresh');
    this.body.prepend(row);
    if (this.body.rows.length > maximumRows) {
      this.body.lastElementChild.remove();
      this.next = Number(this.body.lastElementChild.dataset.seq);
    }
    this.showPaging();
  }

  trim() {
    while (this.body.rows.length > maximumRows) this.body.firstElementChild.remove();
  }

  showPaging() {
    this.older.hidden = this.next === null;
    this.empty.hidden = this.body.rows.length > 0;
  }

  /** Marks the row of `seq` (when shown) and tells the change view, which reads the change
   * itself when neither its row nor `entry` is at hand. */
  select(seq, entry) {
    this.selected = seq;
    for (const row of this.body.querySelectorAll('tr.selected')) row.classList.remove('selected');
    const row = this.body.querySelector(`tr[data-seq="${seq}"]`);
    row?.classList.add('selected');
    row?.scrollIntoView({ block: 'nearest' });
    this.onSelect(seq, row?.entry ?? entry);
  }
}
