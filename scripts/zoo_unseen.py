#!/usr/bin/env python3
"""Runs the models the zoo does not list (python/doppler/zoo_unseen.py) and
writes their table; see `python -m doppler.zoo_unseen --help`.

    OMP_NUM_THREADS=1 PYTHONPATH=python DOPPLER_BUILD_DIR=build \
        build/torch-venv/bin/python scripts/zoo_unseen.py --table docs/zoo.md
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from doppler.zoo_unseen import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
