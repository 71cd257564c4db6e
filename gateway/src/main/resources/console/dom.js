// Building the page from data. Everything that comes from a document, a search hit or a model is
// attacker-controlled: it only ever becomes text (textContent / text nodes), never markup. No
// function here takes HTML.

/**
 * el('a', {href: '#/x', class: 'c', onclick: fn}, 'text', otherNode): an element with attributes
 * and children. Strings become text nodes; null and false are skipped; arrays are flattened.
 * Attributes named on* must be functions and are added as listeners.
 */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) {
      continue;
    }
    if (name.startsWith('on')) {
      if (typeof value !== 'function') {
        throw new TypeError(`listener ${name} must be a function`);
      }
      node.addEventListener(name.slice(2), value);
    } else if (name === 'text') {
      node.textContent = String(value);
    } else if (name === 'class') {
      node.className = value;
    } else if (value === true) {
      node.setAttribute(name, '');
    } else {
      node.setAttribute(name, String(value));
    }
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) {
      continue;
    }
    if (Array.isArray(child)) {
      append(node, child);
    } else if (child instanceof Node) {
      node.appendChild(child);
    } else {
      node.appendChild(document.createTextNode(String(child)));
    }
  }
}

/** Removes every child of node. */
export function clear(node) {
  while (node.firstChild) {
    node.removeChild(node.firstChild);
  }
  return node;
}

/** A page's heading, focusable so that navigation can move the focus to it. */
export function heading(text) {
  return el('h1', {tabindex: '-1', class: 'view-title'}, text);
}

/** An error from the API (or the network), with its code and message, as an alert. */
export function errorBox(error) {
  const code = error && error.code ? error.code : 'error';
  const message = error && error.message ? error.message : String(error);
  return el('div', {class: 'error', role: 'alert'}, el('strong', {}, code), ': ', message);
}

/** Says something to screen readers without moving the focus. */
export function announce(text) {
  const region = document.getElementById('announce');
  if (region) {
    region.textContent = text;
  }
}

export function formatBytes(n) {
  if (n === null || n === undefined) {
    return '';
  }
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = Number(n);
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${unit === 0 ? value : value.toFixed(1)} ${units[unit]}`;
}

export function formatTime(iso) {
  if (!iso) {
    return '';
  }
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toLocaleString();
}

/** The pages of an item or hit as text: "p. 3", "pp. 3, 4", or '' without pages. */
export function pagesText(pages) {
  if (!Array.isArray(pages) || pages.length === 0) {
    return '';
  }
  return (pages.length === 1 ? 'p. ' : 'pp. ') + pages.join(', ');
}

/** A link into the document view: at an item (its self_ref), a chunk's items, a page, or the top. */
export function documentHref(documentId, {ref, chunk, page} = {}) {
  const query = new URLSearchParams();
  if (ref) {
    query.set('ref', ref);
  }
  if (chunk) {
    query.set('chunk', chunk);
  }
  if (page !== undefined && page !== null) {
    query.set('page', String(page));
  }
  const q = query.toString();
  return `#/documents/${encodeURIComponent(documentId)}${q ? '?' + q : ''}`;
}

/**
 * A Markdown table (an item's text, CONTRACT.md: "a table is rendered as a Markdown table with |
 * columns") as a <table>, or null when the text is not one. Cells are text.
 */
export function markdownTable(text) {
  const lines = String(text).split('\n').map(l => l.trim()).filter(l => l.length > 0);
  if (lines.length < 2 || !lines.every(l => l.startsWith('|'))) {
    return null;
  }
  const rows = lines.map(cells);
  const separator = rows[1].every(c => /^:?-{1,}:?$/.test(c));
  if (!separator) {
    return null;
  }
  const table = el('table', {});
  table.appendChild(el('thead', {}, el('tr', {}, rows[0].map(c => el('th', {scope: 'col'}, c)))));
  table.appendChild(el('tbody', {}, rows.slice(2).map(r => el('tr', {}, r.map(c => el('td', {}, c))))));
  return table;
}

function cells(line) {
  let body = line;
  if (body.startsWith('|')) {
    body = body.slice(1);
  }
  if (body.endsWith('|') && !body.endsWith('\\|')) {
    body = body.slice(0, -1);
  }
  const out = [];
  let cell = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\' && body[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (c === '|') {
      out.push(cell.trim());
      cell = '';
    } else {
      cell += c;
    }
  }
  out.push(cell.trim());
  return out;
}
