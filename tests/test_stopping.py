"""A stop by signal holds wherever the signal lands: also in a finalizer or a weakref callback, where Python
swallows the handler's exception. Each case is a real process that gets a real SIGTERM or SIGUSR1 there."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import gc, os, signal, sys, time, weakref
    from epcg.runtime.errors import Interrupted
    from epcg.runtime.stopping import caught_signals, exit_status, handled

    where, how = sys.argv[1], sys.argv[2]
    signum = signal.SIGUSR1 if how == "handled" else signal.SIGTERM

    def signalled_here(*_):
        os.kill(os.getpid(), signum)
        for _ in range(10_000):  # the handler runs at one of these bytecodes, inside the finalizer
            pass

    class Finalized:
        def __del__(self):
            signalled_here()

    def garbage():
        if where == "del":
            Finalized()
        elif where == "weakref":
            class Target:
                pass
            target = Target()
            target.ref = weakref.ref(target, signalled_here)
            del target
            gc.collect()
        elif where == "cycle":
            a, b = Finalized(), Finalized()
            a.other, b.other = b, a
            del a, b
            gc.collect()

    def once(signum, _frame):
        raise Interrupted(signum)

    stops = {"caught": caught_signals(), "handled": handled({signum: once})}
    if how == "plain":
        signal.signal(signum, once)
    try:
        with stops.get(how) or open(os.devnull):
            garbage()
            for _ in range(200):
                time.sleep(0.01)
        print("not stopped")
    except KeyboardInterrupt as exc:
        print("stopped", exit_status(exc) if signum == signal.SIGTERM else exc.args[0])
""")


def run(where: str, how: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SCRIPT, where, how], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("where", ["del", "weakref", "cycle"])
def test_a_signal_in_a_finalizer_still_stops(where: str) -> None:
    plain = run(where, "plain")
    assert plain.stdout.strip() == "not stopped" and "Exception ignored" in plain.stderr  # the class exists
    caught = run(where, "caught")
    assert caught.stdout.strip() == "stopped 143", caught.stderr
    assert "Exception ignored" not in caught.stderr
    drained = run(where, "handled")
    assert drained.stdout.strip() == "stopped 10", drained.stderr  # SIGUSR1, as the batch driver takes it

