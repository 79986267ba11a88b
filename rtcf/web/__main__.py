"""``python -m rtcf.web``: the same as the ``rtcf-web`` command."""

import sys

from .server import main

sys.exit(main())
