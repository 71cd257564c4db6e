"""Entry point: python3 -m quarry_runner (the image's ENTRYPOINT).

Once the channel to the gateway is up, the runner puts itself under its seccomp filter (wall.py)
before it serves anything; without python3-seccomp it refuses to start.

Settings come from the environment the gateway gives the container (nothing secret is in it):
  QUARRY_SOCKET     the gateway's Unix socket for this sandbox (default /run/quarry/sandbox.sock)
  QUARRY_DOCUMENTS  the tenant's documents, read-only (default /documents)
"""
import os
import sys
import time

STARTED_AT = time.monotonic()

# Pre-import everything a cell can need, so the first cell pays no import cost.
import grpc  # noqa: E402

from quarry.sandbox.v1 import sandbox_pb2_grpc  # noqa: E402

from . import wall  # noqa: E402
from .session import MAX_MESSAGE_BYTES, Session  # noqa: E402

# How long the gateway's socket may take to accept the runner's connection.
CONNECT_SECONDS = 30


def main():
    socket_path = os.environ.get("QUARRY_SOCKET", "/run/quarry/sandbox.sock")
    documents_root = os.environ.get("QUARRY_DOCUMENTS", "/documents")
    options = [("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
               ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    with grpc.insecure_channel(f"unix://{socket_path}", options=options) as channel:
        try:
            # The one connection the runner will ever make; after the filter it could make no other.
            grpc.channel_ready_future(channel).result(timeout=CONNECT_SECONDS)
        except grpc.FutureTimeoutError:
            print(f"quarry-runner: no gateway on {socket_path} within {CONNECT_SECONDS} s", file=sys.stderr)
            return 1
        wall.install()
        try:
            Session(sandbox_pb2_grpc.SandboxStub(channel), documents_root, STARTED_AT).run()
        except grpc.RpcError as e:
            # The gateway went away: the container is about to be removed anyway.
            print(f"quarry-runner: stream ended: {e.code()}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
