// Search: hybrid search over the tenant's documents; each hit with its expanded context, its
// section path and pages, linking into the document view at the hit's first item.
import {postJson} from './api.js';
import {announce, clear, documentHref, el, errorBox, heading, pagesText} from './dom.js';

let lastQuery = '';
// Each search run gets a number; a response that arrives after a later run started is dropped, so
// the results shown are always those of the last query asked (the view re-runs the last query when
// opened, and a query typed meanwhile may be answered first).
let runs = 0;

export function searchView(main, params, signal) {
  const results = el('div', {class: 'results', 'aria-live': 'polite'});
  const input = el('input', {type: 'search', id: 'search-query', name: 'query', required: true,
    autocomplete: 'off', value: lastQuery});
  const form = el('form', {class: 'search-form', role: 'search', onsubmit: async e => {
    e.preventDefault();
    lastQuery = input.value;
    await run(results, input.value, signal);
  }},
  el('label', {for: 'search-query'}, 'Search the documents'),
  el('div', {class: 'row'}, input, el('button', {type: 'submit'}, 'Search')));
  main.append(heading('Search'), form, results);
  if (lastQuery) {
    run(results, lastQuery, signal);
  }
}

async function run(results, query, signal) {
  const mine = ++runs;
  clear(results).append(el('p', {class: 'busy'}, 'Searching…'));
  let answer;
  try {
    answer = await postJson('/v1/search', {query}, {signal});
  } catch (e) {
    if (e.name !== 'AbortError' && mine === runs) {
      clear(results).append(errorBox(e));
    }
    return;
  }
  if (mine !== runs) {
    return;
  }
  clear(results);
  announce(`${answer.results.length} hits`);
  if (answer.results.length === 0) {
    results.append(el('p', {class: 'empty'}, 'No hits.'));
    return;
  }
  results.append(el('ol', {class: 'hits'}, answer.results.map(hit)));
}

function hit(h) {
  const ref = (h.doc_item_refs || [])[0];
  return el('li', {class: 'hit', 'data-chunk-id': h.chunk_id},
    el('h2', {}, el('a', {href: documentHref(h.document_id, {ref}), class: 'hit-link'},
      h.document_title || h.document_uri || h.document_id)),
    el('p', {class: 'hit-meta'},
      h.headings && h.headings.length ? el('span', {class: 'headings'}, h.headings.join(' › ')) : null,
      el('span', {class: 'pages'}, pagesText(h.page_numbers)),
      el('span', {class: 'labels'}, (h.labels || []).join(', ')),
      el('span', {class: 'score'}, `score ${Number(h.score).toFixed(3)}`)),
    el('pre', {class: 'context'}, h.content));
}
