import json, base64, sys, time, re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
LOG = open('/tmp/redteam-r9-model.log', 'a')
def text_of(m):
    c = m.get('content')
    if isinstance(c, list):
        return ''.join(p.get('text', '') for p in c if isinstance(p, dict))
    return c or ''
class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        n = int(self.headers.get('Content-Length', 0))
        body = json.loads(self.rfile.read(n))
        msgs = body.get('messages', [])
        # last user message and the tool results after it
        last_user = max(i for i, m in enumerate(msgs) if m['role'] == 'user')
        q = text_of(msgs[last_user])
        tools_after = sum(1 for m in msgs[last_user+1:] if m['role'] == 'tool')
        LOG.write(json.dumps({'t': time.time(), 'n': len(msgs), 'q': q[:200], 'tools_after': tools_after, 'max_tokens': body.get('max_completion_tokens') or body.get('max_tokens')}) + '\n'); LOG.flush()
        ptoks = max(1, sum(len(text_of(x)) + len(json.dumps(x.get('tool_calls') or '')) for x in msgs) // 4)
        LOG.write(json.dumps({'prompt_chars': ptoks*4}) + '\n'); LOG.flush()
        m = re.search(r'CODES:([A-Za-z0-9+/=;_-]+)', q)
        sleep = re.search(r'SLEEP:(\d+)', q)
        if sleep: time.sleep(int(sleep.group(1)))
        codes = [base64.b64decode(c).decode() for c in m.group(1).split(';') if c] if m else []
        is_llm = not body.get('tools')
        if is_llm:
            msg = {'role': 'assistant', 'content': 'LLM-REPLY to: ' + q[:60]}
        elif tools_after < len(codes):
            msg = {'role': 'assistant', 'content': None, 'tool_calls': [{'id': 'call_%d_%d' % (len(msgs), tools_after), 'type': 'function',
                   'function': {'name': 'execute_code', 'arguments': json.dumps({'code': codes[tools_after]})}}]}
        else:
            last_tool = text_of(msgs[-1]) if msgs[-1]['role'] == 'tool' else ''
            msg = {'role': 'assistant', 'content': json.dumps({'answer': 'done: ' + last_tool[:300], 'program': 'print(1)'})}
        out = {'id': 'x', 'object': 'chat.completion', 'created': int(time.time()), 'model': body.get('model', 'm'),
               'choices': [{'index': 0, 'message': msg, 'finish_reason': 'tool_calls' if msg.get('tool_calls') else 'stop'}],
               'usage': {'prompt_tokens': ptoks, 'completion_tokens': 10, 'total_tokens': ptoks + 10}}
        data = json.dumps(out).encode()
        self.send_response(200); self.send_header('Content-Type', 'application/json'); self.send_header('Content-Length', str(len(data))); self.end_headers(); self.wfile.write(data)
ThreadingHTTPServer(('127.0.0.1', int(sys.argv[1])), H).serve_forever()
