"""Run a command in a new terminal, press Ctrl-C after DELAY seconds (the
terminal sends SIGINT to its foreground process group), save what the
terminal printed to OUTPUT and print the command's exit status as a shell
would (128 + signal).

usage: pty_ctrlc.py DELAY OUTPUT TIMEFILE CMD [ARGS...]
TIMEFILE ("" for none) receives the wall-clock time of the Ctrl-C.
"""
import os
import pty
import select
import sys
import time

delay, output, timefile = float(sys.argv[1]), sys.argv[2], sys.argv[3]
argv = sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
data = bytearray()
start = time.monotonic()
sent = False
deadline = start + delay + 60
while time.monotonic() < deadline:
    if not sent and time.monotonic() - start >= delay:
        os.write(fd, b"\x03")
        sent = True
        if timefile:
            with open(timefile, "w") as f:
                f.write(f"{time.time():.6f}\n")
    ready, _, _ = select.select([fd], [], [], 0.05)
    if ready:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
_, status = os.waitpid(pid, 0)
with open(output, "wb") as f:
    f.write(bytes(data).replace(b"\r\n", b"\n"))
if os.WIFSIGNALED(status):
    print(128 + os.WTERMSIG(status))
else:
    print(os.WEXITSTATUS(status))
