// A state as a collapsible tree. Clicking a key copies the `switchyard watch` command that
// subscribes to it.

import { element } from './api.js';

/** Renders `value` (at `pointer` in the whole state) into `container`; the pointers in
 * `changed` are marked. */
export function renderTree(container, value, pointer, changed, onCopy) {
  container.replaceChildren(element('ul', {}, node(null, value, pointer, changed, onCopy, 0)));
}

function node(key, value, pointer, changed, onCopy, depth) {
  const item = element('li', { 'data-pointer': pointer });
  if ([...changed].some((path) => path === pointer || path.startsWith(`${pointer}/`))) item.classList.add('changed');
  const isContainer = value !== null && typeof value === 'object';
  if (isContainer) {
    const toggle = element('span', { class: 'toggle', text: '▾' });
    toggle.addEventListener('click', () => {
      item.classList.toggle('collapsed');
      toggle.textContent = item.classList.contains('collapsed') ? '▸' : '▾';
    });
    item.append(toggle);
  } else {
    item.append(element('span', { class: 'toggle' }));
  }
  if (key !== null) {
    const label = element('span', { class: 'key', text: key, title: `copy: switchyard watch ${pointer}` });
    label.addEventListener('click', () => onCopy(`switchyard watch ${pointer}`));
    item.append(label, ': ');
  }
  if (!isContainer) {
    const kind = typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'literal';
    item.append(element('span', { class: `value ${kind}`, text: JSON.stringify(value) }));
    return item;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value);
  item.append(element('span', { class: 'muted', text: Array.isArray(value) ? ` [${entries.length}]` : ` {${entries.length}}` }));
  // Deep or long containers start folded: the page stays quick on a large state.
  if (depth >= 3 || entries.length > 200) {
    item.classList.add('collapsed');
    item.firstChild.textContent = '▸';
  }
  const list = element('ul');
  for (const [name, child] of entries.slice(0, 1000)) {
    const escaped = name.replaceAll('~', '~0').replaceAll('/', '~1');
    list.append(node(name, child, `${pointer}/${escaped}`, changed, onCopy, depth + 1));
  }
  if (entries.length > 1000) list.append(element('li', { class: 'muted', text: `… ${entries.length - 1000} more` }));
  item.append(list);
  return item;
}
