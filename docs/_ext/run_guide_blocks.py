"""Sphinx extension: every ``python`` code block of the guide runs when the site builds.

The blocks of one page run in order in one namespace (a page reads as one session: its
first block makes the data the later ones use), in a temporary working directory, with
the matplotlib backend Agg. A block that raises fails the build (a Sphinx warning, and
the documented build command turns warnings into errors), naming the page, the block's
first line in the file and the exception. Blocks meant as output or as shell commands
are fenced ``text`` / ``bash`` and do not run; ``bash`` blocks are the README's commands,
which CI runs itself (``.ci/run``).

Also usable without Sphinx, for one page: ``python docs/_ext/run_guide_blocks.py PAGE``.
"""

import os
import re
import sys
import tempfile
import time
import traceback
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
from sphinx.util import logging

logger = logging.getLogger(__name__)

#: Pages whose python blocks run: the getting-started page and the user guide.
RUN_PATTERNS = ("getting_started.md", "guide/*.md")

_FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(text):
    """The page's ``python`` blocks as ``(line, source)`` pairs, in order.

    Parameters
    ----------
    text : str
        The page's Markdown source.

    Returns
    -------
    list of (int, str)
        The 1-based line of each block's first source line and its source.
    """
    return [
        (text.count("\n", 0, match.start(1)) + 1, match.group(1)) for match in _FENCE.finditer(text)
    ]


def run_page(path):
    """Run one page's ``python`` blocks in order; return the failures and the time.

    Parameters
    ----------
    path : pathlib.Path
        The page.

    Returns
    -------
    failures : list of str
        One message per block that raised (the later blocks of the page still run).
    seconds : float
        Wall time of the page's blocks.
    """
    matplotlib.use("Agg")
    namespace = {"__name__": "__guide__"}
    failures = []
    started = time.perf_counter()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="gpuboost-guide-") as work:
        os.chdir(work)
        try:
            for line, source in python_blocks(path.read_text()):
                try:
                    exec(compile(source, f"{path}:{line}", "exec"), namespace)
                except Exception:
                    failures.append(
                        f"{path}:{line}: the code block raised:\n{traceback.format_exc()}"
                    )
        finally:
            os.chdir(cwd)
            plt.close("all")
            client = namespace.get("client")
            if client is not None and hasattr(client, "close"):
                cluster = getattr(client, "cluster", None)
                client.close()
                if cluster is not None:
                    cluster.close()
    return failures, time.perf_counter() - started


def _run_guide(app):
    if not app.config.run_guide_blocks:
        logger.info("[guide blocks] not run (run_guide_blocks = 0)")
        return
    source = Path(app.srcdir)
    pages = sorted({p for pattern in RUN_PATTERNS for p in source.glob(pattern)})
    for page in pages:
        failures, seconds = run_page(page)
        logger.info(f"[guide blocks] {page.relative_to(source)}: {seconds:.1f} s")
        for failure in failures:
            logger.warning(failure)


def setup(app):
    """Register the run of the guide's blocks at the start of the build.

    ``-D run_guide_blocks=0`` skips them (for a quick look at a page's layout; the
    documented build and CI run them).
    """
    app.add_config_value("run_guide_blocks", True, "env", types=(bool, int))
    app.connect("builder-inited", _run_guide)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":
    failed = False
    for name in sys.argv[1:]:
        failures, seconds = run_page(Path(name).resolve())
        print(f"{name}: {seconds:.1f} s, {len(failures)} failed")
        for failure in failures:
            print(failure)
        failed |= bool(failures)
    sys.exit(1 if failed else 0)
