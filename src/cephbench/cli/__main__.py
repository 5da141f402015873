"""`python -m cephbench.cli`, as the tests start it."""

from . import main

if __name__ == "__main__":
    main()
