// A small live chart in SVG: a bounded ring of samples per line, drawn to the chart's box, its
// scale said in text beside it (text inside a stretched SVG would stretch too).

const namespace = 'http://www.w3.org/2000/svg';
const width = 600;
const height = 120;

export class Chart {
  /** `svg`: the element drawn into; `lines`: the names of its lines (each a CSS class);
   * `capacity`: the samples kept per line, the oldest dropped past it. */
  constructor(svg, lines, capacity) {
    this.svg = svg;
    this.capacity = capacity;
    this.series = Object.fromEntries(lines.map((name) => [name, []]));
  }

  /** Adds one sample per line (`undefined` for a gap) and draws again; returns the top of the scale. */
  push(values) {
    for (const [name, ring] of Object.entries(this.series)) {
      ring.push(values[name]);
      if (ring.length > this.capacity) ring.shift();
    }
    return this.draw();
  }

  get length() {
    return Math.max(0, ...Object.values(this.series).map((ring) => ring.length));
  }

  draw() {
    const known = Object.values(this.series).flat().filter((value) => Number.isFinite(value));
    const top = Math.max(0, ...known) || 1;
    const axis = document.createElementNS(namespace, 'line');
    for (const [key, value] of Object.entries({ x1: 0, y1: height - 5, x2: width, y2: height - 5 })) axis.setAttribute(key, value);
    const lines = Object.entries(this.series).map(([name, ring]) => {
      const line = document.createElementNS(namespace, 'polyline');
      line.setAttribute('class', name);
      line.setAttribute('points', ring.map((value, index) => Number.isFinite(value)
        ? `${(width * (index + this.capacity - ring.length)) / (this.capacity - 1)},${height - 5 - ((height - 15) * value) / top}`
        : null).filter(Boolean).join(' '));
      return line;
    });
    this.svg.replaceChildren(axis, ...lines);
    return top;
  }
}
