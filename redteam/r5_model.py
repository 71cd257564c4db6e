"""A scripted OpenAI-compatible model (stdlib only) for round 5: it runs what the question tells it.

    python3 r5_model.py [PORT]        (default 18582)

The question (the last user message the gateway sends, which contains the caller's question) may
carry cells between the markers  <<CELL>> ... <</CELL>>  (several allowed). The model calls
execute_code with each cell in turn, then answers {"answer": ..., "program": <last cell>}.
Without markers it runs `print(1)`. A cell body "SLEEP n" makes the model itself take n seconds.
llm() calls (no tools in the request) get a fixed short reply. Everything is stdlib; one thread
per request.
"""
import json, re, sys, time, uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CELL = re.compile(r"<<CELL>>(.*?)<</CELL>>", re.S)


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class H(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.reply({"object": "list", "data": [{"id": "rt5", "object": "model"}]})

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(n) or b"{}")
        msgs = body.get("messages", [])
        pt = max(10, len(json.dumps(msgs)) // 4)  # a real endpoint counts the prompt
        usage = {"prompt_tokens": pt, "completion_tokens": 5, "total_tokens": pt + 5}
        if not body.get("tools"):  # an llm() call from code; a prompt starting SLOW takes 30 s
            if "SLOW" in text_of(msgs[-1].get("content"))[:100]:
                time.sleep(30)
            return self.reply(self.completion({"role": "assistant", "content": "ok"}, usage))
        everything = "\n".join(text_of(m.get("content")) for m in msgs if m.get("role") == "user")
        cells = [c.strip("\n") for c in CELL.findall(everything)] or ["print(1)"]
        done = sum(1 for m in msgs if m.get("role") == "tool")
        if done < len(cells):
            code = cells[done]
            m = re.match(r"SLEEP (\d+)", code)
            if m:
                time.sleep(int(m.group(1)))
                code = "print('slept')"
            call = {"id": "call_" + uuid.uuid4().hex[:12], "type": "function",
                    "function": {"name": "execute_code", "arguments": json.dumps({"code": code})}}
            msg = {"role": "assistant", "content": None, "tool_calls": [call]}
            return self.reply(self.completion(msg, usage, "tool_calls"))
        answer = json.dumps({"answer": "done after %d cells" % done, "program": cells[-1]})
        return self.reply(self.completion({"role": "assistant", "content": answer}, usage))

    def completion(self, msg, usage, finish="stop"):
        return {"id": "chatcmpl-" + uuid.uuid4().hex, "object": "chat.completion", "created": int(time.time()),
                "model": "rt5", "choices": [{"index": 0, "message": msg, "finish_reason": finish}], "usage": usage}

    def reply(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18582
    ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
