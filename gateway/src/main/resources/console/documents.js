// Documents: upload (drag and drop of files and folders, or pickers) with per-file progress, the
// list a page at a time, delete, and one document's section tree and items.
import {getJson, getText, remove, upload} from './api.js';
import {announce, clear, documentHref, el, errorBox, formatBytes, formatTime, heading, markdownTable, pagesText}
  from './dom.js';

const PAGE = 20;
const PAGE_MAX = 1000;

/** The documents, a page at a time: PAGE, or #/documents?limit=N (1 to 1000, as the API takes). */
export function documentsView(main, params, signal) {
  const list = el('div', {class: 'documents-list'});
  const uploads = el('ul', {class: 'uploads', 'aria-label': 'Uploads'});
  const cursors = [null];
  const asked = Number.parseInt(params.get('limit'), 10);
  const state = {page: 0, size: asked >= 1 && asked <= PAGE_MAX ? asked : PAGE};

  const refresh = () => loadPage(list, cursors, state, refresh, signal);
  main.append(heading('Documents'), dropZone(uploads, refresh, signal), uploads, list);
  refresh();
}

function dropZone(uploads, refresh, signal) {
  const files = el('input', {type: 'file', id: 'upload-files', multiple: true,
    onchange: e => { send([...e.target.files].map(f => ({file: f, uri: f.name}))); e.target.value = ''; }});
  const folder = el('input', {type: 'file', id: 'upload-folder', webkitdirectory: true, multiple: true,
    onchange: e => {
      send([...e.target.files].map(f => ({file: f, uri: f.webkitRelativePath || f.name})));
      e.target.value = '';
    }});
  const zone = el('section', {class: 'drop-zone', 'aria-labelledby': 'drop-title'},
    el('h2', {id: 'drop-title'}, 'Add documents'),
    el('p', {}, 'Drop files or folders here (PDF, DOCX, HTML, Markdown, text, docling JSON), or choose them:'),
    el('p', {class: 'pickers'},
      el('label', {for: 'upload-files', class: 'button'}, 'Choose files'), files,
      el('label', {for: 'upload-folder', class: 'button'}, 'Choose a folder'), folder));
  zone.addEventListener('dragover', e => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', async e => {
    e.preventDefault();
    zone.classList.remove('over');
    send(await dropped(e.dataTransfer));
  });

  // One upload at a time: the gateway converts and embeds each in turn anyway.
  let queue = Promise.resolve();
  function send(entries) {
    for (const {file, uri} of entries) {
      const bar = el('progress', {max: '100', value: '0', 'aria-label': `Progress of ${uri}`});
      const status = el('span', {class: 'upload-status'}, 'waiting');
      const row = el('li', {class: 'upload'}, el('span', {class: 'upload-name'}, uri), bar, status);
      uploads.append(row);
      queue = queue.then(() => uploadOne(file, uri, bar, status, row, signal)).then(refresh, refresh);
    }
  }
  return zone;
}

async function uploadOne(file, uri, bar, status, row, signal) {
  status.textContent = 'uploading';
  try {
    const result = await upload(file, uri, p => {
      if (p.phase === 'upload' && p.total > 0) {
        bar.value = Math.round(50 * p.loaded / p.total);
        status.textContent = `uploading ${formatBytes(p.loaded)} of ${formatBytes(p.total)}`;
      } else if (p.phase === 'converted') {
        bar.value = 60;
        status.textContent = `converted: ${p.item_count} items, ${p.chunk_count} chunks`;
      } else if (p.phase === 'embedded') {
        bar.value = 60 + Math.round(40 * p.chunks_embedded / Math.max(1, p.chunk_count));
        status.textContent = `embedded ${p.chunks_embedded} of ${p.chunk_count} chunks`;
      }
    }, signal);
    bar.value = 100;
    status.textContent = result.status === 'unchanged' ? 'already there, unchanged'
      : `${result.status}: ${result.item_count} items, ${result.chunk_count} chunks`;
    row.classList.add('done');
    announce(`${uri} ${status.textContent}`);
  } catch (e) {
    row.classList.add('failed');
    status.textContent = '';
    status.append(errorBox(e));
  }
}

/** The files of a drop, folders walked (each file's uri is its path in the drop). */
async function dropped(transfer) {
  const out = [];
  const walks = [];
  for (const item of [...transfer.items]) {
    const entry = item.webkitGetAsEntry ? item.webkitGetAsEntry() : null;
    if (entry) {
      walks.push(walk(entry, out));
    } else if (item.kind === 'file') {
      const file = item.getAsFile();
      if (file) {
        out.push({file, uri: file.name});
      }
    }
  }
  await Promise.all(walks);
  return out;
}

async function walk(entry, out) {
  if (entry.isFile) {
    const file = await new Promise((resolve, reject) => entry.file(resolve, reject));
    out.push({file, uri: entry.fullPath.replace(/^\//, '')});
  } else if (entry.isDirectory) {
    const reader = entry.createReader();
    for (;;) {
      // readEntries gives a batch at a time; an empty batch is the end.
      const batch = await new Promise((resolve, reject) => reader.readEntries(resolve, reject));
      if (batch.length === 0) {
        break;
      }
      await Promise.all(batch.map(child => walk(child, out)));
    }
  }
}

async function loadPage(list, cursors, state, refresh, signal) {
  const cursor = cursors[state.page];
  let page;
  try {
    page = await getJson(`/v1/documents?limit=${state.size}${cursor ? '&cursor=' + encodeURIComponent(cursor) : ''}`,
      {signal});
  } catch (e) {
    if (e.name !== 'AbortError') {
      clear(list).append(errorBox(e));
    }
    return;
  }
  cursors[state.page + 1] = page.next_cursor;
  clear(list);
  if (page.documents.length === 0 && state.page === 0) {
    list.append(el('p', {class: 'empty'}, 'No documents yet.'));
    return;
  }
  const rows = page.documents.map(d => documentRow(d, refresh, signal));
  list.append(el('div', {class: 'table-wrap'}, el('table', {class: 'documents'},
    el('caption', {}, `Documents, page ${state.page + 1}`),
    el('thead', {}, el('tr', {}, ['Title', 'Type', 'Items', 'Chunks', 'Size', 'Updated', ''].map(h =>
      el('th', {scope: 'col'}, h)))),
    el('tbody', {}, rows))));
  const previous = el('button', {type: 'button', disabled: state.page === 0,
    onclick: () => { state.page--; refresh(); }}, 'Previous page');
  const next = el('button', {type: 'button', disabled: !page.next_cursor,
    onclick: () => { state.page++; refresh(); }}, 'Next page');
  list.append(el('nav', {class: 'pager', 'aria-label': 'Document pages'}, previous, next));
}

function documentRow(d, refresh, signal) {
  const actions = el('td', {class: 'actions'});
  const askDelete = el('button', {type: 'button', class: 'danger', 'aria-label': `Delete ${d.title || d.uri}`,
    onclick: () => {
      clear(actions).append(
        el('button', {type: 'button', class: 'danger confirm-delete', onclick: async () => {
          try {
            await remove(`/v1/documents/${encodeURIComponent(d.id)}`, {signal});
            announce(`${d.title || d.uri} deleted`);
            refresh();
          } catch (e) {
            actions.append(errorBox(e));
          }
        }}, 'Delete for good'),
        el('button', {type: 'button', onclick: () => clear(actions).append(askDelete)}, 'Keep'));
      actions.querySelector('button').focus();
    }}, 'Delete');
  actions.append(askDelete);
  return el('tr', {'data-document-id': d.id},
    el('td', {}, el('a', {href: documentHref(d.id)}, d.title || d.uri || d.id),
      d.uri && d.uri !== d.title ? el('div', {class: 'uri'}, d.uri) : null),
    el('td', {}, d.source_type), el('td', {class: 'num'}, d.item_count), el('td', {class: 'num'}, d.chunk_count),
    el('td', {class: 'num'}, formatBytes(d.byte_size)), el('td', {}, formatTime(d.updated_at)), actions);
}

/**
 * One document: its section tree beside its items. ?ref= picks an item, ?chunk= the items a chunk
 * came from (a citation's), ?page= the first item on a page; they are marked and the first one
 * takes the focus.
 */
export async function documentView(main, id, query, signal) {
  main.append(heading('Document'));
  const body = el('div', {class: 'document'});
  main.append(body);
  let meta;
  let toc;
  let items;
  try {
    const base = `/v1/documents/${encodeURIComponent(id)}`;
    [meta, toc, items] = await Promise.all([getJson(base, {signal}), getJson(`${base}/toc`, {signal}),
      getText(`${base}/items`, {signal})]);
  } catch (e) {
    if (e.name !== 'AbortError') {
      body.append(errorBox(e));
    }
    return;
  }
  const title = main.querySelector('h1');
  title.textContent = meta.title || meta.uri || meta.id;
  const parsed = items.split('\n').filter(l => l.trim().length > 0).map(l => JSON.parse(l));
  body.append(
    el('p', {class: 'meta'}, `${meta.source_type} · ${meta.item_count} items · ${meta.chunk_count} chunks · `
      + `${formatBytes(meta.byte_size)} · version ${meta.version}`, meta.uri ? ` · ${meta.uri}` : ''),
    el('div', {class: 'document-body'},
      el('nav', {class: 'toc', 'aria-label': 'Sections'}, el('h2', {}, 'Sections'),
        toc.tree.length === 0 ? el('p', {class: 'empty'}, 'No sections.') : tree(id, toc.tree)),
      el('section', {class: 'items', 'aria-label': 'Items'}, parsed.map(item))));
  let targets = [];
  try {
    targets = await chosen(id, parsed, query, signal);
  } catch (e) {
    if (e.name !== 'AbortError') {
      body.prepend(errorBox(e));
    }
  }
  const nodes = targets.map(t => body.querySelector(`[data-position="${Number(t.position)}"]`)).filter(n => n);
  nodes.forEach(node => {
    node.classList.add('target');
    node.setAttribute('aria-current', 'true');
  });
  if (nodes.length > 0) {
    nodes[0].scrollIntoView({block: 'center'});
    nodes[0].focus({preventScroll: true});
  }
}

async function chosen(id, items, query, signal) {
  const ref = query.get('ref');
  const chunk = query.get('chunk');
  const page = query.get('page');
  if (ref) {
    return items.filter(i => i.self_ref === ref);
  } else if (chunk) {
    const c = await getJson(`/v1/documents/${encodeURIComponent(id)}/chunks/${encodeURIComponent(chunk)}`, {signal});
    const [start, end] = c.item_range;
    return items.filter(i => i.position >= start && i.position < end);
  } else if (page) {
    const first = items.find(i => (i.page_numbers || []).includes(Number(page)));
    return first ? [first] : [];
  }
  return [];
}

function tree(id, nodes) {
  return el('ul', {}, nodes.map(n => el('li', {},
    el('a', {href: documentHref(id, {ref: n.self_ref})}, n.title,
      n.page_numbers && n.page_numbers.length ? el('span', {class: 'pages'}, ` ${pagesText(n.page_numbers)}`) : null),
    n.children && n.children.length ? tree(id, n.children) : null)));
}

function item(i) {
  let content;
  if (i.label === 'table') {
    const table = markdownTable(i.text);
    content = table ? el('div', {class: 'table-wrap'}, table) : el('pre', {class: 'text'}, i.text);
  } else if (i.label === 'code' || i.label === 'formula') {
    content = el('pre', {class: 'text'}, i.text);
  } else {
    content = el('p', {class: i.label === 'section_header' || i.label === 'title' ? 'text heading' : 'text'}, i.text);
  }
  return el('article', {class: `item label-${String(i.label).replace(/[^a-z_]/g, '')}`, 'data-position': i.position,
    'data-ref': i.self_ref, tabindex: '-1'},
    el('div', {class: 'item-head'}, el('span', {class: 'label'}, i.label),
      el('span', {class: 'pages'}, pagesText(i.page_numbers)), el('span', {class: 'ref'}, i.self_ref)),
    content);
}
