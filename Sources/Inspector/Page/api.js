// The inspector's reads of the daemon (and its one write, an action sent when that is on),
// through its JSON routes, with the token the page's own address carries. One request at a
// time: the endpoint gives each address only a few connections, and the live events hold one.

const token = new URLSearchParams(location.search).get('token') ?? '';
let queue = Promise.resolve();

/** GET `path` with `params` (empty ones left out): its JSON, or an Error saying why not. */
export function get(path, params = {}) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, value);
  }
  const read = async () => {
    const request = () => fetch(url, { headers: { Authorization: `Bearer ${token}` }, cache: 'no-store' });
    // A connection the endpoint refused (each address may hold only a few) is tried once more.
    return answerOf(await request().catch(() => new Promise((resolve) => setTimeout(resolve, 250)).then(request)));
  };
  return inTurn(read);
}

/** POST `body` as JSON to `path`, with the token in a header (never in the address), in turn
 * with the reads: its JSON, or an Error with the daemon's reason. */
export function post(path, body) {
  return inTurn(async () => answerOf(await fetch(new URL(path, location.origin), {
    method: 'POST', cache: 'no-store', body: JSON.stringify(body),
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
  })));
}

/** Runs `request` once the requests before it are answered. */
function inTurn(request) {
  const result = queue.then(request, request);
  queue = result.catch(() => {});
  return result;
}

/** A response's JSON, or an Error with the `error` it gives (its text, without JSON). */
async function answerOf(response) {
  const text = await response.text();
  let body;
  try { body = JSON.parse(text); } catch { body = { error: text.trim() || response.statusText }; }
  if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
  return body;
}

/** The Prometheus text of `/metrics` (the endpoint's own, open to anyone it lets connect):
 * `{name: [{labels, value}]}`. */
export async function metrics() {
  const read = async () => {
    const response = await fetch('/metrics', { cache: 'no-store' });
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    return response.text();
  };
  const result = inTurn(read);
  const samples = {};
  for (const line of (await result).split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    (samples[match[1]] ??= []).push({ labels, value: Number(match[3]) });
  }
  return samples;
}

/** The journal's changes after `since`, live; the browser reconnects by itself and resumes
 * after the last change it saw (Last-Event-ID). */
export function follow(since) {
  const url = new URL('/inspector/events', location.origin);
  url.searchParams.set('since', since);
  url.searchParams.set('token', token);
  return new EventSource(url);
}

/** `/a/b~1c/0` as the state's own names: `a["b/c"][0]`, dotted where it can be. */
export function pathName(pointer) {
  if (pointer === '') return '(the whole state)';
  return pointer.split('/').slice(1).map((raw) => raw.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((token, index) => /^\d+$/.test(token) ? `[${token}]`
      : /^[A-Za-z_$][\w$]*$/.test(token) ? (index === 0 ? token : `.${token}`) : `[${JSON.stringify(token)}]`)
    .join('');
}

/** The value at a JSON Pointer within `value`; undefined when it is not there. */
export function valueAt(value, pointer) {
  if (pointer === '') return value;
  let node = value;
  for (const raw of pointer.split('/').slice(1)) {
    const token = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !(token in node)) return undefined;
    node = node[token];
  }
  return node;
}

/** How long the change's reduction took, as the journal kept it; empty when it did not. */
export function reduceTime(entry) {
  const nanoseconds = entry.reduceNanoseconds;
  if (nanoseconds === undefined) return '';
  return nanoseconds < 1e6 ? `${(nanoseconds / 1e3).toFixed(1)} µs` : `${(nanoseconds / 1e6).toFixed(2)} ms`;
}

/** Compact JSON, cut short past `limit` characters. */
export function brief(value, limit = 120) {
  const text = value === undefined ? '(none)' : JSON.stringify(value);
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

/** A DOM element with text and attributes. */
export function element(name, attributes = {}, ...children) {
  const node = document.createElement(name);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}
