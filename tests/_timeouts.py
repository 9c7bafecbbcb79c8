"""A wall-clock bound for one test case (main thread, SIGALRM), shared by the fuzz and
property tests so that a hang fails the case instead of stalling the suite."""

import contextlib
import signal


class TimeLimitExceeded(Exception):
    """A case ran longer than its bound (a hang)."""


@contextlib.contextmanager
def time_limit(seconds, what="the case"):
    """Raise :class:`TimeLimitExceeded` in the main thread after ``seconds`` (float)."""

    def on_alarm(signum, frame):
        raise TimeLimitExceeded(f"{what} took more than {seconds} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
