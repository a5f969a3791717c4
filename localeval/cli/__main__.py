"""`python -m localeval.cli`: the same as the `localeval` command."""

from localeval.cli import main

main()
