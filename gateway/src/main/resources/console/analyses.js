// An analysis as it runs or as it ran: the same events either way (POST /v1/analyses streamed, or
// GET /v1/analyses/{id}/events, which replays the stored ones and follows a live one). Each step
// shows its code, its output, its callbacks, its duration; then the answer with its citations and
// the program, which can be replayed. Model output is text, whatever it says.
import {getJson, postJson, stream} from './api.js';
import {announce, clear, documentHref, el, errorBox, formatTime, heading, pagesText} from './dom.js';
import {codeBlock} from './highlight.js';

/** The live view of one analysis, fed one event at a time. */
export class AnalysisView {
  constructor(container) {
    this.steps = new Map();
    this.tokens = {prompt: 0, completion: 0};
    this.status = el('span', {class: 'status', id: 'analysis-status'}, 'starting');
    this.tokenText = el('span', {class: 'tokens', id: 'analysis-tokens'}, 'tokens 0');
    this.question = el('p', {class: 'question'});
    this.log = el('ol', {class: 'steps', 'aria-label': 'Steps'});
    this.end = el('div', {class: 'end'});
    this.root = el('section', {class: 'analysis', 'aria-label': 'Analysis'},
      this.question, el('p', {class: 'analysis-meta'}, this.status, ' · ', this.tokenText), this.log, this.end);
    container.append(this.root);
  }

  event(type, e) {
    switch (type) {
      case 'started':
        this.id = e.analysis_id;
        this.root.dataset.analysisId = e.analysis_id;
        this.question.textContent = e.question;
        this.status.textContent = 'running';
        break;
      case 'model_turn':
        if (e.usage) {
          this.tokens.prompt += e.usage.prompt_tokens || 0;
          this.tokens.completion += e.usage.completion_tokens || 0;
          this.showTokens();
        }
        if (e.content && !finalMessage(e)) {
          this.log.append(el('li', {class: 'model-note'}, el('span', {class: 'who'}, `model, turn ${e.turn}: `),
            e.content));
        }
        break;
      case 'code':
        this.step(e.step).code.append(codeBlock(e.code, `Code of step ${e.step}`));
        break;
      case 'output': {
        const s = this.step(e.step);
        s.output.hidden = false;
        s.output.append(e.channel === 'stderr' ? el('span', {class: 'stderr'}, e.text) : e.text);
        break;
      }
      case 'callback':
        this.step(e.step).callbacks.append(el('li', {},
          el('span', {class: 'callback-kind'}, e.kind), ' ',
          typeof e.arguments === 'string' ? e.arguments : JSON.stringify(e.arguments)));
        break;
      case 'cell_result':
        this.result(this.step(e.step), e.result || {});
        break;
      case 'answer':
        this.finished(e);
        this.answer(e);
        break;
      case 'failed':
        this.finished(e);
        this.end.append(el('div', {class: 'failure', role: 'alert'}, el('h2', {}, `Ended ${e.status}`),
          el('p', {}, el('strong', {class: 'error-type'}, e.error ? e.error.type : 'Error'), ': ',
            e.error ? e.error.message : '')));
        break;
      default:
        break;
    }
  }

  showTokens() {
    const total = this.tokens.prompt + this.tokens.completion;
    this.tokenText.textContent = `tokens ${total} (prompt ${this.tokens.prompt}, completion ${this.tokens.completion})`;
  }

  finished(e) {
    this.status.textContent = e.status;
    this.root.dataset.status = e.status;
    if (e.usage) {
      this.tokens = {prompt: e.usage.prompt_tokens || 0, completion: e.usage.completion_tokens || 0};
      this.showTokens();
    }
    announce(`analysis ${e.status}`);
  }

  step(n) {
    let s = this.steps.get(n);
    if (!s) {
      s = {
        code: el('div', {class: 'step-code'}),
        output: el('pre', {class: 'output', hidden: true, 'aria-label': `Output of step ${n}`}),
        callbacks: el('ul', {class: 'callbacks', 'aria-label': `Callbacks of step ${n}`}),
        result: el('p', {class: 'step-result'}, 'running…'),
      };
      s.node = el('li', {class: 'step', 'data-step': n}, el('h2', {}, `Step ${n}`), s.code, s.callbacks, s.output,
        s.result);
      this.steps.set(n, s);
      this.log.append(s.node);
    }
    return s;
  }

  result(s, r) {
    if (s.output.childNodes.length === 0 && (r.stdout || r.stderr)) {
      s.output.hidden = false;
      s.output.append(r.stdout || '', r.stderr ? el('span', {class: 'stderr'}, r.stderr) : null);
    }
    clear(s.result);
    s.node.classList.add(r.success ? 'ok' : 'failed');
    const duration = `${r.duration_ms ?? '?'} ms`;
    if (r.success) {
      s.result.append(`succeeded in ${duration}`, r.truncated ? ' (output truncated)' : '');
    } else {
      const error = r.error || {};
      s.result.append(`failed in ${duration}: `, el('strong', {class: 'error-type'}, error.type || 'Error'), ': ',
        error.message || '');
    }
  }

  answer(e) {
    const citations = (e.citations || []).map(c => el('li', {},
      el('a', {href: documentHref(c.document_id), class: 'citation'}, c.title || c.uri || c.document_id),
      (c.chunk_ids || []).length ? ' · ' : null,
      (c.chunk_ids || []).map((chunk, i) => [i > 0 ? ', ' : null,
        el('a', {href: documentHref(c.document_id, {chunk}), class: 'citation-passage'}, `passage ${i + 1}`)]),
      (c.pages || []).length ? ' · ' : null,
      (c.pages || []).map((p, i) => [i > 0 ? ', ' : null,
        el('a', {href: documentHref(c.document_id, {page: p}), class: 'citation-page'}, pagesText([p]))]),
      (c.via || []).length ? el('span', {class: 'via'}, ` (via ${c.via.join(', ')})`) : null));
    const replayOut = el('div', {class: 'replay', 'aria-live': 'polite'});
    const replay = el('button', {type: 'button', id: 'replay', onclick: () => this.replay(replay, replayOut)},
      'Replay the program');
    this.end.append(el('section', {class: 'answer', 'aria-labelledby': 'answer-title'},
      el('h2', {id: 'answer-title'}, 'Answer'),
      el('p', {class: 'answer-text'}, e.answer),
      el('h3', {}, 'Sources'),
      citations.length ? el('ul', {class: 'citations'}, citations) : el('p', {class: 'empty'}, 'No sources cited.'),
      el('h3', {}, 'Program'),
      codeBlock(e.program, 'The program that reproduces the answer'),
      replay, replayOut));
  }

  async replay(button, out) {
    button.disabled = true;
    clear(out).append(el('p', {class: 'busy'}, 'Replaying in a fresh sandbox…'));
    try {
      const r = await postJson(`/v1/analyses/${encodeURIComponent(this.id)}/replay`, {});
      const run = r.replay || {};
      let verdict;
      if (!run.success) {
        const error = run.error || {};
        verdict = el('p', {class: 'verdict mismatch'}, 'The program failed: ',
          el('strong', {class: 'error-type'}, error.type || 'Error'), ': ', error.message || '');
      } else if (run.matches === true) {
        verdict = el('p', {class: 'verdict match'}, 'Output matches the first replay.');
      } else if (run.matches === false) {
        verdict = el('p', {class: 'verdict mismatch'}, 'Output differs from the first replay.');
      } else {
        verdict = el('p', {class: 'verdict recorded'},
          'First replay: its output is recorded; later replays are compared with it.');
      }
      const notes = [];
      if ((r.documents_changed || []).length) {
        notes.push(el('p', {class: 'note'}, 'Documents created or changed since the analysis: ',
          r.documents_changed.map(d => d.title || d.document_id).join(', ')));
      }
      if ((r.documents_missing || []).length) {
        notes.push(el('p', {class: 'note'}, `Documents gone since the analysis: ${r.documents_missing.join(', ')}`));
      }
      clear(out).append(verdict, el('pre', {class: 'output'}, run.stdout || ''),
        run.stderr ? el('pre', {class: 'output stderr'}, run.stderr) : null, notes);
      announce(verdict.textContent);
    } catch (e) {
      clear(out).append(errorBox(e));
    } finally {
      button.disabled = false;
    }
  }
}

/** A turn that only carries the final {answer, program}: the answer section shows it. */
function finalMessage(turn) {
  if ((turn.tool_calls || []).length > 0) {
    return false;
  }
  try {
    const parsed = JSON.parse(turn.content);
    return parsed !== null && typeof parsed === 'object' && 'answer' in parsed && 'program' in parsed;
  } catch (e) {
    return false;
  }
}

/** Follows one analysis' events into a view (live or finished alike). */
export async function follow(view, method, path, body, signal, onOpen) {
  try {
    await stream(method, path, body, {onOpen, onEvent: (type, e) => view.event(type, e), signal});
  } catch (e) {
    if (e.name !== 'AbortError') {
      view.end.append(errorBox(e));
    }
  }
}

export async function analysisView(main, id, signal) {
  main.append(heading('Analysis'));
  const view = new AnalysisView(main);
  view.id = id;
  await follow(view, 'GET', `/v1/analyses/${encodeURIComponent(id)}/events`, undefined, signal);
}

export async function analysesView(main, params, signal) {
  const list = el('div', {class: 'analyses-list'});
  const refresh = el('button', {type: 'button', onclick: () => load(list, signal)}, 'Refresh');
  main.append(heading('Analyses'), el('p', {}, refresh), list);
  await load(list, signal);
}

async function load(list, signal) {
  let answer;
  try {
    answer = await getJson('/v1/analyses?limit=50', {signal});
  } catch (e) {
    if (e.name !== 'AbortError') {
      clear(list).append(errorBox(e));
    }
    return;
  }
  clear(list);
  if (answer.analyses.length === 0) {
    list.append(el('p', {class: 'empty'}, 'No analyses yet. Ask a question.'));
    return;
  }
  list.append(el('div', {class: 'table-wrap'}, el('table', {class: 'analyses'},
    el('caption', {}, 'The latest analyses'),
    el('thead', {}, el('tr', {}, ['Question', 'Status', 'Started', 'Error'].map(h => el('th', {scope: 'col'}, h)))),
    el('tbody', {}, answer.analyses.map(a => el('tr', {'data-analysis-id': a.id},
      el('td', {}, el('a', {href: `#/analyses/${encodeURIComponent(a.id)}`}, a.question)),
      el('td', {class: `status-${a.status}`}, a.status),
      el('td', {}, formatTime(a.created_at)),
      el('td', {}, a.error ? `${a.error.type}: ${a.error.message}` : '')))))));
}
