// Sending an action from the page, shown only when the daemon says `http.inspectorSend` is on:
// the action goes as a Varlink `Send` would, under the access policy's rules for the inspector,
// and the timeline then shows the change it made, live.

import { post } from './api.js';

/** Shows the send form when `enabled`; each action sent says its seq or why it was refused. */
export function setUpSending(enabled) {
  const form = document.getElementById('send-form');
  form.hidden = !enabled;
  if (!enabled) return;
  const input = document.getElementById('send-action');
  const result = document.getElementById('send-result');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    let action;
    try {
      action = JSON.parse(input.value);
    } catch (error) {
      show(result, 'bad', `not JSON: ${error.message}`);
      return;
    }
    show(result, 'muted', 'sending…');
    try {
      const reply = await post('/inspector/api/send', { action });
      show(result, 'muted', `sent: seq ${reply.seq}`);
    } catch (error) {
      show(result, 'bad', error.message);
    }
  });
}

function show(node, kind, text) {
  node.className = kind;
  node.textContent = text;
}
