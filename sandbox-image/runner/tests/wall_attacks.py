"""What code that has left the language would try, run under the runner's seccomp filter.

Prints a JSON object: for each attempt, 1 (EPERM) when the filter refused it, else what happened;
plus what the runner itself needs, which must still work. Run by test_wall.py on the host and by
the gateway's SecondWallTest inside a real sandbox container (python3 -c, with the image's runner).
"""
import ctypes, json, os, signal, socket, subprocess, threading
from quarry_runner import wall
wall.install()
libc = ctypes.CDLL(None, use_errno=True)
results = {"in_force": wall.in_force()}
# Another process to go after: the parent by default, the runner when the container test names it.
target = int(os.environ.get("TARGET_PID") or os.getppid())

def attempt(name, action):
    try:
        action()
        results[name] = "done"
    except OSError as e:
        results[name] = e.errno

def raw(name, value):
    results[name] = ctypes.get_errno() if value == -1 else "done"

attempt("execve", lambda: os.execv("/bin/true", ["true"]))
attempt("subprocess", lambda: subprocess.run(["true"]))
attempt("fork", os.fork)
attempt("socket", socket.socket)
attempt("unix socket", lambda: socket.socket(socket.AF_UNIX))
attempt("socketpair", socket.socketpair)
attempt("kill another process", lambda: os.kill(target, 0))
attempt("kill the process group", lambda: os.kill(0, 0))
attempt("open for writing", lambda: open(os.environ["PROBE_FILE"], "w"))
attempt("open /proc/self/mem read-write", lambda: open("/proc/self/mem", "r+b"))
attempt("open another process's mem read-write", lambda: open(f"/proc/{target}/mem", "r+b"))
raw("ptrace", libc.ptrace(16, target, 0, 0))  # PTRACE_ATTACH
raw("process_vm_readv", libc.process_vm_readv(target, 0, 0, 0, 0, 0))
raw("unshare", libc.unshare(0x10000000))  # CLONE_NEWUSER
raw("personality", libc.personality(0x0040000))  # ADDR_NO_RANDOMIZE
raw("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
raw("bpf", libc.syscall(321, 0, 0, 0))
raw("perf_event_open", libc.syscall(298, 0, 0, -1, -1, 0))
raw("io_uring_setup", libc.syscall(425, 1, 0))
raw("userfaultfd", libc.syscall(323, 0))
raw("keyctl", libc.syscall(250, 0, 0, 0, 0, 0))
# What the runner itself needs must still work.
results["read a file"] = len(open("/proc/self/status").read()) > 0
thread = threading.Thread(target=lambda: results.__setitem__("thread", True))
thread.start()
thread.join()
got = []
signal.signal(signal.SIGALRM, lambda *_: got.append(1))
signal.pthread_kill(threading.main_thread().ident, signal.SIGALRM)
results["signal to itself"] = got == [1]
attempt("kill itself with 0", lambda: os.kill(os.getpid(), 0))
print(json.dumps(results))
