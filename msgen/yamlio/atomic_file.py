"""Writing an output file whole or not at all, as the user's own file stays.

The text goes to a temporary file beside the target, which then replaces it in one rename, so a
reader never sees half an output. Around that:
- the target keeps its permissions; a new file gets the ones the umask gives (as `>` would),
  not the 0600 of a private temporary file;
- a symlink is written through: its target is replaced and the link stays a link, as a shell
  redirection would do;
- SIGTERM and SIGHUP (a CI runner cancelling, a closed terminal) remove the temporary file
  before msgen dies of the signal, as Ctrl-C (SIGINT) already does.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO

from ..model.exit_status import EXIT_SIGNALLED

#: Signals that end msgen while it writes; each removes the temporary file first.
_CLEAN_UP_ON = (signal.SIGTERM, signal.SIGHUP)


class OutputError(Exception):
    """The output file cannot be written (no such directory, no permission): the user's to fix."""


class _Signalled(BaseException):
    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def write_whole(path: str, text: str | TextIO) -> None:
    """Replace `path` (or the file its symlink names) with `text` (or what the open file
    `text` holds from where it stands), atomically."""
    target = os.path.realpath(path)
    directory = os.path.dirname(target)
    if not os.path.isdir(directory):
        raise OutputError(f"{path}: no such directory: {os.path.dirname(path) or '.'}")
    try:
        mode: int | None = os.stat(target).st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    with _signals_raise():
        temp = ""
        try:
            temp = _create_temporary(directory)
            with open(temp, "w", encoding="utf-8") as stream:
                if isinstance(text, str):
                    stream.write(text)
                else:
                    shutil.copyfileobj(text, stream, 1 << 20)
            if mode is not None:
                os.chmod(temp, mode)
            os.replace(temp, target)
        except OSError as exc:
            raise OutputError(f"{path}: {exc.strerror or exc}") from None
        finally:
            if temp and os.path.lexists(temp):
                os.unlink(temp)


def _create_temporary(directory: str) -> str:
    """A new file `.msgen-<random>.tmp`, created with mode 0666 so that the umask applies."""
    for _ in range(100):
        name = os.path.join(directory, f".msgen-{os.urandom(6).hex()}.tmp")
        try:
            os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return name
    raise FileExistsError(f"no free temporary file name in {directory}")


@contextmanager
def _signals_raise() -> Iterator[None]:
    """Within the block, SIGTERM and SIGHUP unwind the stack (running `finally`), then kill."""
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set handlers; Python delivers signals there anyway
        return

    def unwind(signum: int, frame: FrameType | None) -> None:
        raise _Signalled(signum)

    previous = {signum: signal.signal(signum, unwind) for signum in _CLEAN_UP_ON}
    try:
        yield
    except _Signalled as exc:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        # Die of the signal as if it had never been caught: the parent sees the usual status.
        signal.signal(exc.signum, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)
        raise SystemExit(EXIT_SIGNALLED + exc.signum) from None
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
