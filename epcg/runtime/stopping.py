"""Stops by signal that hold: SIGTERM and SIGHUP end work like Ctrl-C, and a stop Python swallowed is raised again.

A signal handler runs in the main thread between two bytecodes, wherever that thread is. When it is in a
finalizer (``__del__``) or a weakref callback that garbage collection runs, Python prints the handler's
exception as "Exception ignored in ..." and goes on, so the stop would be lost and the work would run to its
end. While :func:`handled` is active, :data:`sys.unraisablehook` recognises such an exception and delivers
its signal again a moment later (``_thread.interrupt_main`` from a timer thread), where the same exception is
raised anew; until it lands outside garbage collection.
"""

from __future__ import annotations

import _thread
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from epcg.runtime.errors import Interrupted

Handler = Callable[[int, FrameType | None], None]

EXIT_STATUS = {signal.SIGTERM: 143, signal.SIGHUP: 129}
"""Exit status after a stop by signal (128 + its number, as a shell reports it); Ctrl-C is 130."""

_raised: dict[int, BaseException] = {}
"""The exception each signal's handler last raised, so the hook can tell it from other unraisable ones."""
_again: dict[int, BaseException] = {}
"""Exceptions Python swallowed, raised again when their signal is delivered again."""
_hooking = False
"""True while the unraisable hook runs (an exception raised there is swallowed too)."""
REDELIVERY_DELAY = 0.05
"""Seconds after a swallowed stop before its signal is delivered again."""


@contextlib.contextmanager
def handled(handlers: dict[int, Handler]) -> Iterator[None]:
    """Install ``handlers`` for their signals while the block runs, then the previous handlers again.

    An exception a handler raises that Python swallows is raised again. Only the main thread can catch
    signals: elsewhere the block runs without."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _raising(handler)) for signum, handler in handlers.items()}
    hook = sys.unraisablehook
    sys.unraisablehook = _redeliver(hook)
    try:
        yield
    finally:
        sys.unraisablehook = hook
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)
            _raised.pop(signum, None)
            _again.pop(signum, None)


@contextlib.contextmanager
def caught_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP (the terminal closed) raise :class:`Interrupted` carrying the signal, which callers
    handle like Ctrl-C: futures cancelled, whole chunks kept, the previous export kept."""

    def on_term(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    with handled({signum: on_term for signum in EXIT_STATUS}):
        yield


def exit_status(exc: KeyboardInterrupt) -> int:
    """The exit status for work stopped by ``exc`` (Ctrl-C, or :class:`Interrupted` with its signal)."""
    signum = exc.args[0] if isinstance(exc, Interrupted) and exc.args else None
    return EXIT_STATUS.get(signum, 130) if signum is not None else 130


def _raising(handler: Handler) -> Handler:
    """``handler``, raising a swallowed exception of its signal again instead when there is one."""

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if _hooking and signum in _again:  # still inside the hook: raised here, it would be swallowed again
            _deliver_later(signum)
            return
        again = _again.pop(signum, None)
        try:
            if again is not None:
                raise again
            handler(signum, frame)
        except BaseException as exc:
            _raised[signum] = exc
            raise

    return on_signal


def _redeliver(hook: Callable[[Any], None]) -> Callable[[Any], None]:
    """An unraisable hook that delivers the signal again whose handler's exception was swallowed, and passes
    anything else to ``hook``."""

    def on_unraisable(unraisable: Any) -> None:
        global _hooking
        _hooking = True
        try:
            for signum, exc in list(_raised.items()):
                if unraisable.exc_value is exc:
                    _again[signum] = exc
                    _deliver_later(signum)
                    return
            hook(unraisable)
        finally:
            _hooking = False

    return on_unraisable


def _deliver_later(signum: int) -> None:
    """Deliver ``signum`` to the main thread again from another thread, once this hook or finalizer is left."""
    timer = threading.Timer(REDELIVERY_DELAY, _thread.interrupt_main, args=(signum,))
    timer.daemon = True
    timer.start()
