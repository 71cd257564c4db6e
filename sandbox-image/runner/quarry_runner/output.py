"""Captured cell output: capped, streamed in chunks, always valid UTF-8."""

# Output is sent when this much is buffered, before a callback, and at the end of the cell:
# fewer, larger messages than one per print().
FLUSH_CHARS = 8_192


class OutputCapture:
    """Collects stdout and stderr of one cell in order, up to a character budget shared by both."""

    def __init__(self, emit, limit):
        self._emit = emit
        self._limit = limit
        self._remaining = limit
        self._pending = []  # [channel, text] pieces in the order written
        self._pending_chars = 0
        self.truncated = False
        self.stdout = _Channel(self, "stdout")
        self.stderr = _Channel(self, "stderr")

    def write(self, channel, text):
        if self.truncated or not text:
            return
        text = _valid_utf8(text)
        if len(text) > self._remaining:
            text = text[:self._remaining] + self.marker()
            self.truncated = True
            self._remaining = 0
        else:
            self._remaining -= len(text)
        if self._pending and self._pending[-1][0] == channel:
            self._pending[-1][1] += text
        else:
            self._pending.append([channel, text])
        self._pending_chars += len(text)
        if self._pending_chars >= FLUSH_CHARS:
            self.flush()

    def fit(self, text):
        """What of `text` (the REPL value) still fits the budget, with the marker when cut."""
        text = _valid_utf8(text)
        if self.truncated:
            return ""
        if len(text) > self._remaining:
            self.truncated = True
            return text[:self._remaining] + self.marker()
        self._remaining -= len(text)
        return text

    def marker(self):
        return f"\n[output truncated: over the limit of {self._limit} characters]\n"

    def flush(self):
        pending, self._pending, self._pending_chars = self._pending, [], 0
        for channel, text in pending:
            self._emit(channel, text)


class _Channel:
    """What sys.stdout / sys.stderr point at while a cell runs."""

    def __init__(self, capture, name):
        self._capture = capture
        self._name = name

    def write(self, text):
        self._capture.write(self._name, str(text))
        return len(text)

    def flush(self):
        pass

    def isatty(self):
        return False


def _valid_utf8(text):
    # Unpaired surrogates cannot travel in a protobuf string; they are shown escaped instead.
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
