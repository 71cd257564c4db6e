// Python highlighting for the model's code: the code is cut into tokens and each becomes a <span>
// whose text is set with textContent, so nothing in the code is ever read as markup.
import {el} from './dom.js';

const KEYWORDS = new Set(['False', 'None', 'True', 'and', 'as', 'assert', 'async', 'await', 'break', 'class',
  'continue', 'def', 'del', 'elif', 'else', 'except', 'finally', 'for', 'from', 'global', 'if', 'import', 'in',
  'is', 'lambda', 'nonlocal', 'not', 'or', 'pass', 'raise', 'return', 'try', 'while', 'with', 'yield']);
// The names Quarry puts in a cell's namespace (CONTRACT.md), and the common builtins.
const BUILTINS = new Set(['search', 'list_documents', 'llm', 'documents', 'print', 'len', 'range', 'sorted',
  'sum', 'min', 'max', 'abs', 'round', 'int', 'float', 'str', 'list', 'dict', 'set', 'tuple', 'enumerate', 'zip',
  'map', 'filter', 'any', 'all', 'isinstance', 'getattr', 'hasattr', 'json', 're', 'math', 'Path']);

// One alternative per token kind, tried in this order at each position.
const TOKEN = new RegExp([
  '(#[^\\n]*)',                                                          // 1 comment
  '((?:[rRbBfFuU]{1,2})?(?:\'\'\'[\\s\\S]*?(?:\'\'\'|$)|"""[\\s\\S]*?(?:"""|$)' +
    '|\'(?:\\\\.|[^\'\\\\\\n])*(?:\'|$)|"(?:\\\\.|[^"\\\\\\n])*(?:"|$)))', // 2 string
  '(\\b\\d[\\d_]*(?:\\.\\d*)?(?:[eE][+-]?\\d+)?j?\\b|\\.\\d+\\b)',     // 3 number
  '([A-Za-z_][A-Za-z0-9_]*)',                                           // 4 name
].join('|'), 'g');

/** The tokens of code: [{kind, text}], covering every character exactly once. */
export function tokens(code) {
  const out = [];
  let last = 0;
  TOKEN.lastIndex = 0;
  let m;
  while ((m = TOKEN.exec(code)) !== null) {
    if (m[0].length === 0) {
      TOKEN.lastIndex++;
      continue;
    }
    if (m.index > last) {
      out.push({kind: 'plain', text: code.slice(last, m.index)});
    }
    let kind;
    if (m[1] !== undefined) {
      kind = 'comment';
    } else if (m[2] !== undefined) {
      kind = 'string';
    } else if (m[3] !== undefined) {
      kind = 'number';
    } else if (KEYWORDS.has(m[4])) {
      kind = 'keyword';
    } else if (BUILTINS.has(m[4])) {
      kind = 'builtin';
    } else {
      kind = 'name';
    }
    out.push({kind, text: m[0]});
    last = m.index + m[0].length;
  }
  if (last < code.length) {
    out.push({kind: 'plain', text: code.slice(last)});
  }
  return out;
}

/** A <pre><code> of code, highlighted with spans of text. */
export function codeBlock(code, label) {
  const codeEl = el('code', {class: 'python'});
  for (const token of tokens(String(code ?? ''))) {
    if (token.kind === 'plain' || token.kind === 'name') {
      codeEl.appendChild(document.createTextNode(token.text));
    } else {
      codeEl.appendChild(el('span', {class: `tok-${token.kind}`}, token.text));
    }
  }
  return el('pre', {class: 'code', tabindex: '0', 'aria-label': label || 'Python code'}, codeEl);
}
