"""`python -m vramplan` runs the CLI."""

from vramplan.cli.main import main

raise SystemExit(main())
