// The inspector's page: wires the timeline, the change view, the health, the replay check and,
// when the daemon allows it, the send form.

import { ChangeView } from './change.js';
import { Health } from './health.js';
import { setUpReplay } from './replay.js';
import { setUpSending } from './send.js';
import { Timeline } from './timeline.js';
import { element } from './api.js';

const health = new Health();
const featureSelect = document.getElementById('filter-feature');
const actionInput = document.getElementById('filter-action');

const change = new ChangeView({
  features: () => health.features,
  filter: () => timeline.filter,
  onMove: (seq, entry) => timeline.select(seq, entry),
});
const timeline = new Timeline({ onSelect: (seq, entry) => change.show(seq, entry).catch((error) => change.fail(error.message)) });
for (const button of document.querySelectorAll('nav button')) {
  button.addEventListener('click', () => {
    for (const other of document.querySelectorAll('nav button')) other.classList.toggle('selected', other === button);
    for (const view of document.querySelectorAll('.view')) view.hidden = view.id !== `view-${button.dataset.view}`;
  });
}

document.getElementById('filters').addEventListener('submit', async (event) => {
  event.preventDefault();
  const seek = document.getElementById('seek-seq').value.trim();
  timeline.filter = { feature: featureSelect.value, action: actionInput.value.trim() };
  if (/^\d+$/.test(seek)) {
    await timeline.reload(Number(seek) + 1);
    timeline.select(Number(seek));
  } else {
    await timeline.reload();
  }
});
featureSelect.addEventListener('change', () => timeline.setFilter(featureSelect.value, actionInput.value));

setUpReplay();

async function start() {
  try {
    const first = await health.refresh();
    setUpSending(first.inspector?.send === true);
    for (const feature of first.features ?? []) featureSelect.append(element('option', { value: feature.name, text: feature.name }));
    health.start();
    await timeline.reload();
  } catch (error) {
    document.getElementById('timeline-empty').hidden = false;
    document.getElementById('timeline-empty').textContent = error.message;
    timeline.setLive('closed', 'not following');
  }
}

start();
