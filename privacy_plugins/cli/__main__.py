"""``python -m privacy_plugins.cli``."""

import sys

from privacy_plugins.cli import main

sys.exit(main())
