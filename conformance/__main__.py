import sys

from conformance.tools.cli import main

sys.exit(main())
