// The console's shell: sign-in, the navigation and the views, one at a time, chosen by the
// address' fragment (#/documents, #/documents/{id}?ref=…, #/search, #/ask, #/analyses/{id}).
// The fragment never holds the key.
import {checkKey, session, whenUnauthorized} from './api.js';
import {clear, el, errorBox, heading} from './dom.js';
import {documentView, documentsView} from './documents.js';
import {searchView} from './search.js';
import {askView} from './ask.js';
import {analysesView, analysisView} from './analyses.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const signOutButton = document.getElementById('sign-out');
let current = null;

function route() {
  const hash = location.hash || '#/documents';
  const [path, rawQuery] = hash.slice(1).split('?');
  const parts = path.split('/').filter(p => p.length > 0).map(decodeURIComponent);
  return {parts, query: new URLSearchParams(rawQuery || '')};
}

function render(message) {
  if (current) {
    current.abort();
  }
  current = new AbortController();
  const signal = current.signal;
  clear(main);
  const signedIn = Boolean(session.key());
  nav.hidden = !signedIn;
  signOutButton.hidden = !signedIn;
  if (!signedIn) {
    signIn(message);
    return;
  }
  const {parts, query} = route();
  const view = parts[0] || 'documents';
  for (const link of nav.querySelectorAll('a')) {
    if (link.dataset.view === view) {
      link.setAttribute('aria-current', 'page');
    } else {
      link.removeAttribute('aria-current');
    }
  }
  document.title = `Quarry · ${view}`;
  if (view === 'documents' && parts[1]) {
    documentView(main, parts[1], query, signal);
  } else if (view === 'documents') {
    documentsView(main, query, signal);
  } else if (view === 'search') {
    searchView(main, query, signal);
  } else if (view === 'ask') {
    askView(main, query, signal);
  } else if (view === 'analyses' && parts[1]) {
    analysisView(main, parts[1], signal);
  } else if (view === 'analyses') {
    analysesView(main, query, signal);
  } else {
    main.append(heading('Not found'), el('p', {}, 'There is no such page in the console. ',
      el('a', {href: '#/documents'}, 'Go to the documents.')));
  }
  // The item a link pointed at takes the focus itself; otherwise the view's title does.
  if (!main.querySelector('.target')) {
    const title = main.querySelector('h1');
    if (title && document.activeElement !== title) {
      title.focus({preventScroll: true});
    }
  }
}

function signIn(message) {
  document.title = 'Quarry · sign in';
  const input = el('input', {type: 'password', id: 'api-key', name: 'api-key', required: true,
    autocomplete: 'off', spellcheck: 'false', 'aria-describedby': 'api-key-help'});
  const problem = el('div', {class: 'sign-in-problem'});
  if (message) {
    problem.append(errorBox({code: 'signed_out', message}));
  }
  const form = el('form', {class: 'sign-in', onsubmit: async e => {
    e.preventDefault();
    const key = input.value.trim();
    clear(problem);
    try {
      await checkKey(key);
    } catch (error) {
      problem.append(errorBox(error));
      input.focus();
      return;
    }
    session.signIn(key);
    input.value = '';
    render();
  }},
  el('label', {for: 'api-key'}, 'Tenant API key'), input,
  el('p', {id: 'api-key-help', class: 'help'}, 'A key of your tenant (qk_…). It is kept in this tab only ',
    '(session storage) and sent to this gateway as Authorization: Bearer; never in the address or a cookie.'),
  el('button', {type: 'submit', id: 'sign-in'}, 'Sign in'), problem);
  main.append(heading('Sign in'), form);
  input.focus();
}

function signOut(message) {
  session.signOut();
  history.replaceState(null, '', '#/documents');
  render(message);
}

signOutButton.addEventListener('click', () => signOut());
whenUnauthorized(message => {
  if (session.key()) {
    signOut(`the gateway refused the key (${message}); sign in again`);
  }
});
window.addEventListener('hashchange', () => {
  if (location.hash.startsWith('#/') || location.hash === '') {
    render();
  }
});
render();
