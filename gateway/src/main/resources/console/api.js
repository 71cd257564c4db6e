// The console's only way to the gateway: the REST API of this origin, with the tenant's key as
// 'Authorization: Bearer'. The key lives in sessionStorage (this tab, until it closes or signs
// out): never in local storage, a URL, a cookie or a log.

const KEY = 'quarry.apiKey';

export const session = {
  key() {
    return sessionStorage.getItem(KEY);
  },
  signIn(key) {
    sessionStorage.setItem(KEY, key);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
  },
};

/** An answer of the API that is not a success: its status, and the error body's code and message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Called when the gateway refuses the key (401): the console signs out. */
let onUnauthorized = () => {};
export function whenUnauthorized(handler) {
  onUnauthorized = handler;
}

function headers(extra = {}, key = session.key()) {
  const out = {...extra};
  if (key) {
    out.Authorization = `Bearer ${key}`;
  }
  return out;
}

async function failure(response) {
  let code = `http_${response.status}`;
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (ignored) {
    // not JSON: the status says what there is to say
  }
  if (response.status === 401) {
    onUnauthorized(message);
  }
  return new ApiError(response.status, code, message);
}

/** fetch() of the API; a network failure becomes an ApiError too. */
async function send(method, path, {body, accept = 'application/json', signal, key} = {}) {
  const extra = {Accept: accept};
  if (body !== undefined) {
    extra['Content-Type'] = 'application/json';
  }
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: headers(extra, key),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch (e) {
    if (e.name === 'AbortError') {
      throw e;
    }
    throw new ApiError(0, 'network_error', `the gateway could not be reached (${e.message})`);
  }
  if (!response.ok) {
    throw await failure(response);
  }
  return response;
}

export async function getJson(path, options) {
  return (await send('GET', path, options)).json();
}

export async function postJson(path, body, options) {
  return (await send('POST', path, {...options, body})).json();
}

export async function getText(path, options) {
  return (await send('GET', path, {...options, accept: '*/*'})).text();
}

export async function remove(path, options) {
  await send('DELETE', path, options);
}

/** Whether a key is good: one page of one document, with that key. */
export async function checkKey(key) {
  await send('GET', '/v1/documents?limit=1', {key});
}

/** Parses server-sent events out of a growing text; returns the unparsed rest. */
function parseEvents(text, onEvent) {
  let rest = text;
  let end;
  while ((end = rest.indexOf('\n\n')) >= 0) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let type = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) {
        type = line.slice(6).trim();
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
    if (data.length > 0) {
      let parsed;
      try {
        parsed = JSON.parse(data.join('\n'));
      } catch (e) {
        parsed = {text: data.join('\n')};
      }
      onEvent(type, parsed);
    }
  }
  return rest;
}

/**
 * A streamed answer (fetch with Accept: text/event-stream; EventSource cannot send a key):
 * onOpen(response) once the head is in, onEvent(type, data) for each event, resolved at its end.
 */
export async function stream(method, path, body, {onOpen, onEvent, signal}) {
  const response = await send(method, path, {body, accept: 'text/event-stream', signal});
  if (onOpen) {
    onOpen(response);
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let pending = '';
  for (;;) {
    const {value, done} = await reader.read();
    if (done) {
      break;
    }
    pending = parseEvents(pending + decoder.decode(value, {stream: true}), onEvent);
  }
  parseEvents(pending + decoder.decode() + '\n\n', onEvent);
}

/**
 * Uploads one file (multipart, field 'file', with its path as 'uri') and follows its ingest:
 * onProgress({phase: 'upload', loaded, total}) as the bytes go, then the ingest events
 * ({phase: 'converted' | 'embedded', ...}). Resolves with the ingest result, rejects with an ApiError.
 * XMLHttpRequest, because fetch reports no upload progress.
 */
export function upload(file, uri, onProgress, signal) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', '/v1/documents');
    const key = session.key();
    if (key) {
      xhr.setRequestHeader('Authorization', `Bearer ${key}`);
    }
    xhr.setRequestHeader('Accept', 'text/event-stream');
    let seen = 0;
    let pending = '';
    let result = null;
    let error = null;
    const handle = (type, data) => {
      if (type === 'result') {
        result = data;
      } else if (type === 'error') {
        const e = data.error || {};
        error = new ApiError(xhr.status, e.code || 'ingest_failed', e.message || 'the ingest failed');
      } else {
        onProgress({phase: type, ...data});
      }
    };
    const streamed = () => (xhr.getResponseHeader('Content-Type') || '').startsWith('text/event-stream');
    const events = () => {
      if (!streamed()) {
        return;
      }
      const text = xhr.responseText;
      pending = parseEvents(pending + text.slice(seen), handle);
      seen = text.length;
    };
    xhr.upload.onprogress = e => onProgress({phase: 'upload', loaded: e.loaded, total: e.lengthComputable ? e.total : file.size});
    xhr.onprogress = events;
    xhr.onerror = () => reject(new ApiError(0, 'network_error', 'the upload could not reach the gateway'));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'the upload was stopped'));
    xhr.onload = () => {
      if (xhr.status >= 400) {
        let code = `http_${xhr.status}`;
        let message = `${xhr.status} ${xhr.statusText}`;
        try {
          const body = JSON.parse(xhr.responseText);
          code = body.error.code || code;
          message = body.error.message || message;
        } catch (ignored) {
          // not JSON
        }
        if (xhr.status === 401) {
          onUnauthorized(message);
        }
        reject(new ApiError(xhr.status, code, message));
        return;
      }
      events();
      pending = parseEvents(pending + '\n\n', handle);
      if (!streamed() && xhr.status < 300) {
        result = JSON.parse(xhr.responseText); // an unchanged document may answer at once
      }
      if (error) {
        reject(error);
      } else if (result) {
        resolve(result);
      } else {
        reject(new ApiError(xhr.status, 'no_result', 'the ingest stream ended without a result'));
      }
    };
    if (signal) {
      signal.addEventListener('abort', () => xhr.abort(), {once: true});
    }
    const form = new FormData();
    form.append('uri', uri);
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
