"""``python -m bgai.frontends.cli``: the ``bgai`` command."""

import sys

from bgai.frontends.cli import main

sys.exit(main())
