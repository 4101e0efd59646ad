import sys

from perfagent.cli import main

sys.exit(main())
