// The replay check: the journaled actions reduced again through today's reducers, and the first
// change that comes out otherwise, its two patches side by side.

import { brief, element, get, pathName } from './api.js';

export function setUpReplay() {
  document.getElementById('replay-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const summary = document.getElementById('replay-summary');
    const since = document.getElementById('replay-since').value.trim();
    summary.textContent = 'replaying…';
    document.getElementById('replay-difference').hidden = true;
    try {
      const report = await get('/inspector/api/replay', { since });
      summary.textContent = `replayed ${report.replayed} changes from ${report.from} to ${report.to}; skipped ${report.skipped} (action not known)`;
      const difference = report.difference;
      if (!difference) {
        summary.append(element('br'), element('strong', { text: 'every replayed change agrees with the journal' }));
        return;
      }
      summary.append(element('br'), element('strong', { class: 'bad', text: `seq ${difference.seq}, ${difference.feature}: ${difference.reason}` }),
        element('pre', { text: JSON.stringify(difference.action) }));
      fill('replay-journaled', difference.journaled);
      fill('replay-replayed', difference.replayed ?? []);
      document.getElementById('replay-difference').hidden = false;
    } catch (error) {
      summary.textContent = error.message;
    }
  });
}

function fill(id, patch) {
  document.getElementById(id).replaceChildren(...patch.map((operation) =>
    element('li', { class: `op op-${operation.op}` }, element('span', { class: 'kind', text: operation.op }),
      element('span', { class: 'path', text: pathName(operation.path) }), ' ', brief(operation.value, 200))));
}
