"""A server the grader starts (the graph server's redis-server) outlives nobody.

Run as `python -I -S lifeline.py PARENT_PID COMMAND...` in a session of its own: it starts COMMAND in its
process group, ends with COMMAND's exit code, and kills the whole group when PARENT_PID is no longer its
parent (the grader ended by any signal, SIGKILL included).  Killing the group (what a timeout does) stops
both.  It imports nothing but `os`, `signal`, `sys` and `time`: about 10 ms to start.
"""

import os
import signal
import sys
import time

POLL_S = 0.2


def main() -> None:
    parent, command = int(sys.argv[1]), sys.argv[2:]
    child = os.fork()
    if child == 0:
        try:
            os.execv(command[0], command)
        finally:
            os._exit(127)
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        if os.getppid() != parent:
            os.killpg(0, signal.SIGKILL)
        time.sleep(POLL_S)


if __name__ == "__main__":
    main()
