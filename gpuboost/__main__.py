"""``python -m gpuboost``: the ``gpuboost`` command (:mod:`gpuboost.cli`)."""

import sys

from .cli import main

sys.exit(main())
