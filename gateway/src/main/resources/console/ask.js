// Ask: a question, optionally scoped to chosen documents, answered by an analysis whose steps
// stream in as they run (see analyses.js).
import {getJson} from './api.js';
import {clear, el, errorBox, heading} from './dom.js';
import {AnalysisView, follow} from './analyses.js';

const SCOPE_CHOICES = 100;

export async function askView(main, params, signal) {
  const question = el('textarea', {id: 'question', name: 'question', rows: '3', required: true,
    placeholder: 'e.g. How many passengers did each route carry in 2024?'});
  const scope = el('fieldset', {class: 'scope'}, el('legend', {}, 'Only these documents (none ticked: all)'));
  const output = el('div', {class: 'ask-output'});
  const submit = el('button', {type: 'submit', id: 'ask'}, 'Ask');
  const form = el('form', {class: 'ask-form', onsubmit: async e => {
    e.preventDefault();
    const body = {question: question.value, stream: true};
    const chosen = [...scope.querySelectorAll('input:checked')].map(c => c.value);
    if (chosen.length) {
      body.document_ids = chosen;
    }
    submit.disabled = true;
    clear(output);
    const view = new AnalysisView(output);
    view.question.textContent = question.value;
    try {
      await follow(view, 'POST', '/v1/analyses', body, signal, response => {
        const id = response.headers.get('X-Analysis-Id');
        if (id) {
          view.id = id;
          // A reload comes back to this analysis; the key stays out of the address either way.
          history.replaceState(null, '', `#/analyses/${encodeURIComponent(id)}`);
        }
      });
    } finally {
      submit.disabled = false;
    }
  }},
  el('label', {for: 'question'}, 'Question'), question, scope, submit);
  main.append(heading('Ask'), form, output);
  try {
    const page = await getJson(`/v1/documents?limit=${SCOPE_CHOICES}`, {signal});
    if (page.documents.length === 0) {
      scope.append(el('p', {class: 'empty'}, 'No documents yet.'));
    }
    for (const d of page.documents) {
      const id = `scope-${d.id}`;
      scope.append(el('div', {class: 'check'}, el('input', {type: 'checkbox', id, value: d.id}),
        el('label', {for: id}, d.title || d.uri || d.id)));
    }
    if (page.next_cursor) {
      scope.append(el('p', {class: 'note'}, `The first ${SCOPE_CHOICES} documents are listed.`));
    }
  } catch (e) {
    if (e.name !== 'AbortError') {
      scope.append(errorBox(e));
    }
  }
}
