"""The second wall: a seccomp filter the runner puts itself under once its stream to the gateway is up.

Meant to hold alone, for code that has left the restricted language and runs as the runner itself
(with ctypes, raw syscalls, anything): it cannot run a program, make a process, touch another
process, open a socket or a connection, open a file for writing, or reach the kernel surfaces
(mount, namespaces, bpf, perf, keyrings, io_uring...) that user code never needs. Each of those
fails with EPERM (clone3 with ENOSYS, so that glibc falls back to clone, whose flags a filter can
read). It is a deny-list over an allowed default on purpose: Python and grpcio's threads keep
using what they use (futex, epoll, eventfd, mmap, reads and writes on descriptors already open),
and the list is of what an attacker wants, not of what CPython happens to call.

What it does not stop: reading what the runner can read (/documents, the image), burning the CPU
and memory the container allows, and writing on the descriptors the runner already holds, among
them its one gRPC stream to the gateway, which the gateway must therefore treat as untrusted input,
as it does. The filter covers every thread (TSYNC) and is inherited by nothing, since no process can
be made. A system call of another architecture's table (x32, int 0x80) kills the process.
"""
import errno
import os

import seccomp

# Flags of clone(2) that make a new namespace (linux/sched.h).
_CLONE_NEW = {"CLONE_NEWNS": 0x00020000, "CLONE_NEWCGROUP": 0x02000000, "CLONE_NEWUTS": 0x04000000,
              "CLONE_NEWIPC": 0x08000000, "CLONE_NEWUSER": 0x10000000, "CLONE_NEWPID": 0x20000000,
              "CLONE_NEWNET": 0x40000000, "CLONE_NEWTIME": 0x00000080}
_CLONE_THREAD = 0x00010000
_O_ACCMODE, _O_WRONLY, _O_RDWR = 0o3, 0o1, 0o2
_O_CREAT, _O_TRUNC = 0o100, 0o1000

# Refused outright.
DENIED = (
    # a new program or process
    "execve", "execveat", "fork", "vfork",
    # another process
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd", "pidfd_send_signal",
    "kcmp", "tkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "process_madvise",
    # sockets and connections (the gateway's stream is open before the filter is)
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    # files: no writes (the root is read-only and /tmp is the container's; the runner writes no file)
    "creat", "openat2", "truncate", "ftruncate", "rename", "renameat", "renameat2", "unlink", "unlinkat",
    "mkdir", "mkdirat", "rmdir", "symlink", "symlinkat", "link", "linkat", "chmod", "fchmod", "fchmodat",
    "chown", "fchown", "lchown", "fchownat", "mknod", "mknodat", "utime", "utimes", "utimensat",
    "futimesat", "open_by_handle_at", "name_to_handle_at",
    # mounts, namespaces and the kernel's other surfaces
    "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen", "fsconfig",
    "fsmount", "fspick", "mount_setattr", "unshare", "setns", "bpf", "perf_event_open", "personality",
    "keyctl", "add_key", "request_key", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "init_module", "finit_module", "delete_module", "kexec_load",
    "kexec_file_load", "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
    "fanotify_init", "lookup_dcookie", "iopl", "ioperm", "modify_ldt", "uselib", "vhangup", "syslog",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid", "setfsuid", "setfsgid",
    "setgroups", "capset",
)


def build():
    """The filter, not yet loaded (tests export it to look at it)."""
    deny = seccomp.ERRNO(errno.EPERM)
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    f.set_attr(seccomp.Attr.CTL_TSYNC, 1)  # every thread, grpc's included, not only the caller
    f.set_attr(seccomp.Attr.ACT_BADARCH, seccomp.KILL_PROCESS)  # x32 and int 0x80 system calls
    for name in DENIED:
        try:
            f.add_rule(deny, name)
        except (RuntimeError, ValueError):  # unknown to this kernel's and libseccomp's table
            continue
    # Threads only: a clone without CLONE_THREAD is a fork, and none may make a namespace.
    f.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
    for flag in _CLONE_NEW.values():
        f.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
    f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")  # its flags are behind a pointer
    # Signals to itself only (pthread_kill, the cell timer); kill(0)/kill(-1) are other processes too.
    pid = os.getpid()
    f.add_rule(deny, "kill", seccomp.Arg(0, seccomp.NE, pid))
    f.add_rule(deny, "tgkill", seccomp.Arg(0, seccomp.NE, pid))
    # Opening for reading only: no file to write, and no /proc/<pid>/mem of another process to patch.
    for call, flags_arg in (("open", 1), ("openat", 2)):
        for mode in (_O_WRONLY, _O_RDWR):
            f.add_rule(deny, call, seccomp.Arg(flags_arg, seccomp.MASKED_EQ, _O_ACCMODE, mode))
        for flag in (_O_CREAT, _O_TRUNC):
            f.add_rule(deny, call, seccomp.Arg(flags_arg, seccomp.MASKED_EQ, flag, flag))
    return f


def install():
    """Puts this process, all its threads, under the filter; there is no way back."""
    build().load()


def in_force():
    """The Seccomp line of /proc/self/status: 2 once a filter is loaded."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("Seccomp:"):
                return line.split()[1] == "2"
    return False
